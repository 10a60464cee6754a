//! Swiss tournaments across nodes (issue 18): the lobby's leader runs them for players on
//! every node. Real nats-server and PostgreSQL, nodes in-process (as in `cluster_lobby/`).

use std::time::Duration;

use futures::StreamExt;
use protocol::game::Player;
use protocol::record::{Entry, EntryKind};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, GameId, LobbyMessage};
use server::bot_client::Report;
use tamsk_tests::cluster::{node_config, owners, services, Node};
use tamsk_tests::services::{Nats, TestDb};
use tamsk_tests::*;
use tokio::task::JoinHandle;

/// Bots at test speeds act many times a second: above a person's message rate.
fn fast_node(db: &TestDb, nats: &Nats, name: &str) -> Node {
    Node::start(server::Config {
        rate_per_sec: 1_000,
        rate_burst: 1_000,
        ..node_config(db, nats, name)
    })
}

/// Nodes `a` (the lobby's leader: started and serving first), `b` and `c`.
async fn three_nodes(db: &TestDb, nats: &Nats) -> [Node; 3] {
    let a = fast_node(db, nats, "a");
    Client::new_player_at(a.addr, "Anchor").await;
    [a, fast_node(db, nats, "b"), fast_node(db, nats, "c")]
}

/// A two-round Swiss tournament of quick Level 3 games created by a director on `b`, and
/// four bots entered in it, two on `b` and two on `c`: its id and the bots.
async fn tournament_of_four(
    b: &Node,
    c: &Node,
    settings: Settings,
) -> (String, Vec<JoinHandle<anyhow::Result<Report>>>) {
    let mut director = Client::new_player_at(b.addr, "Director").await;
    director
        .send(&ClientMessage::TournamentCreate {
            rounds: 2,
            tc: protocol::rating::TimeControl::Blitz,
            rated: false,
            starts_in_ms: Some(2_500),
            settings: Some(settings.into()),
        })
        .await;
    let id = match director.recv_lobby().await {
        LobbyMessage::TournamentCreated { tournament, .. } => tournament,
        other => panic!("expected tournament_created, got {other:?}"),
    };
    let bots = [b.addr, b.addr, c.addr, c.addr]
        .into_iter()
        .enumerate()
        .map(|(i, addr)| {
            let options = tournament_bot(format!("ws://{addr}/ws"), &format!("Entrant{i}"), &id);
            tokio::spawn(server::bot_client::run(options, |_| {}))
        })
        .collect();
    (id, bots)
}

/// Each bot played one game a round, every pairing once, and the tournament is over
/// after its two rounds (read on `node`).
async fn played_through(node: &Node, id: &str, bots: Vec<JoinHandle<anyhow::Result<Report>>>) {
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
    let detail = get_json(node.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(detail["state"], "finished", "{detail}");
    assert_eq!(detail["round"], 2);
}

/// A Swiss tournament across nodes: created on one node, joined by players of two others;
/// the lobby's leader runs it (one runner for the cluster: every pairing is played once),
/// its rounds reach the players on their nodes, and it finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_run_once_for_players_on_several_nodes() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, c] = three_nodes(&db, &nats).await;
    let settings = Settings {
        game_clock: Some(protocol::settings::GameClock {
            main_ms: 2_000,
            increment_ms: 0,
        }),
        ..Settings::blitz(Level::Three)
    };
    let (id, bots) = tournament_of_four(&b, &c, settings).await;
    played_through(&c, &id, bots).await;
}

