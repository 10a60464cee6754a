//! The bot as an external client: it connects to a server over the websocket protocol
//! like any player, finds games (quick match, a private code, or challenges it accepts)
//! and plays them with the same [`Driver`] as the in-process seat.
//!
//! A connection lost during a game (the server restarting, its node dying, the network)
//! is opened again, as the same player, for up to [`RECONNECT_FOR`], and the bot takes
//! its seat again with a fresh snapshot, whichever node of a cluster the URL reaches; a
//! join answered "try again" (`game_moving`: the game changes nodes) is sent again a
//! second later; a game gone meanwhile counts as unfinished. A game that left the bot's
//! node while its connection stayed open (`game_moved`: the node lost its lease, a stall
//! or a NATS outage) is joined again the same way, on the same connection. Between games
//! a lost connection ends the run, as before.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::bot::BotConfig;
use protocol::game::Status;
use protocol::settings::Settings;
use protocol::wire::{
    ClientMessage, GameId, LobbyMessage, ServerFrame, ServerMessage, PROTOCOL_VERSION,
};
use tokio::time::{sleep_until, Instant};
use tokio_tungstenite::tungstenite::Message;

use crate::bot::{Driver, Heard, Send};

/// How the bot finds its games.
#[derive(Clone, Debug)]
pub enum Find {
    /// Quick match with these settings.
    Seek(Settings),
    /// Hosts a private game; the code is logged and reported through `on_notice`.
    Host(Settings),
    /// Joins a private game.
    JoinCode(String),
    /// Waits for challenges and accepts them.
    AcceptChallenges,
    /// Joins this tournament and plays every game it is given until the tournament is
    /// over (`games` 0).
    Tournament(String),
}

#[derive(Clone, Debug)]
pub struct Options {
    /// The server's websocket, e.g. `ws://127.0.0.1:7878/ws`.
    pub url: String,
    pub name: String,
    /// Come back as this player.
    pub token: Option<String>,
    pub find: Find,
    /// Games to play before returning (0: forever).
    pub games: u32,
    pub config: BotConfig,
}

/// What the bot did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub player_id: String,
    pub token: String,
    /// Each game played and how it ended.
    pub games: Vec<(GameId, Status)>,
    pub actions: u64,
    pub refused: u64,
    /// Connections opened again during a game.
    pub reconnects: u32,
}

/// How long the bot tries to open its connection again after losing it during a game:
/// the server's default reconnection grace (a seat left longer is lost anyway).
pub const RECONNECT_FOR: Duration = Duration::from_secs(60);

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A websocket to `url` with Nagle's algorithm off, as every client of a game on the
/// clock should: a move goes at once instead of waiting for the acknowledgement of the
/// frame before it.
async fn connect(url: &str) -> anyhow::Result<Ws> {
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true).await?;
    Ok(ws)
}

async fn send(ws: &mut Ws, msg: &ClientMessage) -> anyhow::Result<()> {
    ws.send(Message::text(serde_json::to_string(msg)?)).await?;
    Ok(())
}

/// The next frame (answering the server's pings), or `None` when the connection closed.
async fn next(ws: &mut Ws) -> anyhow::Result<Option<ServerFrame>> {
    loop {
        match ws.next().await {
            None => return Ok(None),
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(Message::Text(text))) => {
                let frame: ServerFrame = match serde_json::from_str(text.as_str()) {
                    Ok(f) => f,
                    Err(e) => {
                        tracing::warn!(error = %e, "unreadable frame skipped");
                        continue;
                    }
                };
                if let ServerFrame::Message(ServerMessage::Ping { nonce, .. }) = frame {
                    send(ws, &ClientMessage::Pong { nonce }).await?;
                    continue;
                }
                return Ok(Some(frame));
            }
            Some(Ok(Message::Close(_))) => return Ok(None),
            Some(Ok(_)) => {}
        }
    }
}

/// Opens a connection and says hello (a new player named `name`, or the player of
/// `token`): the connection, the player's id and token.
async fn open(
    url: &str,
    name: Option<String>,
    token: Option<String>,
) -> anyhow::Result<(Ws, String, String)> {
    let mut ws = connect(url).await?;
    send(
        &mut ws,
        &ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name,
            token,
            guest: false,
        },
    )
    .await?;
    match next(&mut ws).await? {
        Some(ServerFrame::Message(ServerMessage::Welcome {
            player_id, token, ..
        })) => Ok((ws, player_id, token)),
        other => anyhow::bail!("expected welcome, got {other:?}"),
    }
}

/// The join that takes the bot's seat again: a fresh snapshot (complete: the driver needs
/// nothing else).
fn join(game: GameId) -> ClientMessage {
    ClientMessage::Join {
        game,
        after_seq: None,
    }
}

