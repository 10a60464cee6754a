//! `tamsk tournament create|join|withdraw|cancel|show` and `tamsk tournaments`: creating,
//! joining and cancelling over the websocket (as the player the config file remembers, or
//! a new one), showing over the HTTP API.

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::api::{TournamentDetail, TournamentList};
use protocol::wire::{ClientMessage, LobbyMessage, ServerFrame, ServerMessage, PROTOCOL_VERSION};
use tokio_tungstenite::tungstenite::Message;

use crate::config::{Account, Config};
use crate::http::encode;
use crate::sanitize::clean;
use crate::standings::{fetch, print};
use crate::{EXIT_BAD_INPUT, EXIT_IO};

const TIMEOUT: Duration = Duration::from_secs(10);

/// Who asks: the server, the config file and the name for a new player.
pub struct Asker<'a> {
    pub server: &'a str,
    pub config: Config,
    pub config_path: Option<&'a Path>,
    pub name: String,
}

/// Sends `msg` as our player and returns the server's answer (a lobby message), or the
/// error and an exit status.
pub async fn ask(asker: &mut Asker<'_>, msg: &ClientMessage) -> Result<LobbyMessage, (String, u8)> {
    let io = |e: String| (e, EXIT_IO);
    let fut = async {
        let mut ws = crate::net::open(asker.server)
            .await
            .map_err(|e| io(format!("cannot connect to {}: {e}", asker.server)))?;
        let account = asker.config.account(asker.server).cloned();
        let hello = ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: account.is_none().then(|| asker.name.clone()),
            token: account.as_ref().map(|a| a.token.clone()),
            guest: false,
        };
        let mut sent = false;
        send(&mut ws, &hello).await.map_err(io)?;
        while let Some(frame) = ws.next().await {
            let Ok(Message::Text(text)) = frame else {
                continue;
            };
            let Ok(frame) = serde_json::from_str::<ServerFrame>(text.as_str()) else {
                continue;
            };
            match frame {
                ServerFrame::Message(ServerMessage::Welcome {
                    player_id,
                    name,
                    token,
                    ..
                }) => {
                    if account.is_none() {
                        remember(
                            asker,
                            Account {
                                name,
                                player_id,
                                token,
                                game: None,
                            },
                        );
                    }
                    send(&mut ws, msg).await.map_err(io)?;
                    sent = true;
                }
                ServerFrame::Message(ServerMessage::Error { code, message, .. }) => {
                    return Err((
                        format!("{}: {}", clean(&message), clean(&code)),
                        EXIT_BAD_INPUT,
                    ));
                }
                ServerFrame::Lobby(
                    m @ (LobbyMessage::TournamentCreated { .. }
                    | LobbyMessage::TournamentJoined { .. }
                    | LobbyMessage::TournamentWithdrawn { .. }),
                ) if sent => {
                    let _ = ws.close(None).await;
                    return Ok(m);
                }
                // The answer to a cancel (another tournament of ours may end meanwhile).
                ServerFrame::Lobby(
                    m @ LobbyMessage::TournamentFinished {
                        cancelled: true, ..
                    },
                ) if sent && cancels(msg, &m) => {
                    let _ = ws.close(None).await;
                    return Ok(m);
                }
                _ => {}
            }
        }
        Err(io("the server closed the connection".into()))
    };
    tokio::time::timeout(TIMEOUT, fut)
        .await
        .map_err(|_| io("no answer from the server in time".into()))?
}

/// Whether `answer` answers `msg`, a cancel of that tournament.
fn cancels(msg: &ClientMessage, answer: &LobbyMessage) -> bool {
    matches!(
        (msg, answer),
        (
            ClientMessage::TournamentCancel { tournament },
            LobbyMessage::TournamentFinished { tournament: t, .. },
        ) if t == tournament
    )
}

async fn send(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    msg: &ClientMessage,
) -> Result<(), String> {
    let text = serde_json::to_string(msg).expect("client messages serialise");
    ws.send(Message::text(text))
        .await
        .map_err(|e| format!("cannot send: {e}"))
}