/// The lobby's leader dies (kill -9) while the first round is being played on it (the
/// leader starts a round's games): the other nodes take its games over from their
/// journals and their players, who are on those nodes, play on (a player whose own node
/// took his game over is joined to it there); the next leader takes the tournament up from
/// the database without starting those pairings again (they are live in the database while
/// no node runs them), records the first round's results, pairs the second round and
/// finishes the tournament.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_goes_on_when_its_leader_dies_during_a_round() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [mut a, b, c] = three_nodes(&db, &nats).await;
    let owned = owners(&nats).await;
    let mut puts = owned.watch_all().await.expect("watch the owners' bucket");
    // No game clock: a game goes on after the takeover (its clock would have run on
    // through it).
    let (id, bots) = tournament_of_four(&b, &c, Settings::blitz(Level::Three)).await;
    // The first round's two games, once the leader owns them...
    let mut games = Vec::new();
    within("the first round's games", async {
        while games.len() < 2 {
            let entry = puts.next().await.expect("the watch goes on");
            let entry = entry.expect("watch entry");
            if entry.operation == async_nats::jetstream::kv::Operation::Put {
                games.push(entry.key.parse::<GameId>().expect("a game's key"));
            }
        }
    })
    .await;
    // ...and once both players of each play it (a watcher on c sees a move of each).
    for (i, &game) in games.iter().enumerate() {
        let watcher = Client::new_player_at(c.addr, &format!("Watcher{i}")).await;
        let mut watcher = Follower::watch(watcher, game).await;
        for player in [Player::Red, Player::Black] {
            let moved =
                |e: &Entry| matches!(e.kind, EntryKind::Act { player: p, .. } if p == player);
            if watcher.entries.iter().any(moved) {
                continue;
            }
            watcher
                .until_change(
                    "a move of each player",
                    |c| matches!(c, Change::Play { entry, .. } if moved(entry)),
                )
                .await;
        }
    }
    a.kill();
    // The tournament's state has no push: read until it is over.
    let detail = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let detail = get_json(c.addr, &format!("/api/tournaments/{id}")).await;
            if detail["state"] == "finished" {
                return detail;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the tournament ends");
    assert_eq!(detail["round"], 2, "{detail}");
    let rounds = detail["pairings"].as_array().expect("pairings");
    assert_eq!(rounds.len(), 2, "{detail}");
    let played = |round: &serde_json::Value| -> Vec<String> {
        let boards = round["games"].as_array().expect("a round's games");
        assert_eq!(boards.len(), 2, "two boards: {round}");
        for board in boards {
            assert!(
                board["result"].is_string(),
                "every board has a result: {round}"
            );
        }
        boards
            .iter()
            .map(|g| g["game"].as_str().expect("a game").to_string())
            .collect()
    };
    let mut first = played(&rounds[0]);
    first.sort();
    let mut started: Vec<String> = games.iter().map(|g| g.to_string()).collect();
    started.sort();
    assert_eq!(
        first, started,
        "the first round's games are those the old leader started"
    );
    let second = played(&rounds[1]);
    assert!(second.iter().all(|g| !first.contains(g)), "{detail}");
    // And the players': each played one game a round, the first-round one through the
    // takeover, and was told the tournament is over.
    let reports = tokio::time::timeout(Duration::from_secs(30), futures::future::join_all(bots))
        .await
        .expect("every bot told the tournament is over");
    for r in reports {
        let r = r.unwrap().expect("a bot ran to the end");
        let games: Vec<String> = r.games.iter().map(|g| g.0.to_string()).collect();
        assert_eq!(games.len(), 2, "one game a round: {games:?}");
        assert!(first.contains(&games[0]), "{games:?} {first:?}");
        assert!(second.contains(&games[1]), "{games:?} {second:?}");
    }
}

/// `tournament_cancel` across nodes: the lobby's leader (`a`) runs the tournaments, so a
/// cancel sent on another node goes to it like the other tournament messages. The
/// director on `b` cancels his tournament, which a player on `c` joined: both are told,
/// and it is stored as cancelled; another player's cancel, sent on `c`, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_cancelled_by_its_creator_from_another_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, c] = three_nodes(&db, &nats).await;
    let mut director = Client::new_player_at(b.addr, "Director").await;
    director
        .send_raw(r#"{"type":"tournament_create","rounds":2,"tc":"blitz","starts_in_ms":600000}"#)
        .await;
    let id = match director.recv_lobby().await {
        LobbyMessage::TournamentCreated { tournament, .. } => tournament,
        other => panic!("expected tournament_created, got {other:?}"),
    };
    let cancel = format!(r#"{{"type":"tournament_cancel","tournament":"{id}"}}"#);
    let mut player = Client::new_player_at(c.addr, "Player").await;
    player
        .send(&ClientMessage::TournamentJoin {
            tournament: id.clone(),
        })
        .await;
    assert!(matches!(
        player.recv_lobby().await,
        LobbyMessage::TournamentJoined { .. }
    ));
    player.send_raw(&cancel).await;
    player.expect_error("not_creator").await;
    director.send_raw(&cancel).await;
    for c in [&mut director, &mut player] {
        match c.recv_lobby().await {
            LobbyMessage::TournamentFinished {
                tournament,
                cancelled: true,
            } => assert_eq!(tournament, id),
            other => panic!("expected tournament_finished, cancelled, got {other:?}"),
        }
    }
    let detail = get_json(c.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(detail["state"], "cancelled", "{detail}");
    director.send_raw(&cancel).await;
    director.expect_error("unknown_tournament").await;
}
