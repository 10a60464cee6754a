//! Seeking, on one node or several of one cluster (issue 18's benchmark): the cluster's
//! lobby is one for all nodes, so each player seeks on his own node and is paired with
//! the other player of his slot wherever that one is; the red player's node runs the
//! game, and the moves and events of the player on another node cross nodes.

use super::*;
use crate::script::{next, send, Incoming, Ws};
use protocol::wire::Snapshot;

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