fn remember(asker: &mut Asker<'_>, account: Account) {
    asker.config.server = Some(asker.server.to_string());
    asker
        .config
        .accounts
        .insert(asker.server.to_string(), account);
    if let Some(path) = asker.config_path {
        if let Err(e) = asker.config.save(path) {
            eprintln!("tamsk: {e}");
        }
    }
}

/// Prints the answer to a create, join, withdraw or cancel.
pub fn answered(got: Result<LobbyMessage, (String, u8)>, json: bool) -> u8 {
    match got {
        Ok(m) => {
            if json {
                println!("{}", serde_json::to_string(&m).expect("serialises"));
                return 0;
            }
            match m {
                LobbyMessage::TournamentCreated {
                    tournament,
                    starts_ms,
                } => {
                    println!("{}", clean(&tournament));
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis() as u64);
                    eprintln!(
                        "Tournament {} starts in {} s: players join with `tamsk tournament join {}`",
                        clean(&tournament),
                        starts_ms.saturating_sub(now).div_ceil(1000),
                        clean(&tournament)
                    );
                }
                LobbyMessage::TournamentJoined { tournament } => println!(
                    "You joined tournament {}: each round seats you in your game; be online \
                     (`tamsk play` takes your seat) or it counts as a loss",
                    clean(&tournament)
                ),
                LobbyMessage::TournamentWithdrawn { tournament } => {
                    println!("You withdrew from tournament {}", clean(&tournament))
                }
                LobbyMessage::TournamentFinished { tournament, .. } => println!(
                    "You cancelled tournament {}: its players are told",
                    clean(&tournament)
                ),
                _ => {}
            }
            0
        }
        Err((message, code)) => {
            eprintln!("tamsk: {message}");
            code
        }
    }
}

/// `tamsk tournaments`.
pub async fn list(ws_url: &str, json: bool) -> u8 {
    print(
        fetch::<TournamentList>(ws_url, "/api/tournaments").await,
        json,
        list_lines,
    )
}

/// `tamsk tournament show ID`.
pub async fn show(ws_url: &str, id: &str, json: bool) -> u8 {
    let path = format!("/api/tournaments/{}", encode(id));
    print(
        fetch::<TournamentDetail>(ws_url, &path).await,
        json,
        detail_lines,
    )
}

pub fn list_lines(list: &TournamentList) -> Vec<String> {
    if list.tournaments.is_empty() {
        return vec!["No tournaments".into()];
    }
    list.tournaments
        .iter()
        .map(|t| {
            format!(
                "{}  {:<9} {} {}  round {}/{}  {} players",
                clean(&t.id),
                t.state,
                t.tc,
                if t.rated { "rated" } else { "casual" },
                t.round,
                t.rounds,
                t.players
            )
        })
        .collect()
}

pub fn detail_lines(t: &TournamentDetail) -> Vec<String> {
    let s = &t.summary;
    let mut out = vec![format!(
        "Tournament {}: {} {} Swiss, {} rounds, {} ({} of {} played)",
        clean(&s.id),
        s.tc,
        if s.rated { "rated" } else { "casual" },
        s.rounds,
        s.state,
        s.round,
        s.rounds
    )];
    out.push(format!(
        "{:>4}  {:<24} {:>5} {:>8} {:>8} {:>6}",
        "#", "player", "score", "Buchholz", "S-B", "seed"
    ));
    for r in &t.standings {
        out.push(format!(
            "{:>4}  {:<24} {:>5} {:>8} {:>8} {:>6}{}",
            r.rank,
            clean(&r.name),
            r.score,
            r.buchholz,
            r.sonneborn_berger,
            r.seed,
            if r.withdrawn { "  (withdrawn)" } else { "" }
        ));
    }
    for round in &t.pairings {
        out.push(format!("Round {}:", round.round));
        for g in &round.games {
            out.push(format!(
                "  {:>2}. {} (Red) - {} (Black)  {}{}",
                g.board,
                clean(&g.red),
                clean(&g.black),
                g.result.as_deref().unwrap_or("playing"),
                g.game
                    .as_deref()
                    .map(|id| format!("  game {}", clean(id)))
                    .unwrap_or_default()
            ));
        }
        if let Some(bye) = &round.bye {
            out.push(format!("      bye: {}", clean(bye)));
        }
    }
    out
}
