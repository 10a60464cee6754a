//! Several nodes of one cluster (issue 18's benchmark). The lobby of a node pairs only
//! its own seekers, so both players of a game seek on one node (which then owns the
//! game) and the player who lives on another node joins it from there, resuming at the
//! snapshot's seq, before leaving the node that paired him: from then on his moves and
//! events cross nodes.

use super::*;
use protocol::wire::Snapshot;

/// Reads until the server's welcome; returns the player's token.
pub async fn welcome(ws: &mut Ws) -> Result<String> {
    loop {
        match next(ws).await? {
            Some(Incoming::Message(ServerMessage::Welcome { token, .. })) => return Ok(token),
            Some(Incoming::Message(ServerMessage::Error { code, message, .. })) => {
                bail!("hello refused: {code}: {message}")
            }
            Some(_) => {}
            None => bail!("the server closed the connection before its welcome"),
        }
    }
}

/// Opens a connection as the player of `token`.
pub async fn connect_as(url: &str, token: &str, gate: &Semaphore) -> Result<Ws> {
    let _permit = gate.acquire().await.expect("the gate is never closed");
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    send(
        &mut ws,
        &ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: None,
            token: Some(token.into()),
            guest: false,
        },
    )
    .await?;
    Ok(ws)
}

/// Seeks on `ws` until paired: the new game's snapshot (`None`: the run is over).
pub async fn seek(
    ws: &mut Ws,
    settings: &Settings,
    stop: Instant,
    tally: &mut Tally,
) -> Result<Option<Box<Snapshot>>> {
    send(
        ws,
        &ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        },
    )
    .await?;
    loop {
        let msg = tokio::select! {
            msg = next(ws) => msg?,
            _ = tokio::time::sleep_until(stop.into()) => return Ok(None),
        };
        match msg {
            Some(Incoming::Message(ServerMessage::Snapshot(s))) => return Ok(Some(s)),
            Some(Incoming::Message(ServerMessage::Error { code, .. })) => tally.error(code),
            Some(_) => {}
            None => bail!("server closed the connection"),
        }
    }
}

/// Joins the game of `snapshot` on the player's own connection (another node than the
/// one that paired him), resuming at its seq: the snapshot to play from (a fresh one if
/// the owner sent one instead); `None`: the run is over.
pub async fn join_home(
    ws: &mut Ws,
    snapshot: Box<Snapshot>,
    stop: Instant,
    tally: &mut Tally,
) -> Result<Option<Box<Snapshot>>> {
    let game = snapshot.game;
    send(
        ws,
        &ClientMessage::Join {
            game,
            after_seq: Some(snapshot.seq),
        },
    )
    .await?;
    loop {
        let msg = tokio::select! {
            msg = next(ws) => msg?,
            _ = tokio::time::sleep_until(stop.into()) => return Ok(None),
        };
        match msg {
            Some(Incoming::Message(ServerMessage::Resumed { game: g, .. })) if g == game => {
                return Ok(Some(snapshot))
            }
            Some(Incoming::Message(ServerMessage::Snapshot(s))) if s.game == game => {
                return Ok(Some(s))
            }
            Some(Incoming::Message(ServerMessage::Error { code, .. })) => {
                tally.error(code.clone());
                bail!("joining a game from another node: {code}");
            }
            Some(_) => {}
            None => bail!("server closed the connection"),
        }
    }
}
