//! Owner side of the fan-out: the one publication of each game frame for everyone, for
//! the other nodes (see the parent module).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use bytes::{BufMut, Bytes, BytesMut};
use protocol::wire::{GameId, Seq};
use tokio::sync::mpsc;

use crate::rooms::Relay;

/// Frames for the other nodes waiting to be published, for all of a node's games.
const PUBLISH_QUEUE: usize = 8192;

pub(in crate::cluster) fn ev_subject(game: GameId) -> String {
    format!("tamsk.game.{game}.ev")
}

/// Owner side: the one publication of each frame for the other nodes.
pub(in crate::cluster) struct OwnerRelay {
    tx: mpsc::Sender<(GameId, Bytes)>,
    /// Frames dropped because the publication queue was full.
    pub(in crate::cluster) lost: AtomicU64,
}

impl OwnerRelay {
    pub(in crate::cluster) fn start(client: async_nats::Client) -> Arc<OwnerRelay> {
        let (tx, mut rx) = mpsc::channel::<(GameId, Bytes)>(PUBLISH_QUEUE);
        tokio::spawn(async move {
            while let Some((game, payload)) = rx.recv().await {
                if client.publish(ev_subject(game), payload).await.is_err() {
                    break;
                }
            }
        });
        Arc::new(OwnerRelay {
            tx,
            lost: AtomicU64::new(0),
        })
    }
}

impl Relay for OwnerRelay {
    fn publish(&self, game: GameId, seq: Option<Seq>, text: &Utf8Bytes) {
        let mut buf = BytesMut::with_capacity(text.len() + 21);
        if let Some(seq) = seq {
            let _ = write!(buf, "{seq}");
        }
        buf.put_u8(b'\n');
        buf.put_slice(text.as_bytes());
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send((game, buf.freeze())) {
            let lost = self.lost.fetch_add(1, Ordering::Relaxed);
            if lost.is_power_of_two() || lost == 0 {
                tracing::warn!(game = %game, lost = lost + 1, "publication queue full: frame dropped (the other nodes repair the gap)");
            }
        }
    }
}