/// Opens the connection again as the player of `token` and asks for `game` again,
/// trying for up to [`RECONNECT_FOR`] (waits of a quarter second doubling to a second: the
/// bot's sand runs meanwhile); the error once that has passed.
async fn reconnect(
    url: &str,
    token: &str,
    game: GameId,
    lost: &anyhow::Error,
) -> anyhow::Result<Ws> {
    tracing::warn!(game = %game, error = %lost, "connection lost during a game: opening it again");
    let give_up = Instant::now() + RECONNECT_FOR;
    let mut wait = Duration::from_millis(250);
    loop {
        let tried = async {
            let (mut ws, ..) = open(url, None, Some(token.to_string())).await?;
            send(&mut ws, &join(game)).await?;
            anyhow::Ok(ws)
        };
        match tried.await {
            Ok(ws) => {
                tracing::info!(game = %game, "connection opened again: rejoining the game");
                return Ok(ws);
            }
            Err(e) if Instant::now() + wait < give_up => {
                tracing::debug!(error = %e, "reconnection failed: trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(1));
            }
            Err(e) => {
                return Err(e.context(format!(
                    "the connection to {url} was lost during game {game} and could not be opened again within {RECONNECT_FOR:?}"
                )))
            }
        }
    }
}

fn is_mine(find: &Find, tournament: &str) -> bool {
    matches!(find, Find::Tournament(id) if id == tournament)
}

/// Plays `options.games` games (or until the server goes), then returns what happened.
/// What the bot tells its caller as soon as it knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice<'a> {
    /// Connected: who it plays as, and the token to come back as him (from another node
    /// of a cluster, say, if this one dies).
    Welcome { player: &'a str, token: &'a str },
    /// The code of a private game it hosts.
    Code(&'a str),
}

/// `on_notice` hears who the bot is once connected, and the code of a hosted private game.
pub async fn run(options: Options, on_notice: impl Fn(Notice)) -> anyhow::Result<Report> {
    let name = options.token.is_none().then(|| options.name.clone());
    let (mut ws, player_id, token) = open(&options.url, name, options.token.clone()).await?;
    let mut report = Report {
        player_id,
        token,
        ..Report::default()
    };
    tracing::info!(player = %report.player_id, "bot connected");
    on_notice(Notice::Welcome {
        player: &report.player_id,
        token: &report.token,
    });
    if let Find::Tournament(id) = &options.find {
        send(
            &mut ws,
            &ClientMessage::TournamentJoin {
                tournament: id.clone(),
            },
        )
        .await?;
    }
    // The tournament is over: told while waiting for a game, or during the last one.
    let mut tournament_over = false;
    // The next game's snapshot, when it came before the bot saw the end of its game.
    let mut pending: Option<ServerFrame> = None;
    while (options.games == 0 || (report.games.len() as u32) < options.games) && !tournament_over {
        match &options.find {
            Find::Seek(settings) => {
                send(
                    &mut ws,
                    &ClientMessage::Seek {
                        settings: settings.clone(),
                        rated: None,
                    },
                )
                .await?
            }
            Find::Host(settings) => {
                send(
                    &mut ws,
                    &ClientMessage::Host {
                        settings: settings.clone(),
                    },
                )
                .await?
            }
            Find::JoinCode(code) => {
                send(&mut ws, &ClientMessage::JoinCode { code: code.clone() }).await?
            }
            Find::AcceptChallenges | Find::Tournament(_) => {}
        }
        let mut driver = Driver::new(options.config.clone());
        // Until the game starts.
        loop {
            let frame = match pending.take() {
                Some(frame) => Some(frame),
                None => next(&mut ws).await?,
            };
            match frame {
                None => return Ok(report),
                Some(ServerFrame::Message(msg @ ServerMessage::Snapshot(_))) => {
                    driver.hear(&msg, Instant::now());
                    break;
                }
                // A late answer about the game just over (an action that crossed its end).
                Some(ServerFrame::Message(ServerMessage::Error {
                    game: Some(game),
                    code,
                    ..
                })) => {
                    tracing::debug!(game = %game, %code, "refused after the game");
                }
                Some(ServerFrame::Message(ServerMessage::Error { code, message, .. })) => {
                    anyhow::bail!("the server refused: {code}: {message}")
                }
                Some(ServerFrame::Lobby(LobbyMessage::Hosting { code, .. })) => {
                    tracing::info!(%code, "hosting a private game");
                    on_notice(Notice::Code(&code));
                }
                Some(ServerFrame::Lobby(LobbyMessage::Challenged {
                    challenge, from, ..
                })) if matches!(options.find, Find::AcceptChallenges) => {
                    tracing::info!(from = %from.name, "accepting a challenge");
                    send(&mut ws, &ClientMessage::AcceptChallenge { challenge }).await?;
                }
                Some(ServerFrame::Lobby(LobbyMessage::ShuttingDown { .. })) => return Ok(report),
                Some(ServerFrame::Lobby(LobbyMessage::TournamentJoined { tournament })) => {
                    tracing::info!(%tournament, "joined the tournament");
                }
                Some(ServerFrame::Lobby(LobbyMessage::TournamentFinished {
                    tournament, ..
                })) if is_mine(&options.find, &tournament) => {
                    tracing::info!(%tournament, "tournament over");
                    return Ok(report);
                }
                Some(_) => {}
            }
        }
        let game = driver.game().expect("a seat");
        tracing::info!(game = %game, "bot playing");
        // The game.
        // Until the game's snapshot after a reconnection: a "try again" is for the join.
        let mut rejoining = false;
        let mut rejoin_at: Option<Instant> = None;
        while !driver.over() {
            // While it joins again the bot's replica is out of date: it acts again from
            // the fresh snapshot.
            if let Some(next) = driver.step(Instant::now()).filter(|_| !rejoining) {
                let msg = match next {
                    Send::Act(game, action) => ClientMessage::Act {
                        game,
                        action,
                        seq: driver.seq(),
                    },
                    Send::ClaimAbandonment(game) => ClientMessage::ClaimAbandonment { game },
                };
                report.actions += 1;
                if let Err(e) = send(&mut ws, &msg).await {
                    // Lost with the connection: the fresh snapshot makes the driver plan
                    // again.
                    ws = reconnect(&options.url, &report.token, game, &e).await?;
                    (rejoining, report.reconnects) = (true, report.reconnects + 1);
                }
                continue;
            }
            let timer = driver.timer().filter(|_| !rejoining);
            let far = Instant::now() + Duration::from_secs(3600);
            tokio::select! {
                frame = next(&mut ws) => match frame {
                    Err(_) | Ok(None) => {
                        let why = frame.err().unwrap_or_else(|| anyhow::anyhow!("closed by the server"));
                        ws = reconnect(&options.url, &report.token, game, &why).await?;
                        (rejoining, report.reconnects) = (true, report.reconnects + 1);
                    }
                    Ok(Some(ServerFrame::Message(ServerMessage::Snapshot(s)))) if Some(s.game) != driver.game() => {
                        tracing::debug!(game = %s.game, "the next game's snapshot, kept");
                        pending = Some(ServerFrame::Message(ServerMessage::Snapshot(s)));
                    }
                    // The game is no longer run by this connection's node: joined again,
                    // which reaches the node that runs it now.
                    Ok(Some(ServerFrame::Message(ServerMessage::Error { code, game: Some(g), .. })))
                        if code == "game_moved" && g == game =>
                    {
                        tracing::info!(game = %game, "the game moved: joining it again");
                        rejoining = true;
                        if let Err(e) = send(&mut ws, &join(game)).await {
                            ws = reconnect(&options.url, &report.token, game, &e).await?;
                            report.reconnects += 1;
                        }
                    }
                    Ok(Some(ServerFrame::Message(ServerMessage::Error { code, game: Some(g), message, .. })))
                        if rejoining && g == game =>
                    {
                        if protocol::wire::is_try_again(&code) {
                            tracing::info!(game = %game, %code, "joining again in a second");
                            rejoin_at = Some(Instant::now() + protocol::wire::TRY_AGAIN_AFTER);
                        } else if matches!(code.as_str(), "unknown_game" | "not_a_player") {
                            // Gone while the bot was away (over, and no longer kept): its
                            // end is not known here; counted unfinished, and on to the next.
                            tracing::warn!(game = %game, %code, %message, "the game cannot be joined again");
                            break;
                        } else {
                            // The refusal of an action sent before the game moved, not an
                            // answer to the join.
                            tracing::debug!(game = %game, %code, "an action refused while joining again");
                        }
                    }
                    Ok(Some(ServerFrame::Message(msg))) => {
                        if matches!(&msg, ServerMessage::Snapshot(s) if s.game == game) {
                            rejoining = false;
                        }
                        match driver.hear(&msg, Instant::now()) {
                            Heard::Nothing => {}
                            Heard::Refused(code) => {
                                tracing::warn!(%code, "bot action refused");
                                report.refused += 1;
                            }
                            Heard::Lost(why) => anyhow::bail!("the bot lost track of the game: {why}"),
                        }
                    }
                    Ok(Some(ServerFrame::Lobby(LobbyMessage::TournamentFinished { tournament, .. })))
                        if is_mine(&options.find, &tournament) => tournament_over = true,
                    Ok(Some(ServerFrame::Lobby(_))) => {}
                },
                _ = sleep_until(rejoin_at.unwrap_or(far)), if rejoin_at.is_some() => {
                    rejoin_at = None;
                    if let Err(e) = send(&mut ws, &join(game)).await {
                        ws = reconnect(&options.url, &report.token, game, &e).await?;
                        report.reconnects += 1;
                    }
                }
                _ = sleep_until(timer.unwrap_or(far)) => {}
            }
        }
        let status = driver.replica().expect("a game").status().clone();
        tracing::info!(game = %game, ?status, "bot game over");
        report.games.push((game, status));
    }
    let _ = ws.close(None).await;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bot_sends_without_waiting_to_fill_a_segment() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            tokio_tungstenite::accept_async(tcp).await.unwrap()
        });
        let ws = connect(&url).await.expect("connects");
        let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = ws.get_ref() else {
            panic!("a plain TCP stream");
        };
        assert!(tcp.nodelay().unwrap(), "Nagle's algorithm is off");
        drop(server.await.unwrap());
    }
}
