//! `/metrics` in the Prometheus text format, with what the server counts.

use prometheus_parse::{Scrape, Value};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerMessage};
use tamsk_tests::*;

/// Strict checks of the text format that a lenient parser would let pass: every sample
/// line is `name{labels} value` with a valid name and number, and belongs to a family
/// declared by `# HELP` and `# TYPE` before it.
fn check_exposition(text: &str) {
    let mut declared: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            declared.push((name.to_string(), kind.to_string()));
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment {line}");
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        assert!(
            value == "+Inf" || value.parse::<f64>().is_ok(),
            "bad value in {line}"
        );
        let name = series.split('{').next().unwrap();
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && !name.starts_with(|c: char| c.is_ascii_digit()),
            "bad name in {line}"
        );
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
                for pair in labels[1..labels.len() - 1].split(',') {
                    let (k, v) = pair.split_once('=').expect("label=value");
                    assert!(
                        !k.is_empty() && v.starts_with('"') && v.ends_with('"'),
                        "{line}"
                    );
                }
            }
        }
        let family = declared
            .iter()
            .find(|(n, kind)| {
                n == name
                    || (kind == "histogram"
                        && [
                            n.clone() + "_bucket",
                            n.clone() + "_sum",
                            n.clone() + "_count",
                        ]
                        .contains(&name.to_string()))
            })
            .unwrap_or_else(|| panic!("{name} has no # TYPE before it"));
        assert!(!family.0.is_empty());
    }
}

fn gauge_or_counter(scrape: &Scrape, name: &str, label: Option<(&str, &str)>) -> f64 {
    let sample = scrape
        .samples
        .iter()
        .find(|s| s.metric == name && label.is_none_or(|(k, v)| s.labels.get(k) == Some(v)))
        .unwrap_or_else(|| panic!("no sample {name}"));
    match sample.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
        ref other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_count() {
    let server = TestServer::start().await;
    // Level 1: nothing happens on its own while the metrics are read.
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let moves = play_random(&mut red, &mut black, 3, 6).await;
    let mut waiting = Client::new_player(&server, "Wai").await;
    waiting
        .send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::Three),
            rated: None,
        })
        .await;
    assert!(matches!(
        waiting.recv().await,
        ServerMessage::Seeking { .. }
    ));

    let resp = http_get(server.addr, "/metrics", None).await;
    assert_eq!(resp.status, 200);
    assert!(
        resp.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4"),
        "{:?}",
        resp.headers
    );
    check_exposition(&resp.body);
    let scrape = Scrape::parse(resp.body.lines().map(|l| Ok(l.to_string()))).expect("parses");
    assert!(scrape.docs.contains_key("tamsk_moves_total"));
    assert_eq!(gauge_or_counter(&scrape, "tamsk_connections", None), 3.0);
    assert_eq!(gauge_or_counter(&scrape, "tamsk_games_live", None), 1.0);
    assert_eq!(gauge_or_counter(&scrape, "tamsk_games_playing", None), 1.0);
    assert_eq!(
        gauge_or_counter(&scrape, "tamsk_queue_size", Some(("kind", "open"))),
        1.0
    );
    assert_eq!(
        gauge_or_counter(&scrape, "tamsk_queue_size", Some(("kind", "private"))),
        0.0
    );
    assert_eq!(
        gauge_or_counter(&scrape, "tamsk_moves_total", None),
        moves as f64
    );
    assert_eq!(gauge_or_counter(&scrape, "tamsk_players_online", None), 3.0);
    let events = gauge_or_counter(&scrape, "tamsk_events_total", None);
    assert!(events >= moves as f64);
    for name in ["tamsk_event_fanout_seconds", "tamsk_timer_lateness_seconds"] {
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == name)
            .unwrap_or_else(|| panic!("no histogram {name}"));
        let Value::Histogram(buckets) = &sample.value else {
            panic!("{name} is a histogram")
        };
        assert!(
            buckets.windows(2).all(|w| w[0].count <= w[1].count),
            "cumulative"
        );
        assert!(buckets.last().unwrap().less_than.is_infinite());
        if name == "tamsk_event_fanout_seconds" {
            assert_eq!(buckets.last().unwrap().count, events, "every event timed");
        }
    }
    assert!(resp.body.contains("tamsk_event_fanout_seconds_count "));
}

/// A deadline the alarm thread announced itself is counted: a first move not made in time
/// (the abort bound, shortened) ends the game at its instant with nobody sending anything.
#[tokio::test]
async fn the_alarm_thread_counts_the_deadlines_it_announced() {
    let (server, settings) = server_with_abort(200).await;
    let (mut red, _black) = start_game(&server, &settings).await;
    red.until("the abort", |e| {
        matches!(e, protocol::game::Event::GameAborted { .. })
    })
    .await;
    let resp = http_get(server.addr, "/metrics", None).await;
    check_exposition(&resp.body);
    let scrape = Scrape::parse(resp.body.lines().map(|l| Ok(l.to_string()))).expect("parses");
    let ran = gauge_or_counter(&scrape, "tamsk_alarm_ran_total", None);
    let woken = gauge_or_counter(&scrape, "tamsk_alarm_woken_total", None);
    // Woken instead only if a worker polled the game at that very instant: nothing here
    // sends it anything then.
    assert!(ran >= 1.0, "ran {ran}, woken {woken}");
}
