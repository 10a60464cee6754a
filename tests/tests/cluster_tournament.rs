//! Swiss tournaments across nodes (issue 18): the lobby's leader runs them for players on
//! every node. Real nats-server and PostgreSQL, nodes in-process (as in `cluster_lobby.rs`).

use std::time::Duration;

use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage};
use tamsk_tests::cluster::{node_config, services, Node};
use tamsk_tests::*;

/// A Swiss tournament across nodes: created on one node, joined by players of two others;
/// the lobby's leader runs it (one runner for the cluster: every pairing is played once),
/// its rounds reach the players on their nodes, and it finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_run_once_for_players_on_several_nodes() {
    let Some((nats, db)) = services().await else {
        return;
    };
    // Bots at test speeds act many times a second: above a person's message rate.
    let fast_node = |name: &str| server::Config {
        rate_per_sec: 1_000,
        rate_burst: 1_000,
        ..node_config(&db, &nats, name)
    };
    let a = Node::start(fast_node("a"));
    Client::new_player_at(a.addr, "Anchor").await;
    let b = Node::start(fast_node("b"));
    let c = Node::start(fast_node("c"));
    let mut director = Client::new_player_at(b.addr, "Director").await;
    let settings = Settings {
        game_clock: Some(protocol::settings::GameClock {
            main_ms: 2_000,
            increment_ms: 0,
        }),
        ..Settings::blitz(Level::Three)
    };
    director
        .send(&ClientMessage::TournamentCreate {
            rounds: 2,
            tc: protocol::rating::TimeControl::Blitz,
            rated: false,
            starts_in_ms: Some(2_500),
            settings: Some(settings),
        })
        .await;
    let id = match director.recv_lobby().await {
        LobbyMessage::TournamentCreated { tournament, .. } => tournament,
        other => panic!("expected tournament_created, got {other:?}"),
    };
    let bots: Vec<_> = [b.addr, b.addr, c.addr, c.addr]
        .into_iter()
        .enumerate()
        .map(|(i, addr)| {
            let options = tournament_bot(format!("ws://{addr}/ws"), &format!("Entrant{i}"), &id);
            tokio::spawn(server::bot_client::run(options, |_| {}))
        })
        .collect();
    // Each bot returns when told the tournament is over.
    let reports = tokio::time::timeout(Duration::from_secs(120), futures::future::join_all(bots))
        .await
        .expect("the tournament ends");
    let mut games = std::collections::HashSet::new();
    for r in reports {
        let r = r.unwrap().expect("a bot ran to the end");
        assert_eq!(r.games.len(), 2, "one game a round: {:?}", r.games);
        games.extend(r.games.iter().map(|g| g.0));
    }
    assert_eq!(games.len(), 4, "two boards a round, each played once");
    let detail = get_json(c.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(detail["state"], "finished", "{detail}");
    assert_eq!(detail["round"], 2);
}
