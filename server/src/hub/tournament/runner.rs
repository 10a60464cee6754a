//! The runner task: the start times of the tournaments this node runs, and the results
//! of their games (from this node's game-over events, and with several nodes from the
//! other nodes').

use super::*;

/// How soon a runner whose node's term as the lobby's leader lapsed looks again at a
/// tournament due to start.
const RECHECK_MS: u64 = 250;

/// Several nodes: how often the leader looks again at its running rounds for results
/// nobody recorded (see `Tournaments::sweep`).
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The runner: game-over events and start times. Ends when the events close. With
/// several nodes it also hears the results of tournament games that ended on other nodes,
/// and tells them of those that end here (see `cluster::results`).
pub fn spawn_runner(hub: &Arc<Hub>) -> tokio::task::JoinHandle<()> {
    let mut rx: mpsc::Receiver<Arc<GameOver>> = hub.events.subscribe();
    let weak: Weak<Hub> = Arc::downgrade(hub);
    let changed = hub.tournaments.changed.clone();
    let cluster = hub.cluster.get().cloned();
    tokio::spawn(async move {
        let mut elsewhere = match &cluster {
            Some(cluster) => match cluster.tournament_results().await {
                Ok(results) => Some(results),
                Err(e) => {
                    tracing::error!(error = %e, "cannot hear the other nodes' tournament results");
                    None
                }
            },
            None => None,
        };
        let mut sweep = tokio::time::interval(SWEEP_EVERY);
        sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let Some(hub) = weak.upgrade() else { return };
            let changed = changed.notified();
            // Shutting down: no tournament starts (nor spins waiting to).
            let next = match hub.closed_for_new_games() {
                true => None,
                false => hub.tournaments.next_start().await,
            };
            // Several nodes: a start waits while this node's term as the lobby's leader
            // has lapsed. A loaded leader's term lapses for a moment between refreshes,
            // which wake nothing here: looked at again a little later.
            let next = match hub.lobby_is_here() {
                true => next,
                false => next.map(|ms| ms.max(unix_ms() + RECHECK_MS)),
            };
            let wait = next.map(|ms| Duration::from_millis(ms.saturating_sub(unix_ms())));
            drop(hub);
            let heard = async {
                match &mut elsewhere {
                    Some(results) => futures::StreamExt::next(results).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                ev = rx.recv() => {
                    let Some(ev) = ev else { return };
                    let Some(done) = finished(&ev) else { continue };
                    if let Some(cluster) = &cluster {
                        cluster.tell_tournament_result(&done).await;
                    }
                    if let Some(hub) = weak.upgrade() {
                        hub.tournaments.record(&hub, &done).await;
                    }
                }
                Some(done) = heard => {
                    if let Some(hub) = weak.upgrade() {
                        hub.tournaments.record(&hub, &done).await;
                    }
                }
                _ = changed => {}
                _ = sweep.tick(), if cluster.is_some() => {
                    if let Some(hub) = weak.upgrade() {
                        hub.tournaments.sweep(&hub).await;
                    }
                }
                _ = tokio::time::sleep(wait.unwrap_or(Duration::ZERO)), if wait.is_some() => {
                    if let Some(hub) = weak.upgrade() {
                        hub.tournaments.start_due(&hub).await;
                    }
                }
            }
        }
    })
}
