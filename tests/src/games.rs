//! Helpers about games: starting one between two new players, moves by name, random
//! play, bots, what a stranger may send about a game.

use super::*;

/// Engine events of a numbered event as a [`Follower`] logs it (every one, the implied
/// ones too); empty for presence, grace and lag changes.
pub fn engine_events(ev: &GameEvent) -> &[Event] {
    match &ev.change {
        Change::Play { events, .. } => events,
        _ => &[],
    }
}

/// Two new players seek `settings`; returns them seated as `(red, black)`.
pub async fn start_game(server: &TestServer, settings: &Settings) -> (Follower, Follower) {
    // Names are unique: each game's players are new ones.
    static GAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = GAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut a = Client::new_player(server, &format!("Alice{n}")).await;
    let mut b = Client::new_player(server, &format!("Bob{n}")).await;
    a.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    match a.recv().await {
        ServerMessage::Seeking { settings: s } => assert_eq!(&s, settings),
        other => panic!("expected seeking, got {other:?}"),
    }
    b.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    let a = Follower::await_snapshot(a).await;
    let b = Follower::await_snapshot(b).await;
    assert_eq!(a.game, b.game);
    assert_ne!(a.seat, b.seat);
    if a.seat() == Player::Red {
        (a, b)
    } else {
        (b, a)
    }
}

pub fn sq(s: &str) -> protocol::Square {
    s.parse().expect("square")
}

/// A move with or without the drop.
pub fn mv(from: &str, to: &str, drop: bool) -> Action {
    Action::Move {
        from: sq(from),
        to: sq(to),
        drop,
    }
}

/// Plays up to `n` moves (with drops, never onto a full socket) chosen by a seeded random
/// player, each acknowledged by both players' event streams. Stops early when the game
/// ends. Returns how many moves were made.
pub async fn play_random(red: &mut Follower, black: &mut Follower, seed: u64, n: usize) -> usize {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    for made in 0..n {
        if !red.replica.is_playing() {
            return made;
        }
        let turn = red.replica.turn();
        let (mover, other) = if turn == Player::Red {
            (&mut *red, &mut *black)
        } else {
            (&mut *black, &mut *red)
        };
        let legal: Vec<Action> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(
                |a| matches!(a, Action::Move { to, drop: true, .. } if !mover.replica.is_full(*to)),
            )
            .collect();
        let Some(action) = legal.choose(&mut rng).copied() else {
            return made;
        };
        mover.act(action).await;
        mover.until_own(turn, action).await;
        other.catch_up_to(mover.seq).await;
    }
    n
}

/// A test config whose database is the file `path` (kept across restarts).
pub fn config_with_db(path: &std::path::Path) -> Config {
    Config {
        db_path: Some(path.to_path_buf()),
        ..test_config()
    }
}

impl Client {
    /// Closes the connection and waits until the server has let it go (its close
    /// frame comes after the connection's cleanup).
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
        let _ = self.closed().await;
    }
}

/// The bot at test speeds: it thinks 15 ms and keeps a 60-ms margin.
pub fn quick_bot() -> protocol::bot::BotConfig {
    protocol::bot::BotConfig {
        think_ms: 15,
        margin_ms: 60,
        flip_after_ms: 5,
        ..Default::default()
    }
}

/// A bot (an external client over a real websocket) that joins `tournament` on the server
/// at `url` as a new player `name` and plays its games at test speeds until it is over.
pub fn tournament_bot(url: String, name: &str, tournament: &str) -> server::bot_client::Options {
    server::bot_client::Options {
        url,
        name: name.into(),
        token: None,
        find: server::bot_client::Find::Tournament(tournament.into()),
        games: 0,
        config: quick_bot(),
    }
}

/// The bot as an external client reaching a server at `url` hosts a private game of
/// `settings` (one game), and a person named `human` joins it with the code on the server
/// at `addr`: the bot's task and the person's side of the game.
pub async fn hosting_bot(
    addr: SocketAddr,
    url: String,
    settings: &Settings,
    human: &str,
) -> (
    tokio::task::JoinHandle<anyhow::Result<server::bot_client::Report>>,
    Follower,
) {
    let (code_tx, mut code_rx) = tokio::sync::mpsc::unbounded_channel();
    let options = server::bot_client::Options {
        url,
        name: format!("Bot for {human}"),
        token: None,
        find: server::bot_client::Find::Host(settings.clone()),
        games: 1,
        config: quick_bot(),
    };
    // Who it is comes first (a caller can print its token at once), then the code.
    let bot = tokio::spawn(server::bot_client::run(options, move |notice| {
        let said = match notice {
            server::bot_client::Notice::Welcome { token, .. } => format!("token {token}"),
            server::bot_client::Notice::Code(code) => code.to_string(),
        };
        let _ = code_tx.send(said);
    }));
    let welcome = within("the bot's welcome", code_rx.recv())
        .await
        .expect("a welcome");
    assert!(
        welcome.len() > "token ".len() && welcome.starts_with("token "),
        "{welcome}"
    );
    let code = within("the code", code_rx.recv()).await.expect("a code");
    let mut me = Client::new_player_at(addr, human).await;
    me.send(&ClientMessage::JoinCode { code }).await;
    (bot, Follower::await_snapshot(me).await)
}

/// Every message a client may send about a live game it names by id but has no seat in
/// (a stranger's, for a private game): what each must refuse alike.
pub fn messages_about(game: GameId) -> Vec<ClientMessage> {
    vec![
        ClientMessage::Watch {
            game,
            after_seq: None,
        },
        ClientMessage::Join {
            game,
            after_seq: None,
        },
        ClientMessage::Act {
            game,
            action: protocol::game::Action::Resign,
            seq: None,
        },
        ClientMessage::ClaimAbandonment { game },
        ClientMessage::Rematch { game },
        ClientMessage::DeclineRematch { game },
        ClientMessage::Leave { game },
    ]
}
