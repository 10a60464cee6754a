//! TAMSK online: the authoritative real-time websocket server.
//!
//! [`run`] serves one listener until `shutdown` completes: the websocket at `/ws` and
//! plain HTTP beside it (`/healthz`, `/games`, and the browser pages of [`web`]). Finished
//! and aborted games and players are stored in SQLite or PostgreSQL ([`store`]).
//!
//! Layers that only look down (`docs/ARCHITECTURE.md`): [`room`] is one game without I/O;
//! [`game`] runs each room in its own task; [`rooms`] holds the live games and what they
//! share; [`hub`] adds players, the lobby and tournaments; [`connection`] and [`http`] sit
//! on top.

pub mod alarm;
pub mod api;
pub mod bot;
pub mod bot_client;
pub mod clock;
pub mod cluster;
pub mod codec;
pub mod config;
pub mod connection;
pub mod events;
pub mod forwarded;
pub mod game;
pub mod glicko;
pub mod history;
pub mod http;
pub mod hub;
pub mod lanes;
pub mod limits;
pub mod lobby;
pub mod matching;
pub mod metrics;
pub mod outbox;
pub mod peer;
pub mod ping;
pub mod priority;
pub mod ratings;
pub mod request;
pub mod room;
pub mod rooms;
pub mod stop;
pub mod store;
pub mod swiss;
pub mod tenure;
pub mod tournament_model;
pub mod web;
pub mod wire;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

pub use config::Config;

/// The listen queue [`bind`] asks for by default. The standard library's and tokio's
/// `bind` ask for 128: a burst of more connections at once (a crowd arriving to watch a
/// game, everyone reconnecting after a restart) overflowed it, and the kernel dropped the
/// excess handshakes, which waited a second or more to be sent again (or, under syncookies,
/// were reset). The kernel caps it at `net.core.somaxconn` (4096 on recent Linux).
pub const LISTEN_BACKLOG: u32 = 1024;

/// A listener on `addr` with a listen queue of `backlog` connections (see
/// [`LISTEN_BACKLOG`]); `SO_REUSEADDR` as tokio's `bind`, so that a restarted server can
/// listen again while its old connections are in `TIME_WAIT`.
pub async fn bind(addr: std::net::SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// Serves with the default [`Config`] until `shutdown` completes.
pub async fn run(listener: TcpListener, shutdown: impl Future<Output = ()> + Send + 'static) {
    run_with(listener, Config::default(), shutdown).await
}

/// Serves with `config` until `shutdown` completes; then suspends live games (to be
/// resumed at the next start; aborted without `resume_games`), closes every
/// connection and returns once their tasks have ended (or after a few seconds). A
/// database that cannot be opened is logged and nothing is served: see [`try_run_with`].
pub async fn run_with(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    if let Err(e) = try_run_with(listener, config, shutdown).await {
        tracing::error!(error = %e, "server not started");
    }
}

/// [`run_with`], failing when the database cannot be opened or migrated.
pub async fn try_run_with(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let location = store::Location::of(&config);
    // Several nodes: the games the database has as live are taken up by whichever node
    // claims them (`cluster`), never all by the one that starts.
    let clustered = config.nats_url.clone();
    if clustered.is_some() && !location.shared() {
        anyhow::bail!(
            "--nats needs a PostgreSQL database shared by the nodes (--db postgres://...): \
             {} is not one",
            location.describe()
        );
    }
    let resume_games = config.resume_games || clustered.is_some();
    let (store, mut live) = store::Store::open_at(&location, resume_games).await?;
    if clustered.is_some() {
        live.clear();
    }
    let drain = config.drain;
    let hub = Arc::new(hub::Hub::new(config, store.clone()));
    let rooms = hub.rooms.clone();
    let shutdown_rooms = rooms.clone();
    resume(&hub, &store, live).await?;
    if let Some(url) = &clustered {
        let weak = Arc::downgrade(&hub);
        let resolve: cluster::Resolve = Arc::new(move |id: String| {
            let weak = weak.clone();
            Box::pin(async move { weak.upgrade()?.player_by_id(&id).await.ok().flatten() })
        });
        let cluster = cluster::Cluster::start(rooms.clone(), url, resolve).await?;
        let host = Arc::new(hub::cluster_lobby::HubLobby(Arc::downgrade(&hub)));
        let lobby = cluster::lobby::ClusterLobby::start(cluster.clone(), host).await?;
        spawn_shared_ratings(&hub, cluster.shared_ratings().await?);
        let _ = hub.cluster.set(cluster);
        let _ = hub.cluster_lobby.set(lobby);
    }
    *hub.bot.ratings.lock().expect("ratings lock") = store.ratings_of(bot::BOT_ID).await?;
    let weak = Arc::downgrade(&hub);
    let tell = move |player: &str, msg: &protocol::wire::LobbyMessage| {
        if let Some(hub) = weak.upgrade() {
            hub.tell_player(player, msg);
        }
    };
    let weak = Arc::downgrade(&hub);
    let share = move |changes: &[ratings::Change]| {
        if let Some(cluster) = weak.upgrade().and_then(|hub| hub.cluster.get().cloned()) {
            cluster.share_ratings(changes);
        }
    };
    let ratings_task = ratings::spawn(store.clone(), tell, share, hub.events.subscribe());
    hub::spawn_sweeper(&hub);
    // Several nodes: the lobby's leader runs the tournaments, taken up when it leads.
    if clustered.is_none() {
        hub.tournaments.resume(&hub).await?;
    }
    let tournament_task = hub::tournament::spawn_runner(&hub);
    let shutdown_hub = hub.clone();
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "listening");
    }
    let serving = http::serve(listener, hub.clone(), async move {
        shutdown.await;
        tracing::info!(
            drain_ms = drain.as_millis() as u64,
            "shutting down: no new games; draining live ones"
        );
        shutdown_hub.drain(drain).await;
        tracing::info!(
            resume = resume_games,
            "stopping the games still live (suspended to be resumed, or aborted)"
        );
        // Games first, so that their last events are queued before the connections
        // close (a connection sends what is queued before its close frame).
        shutdown_hub.stop_games.cancel();
        shutdown_hub.game_tasks.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), shutdown_hub.game_tasks.wait()).await;
        // Every game is over and published: the consumers finish what is queued.
        shutdown_hub.events.close();
        drop(shutdown_hub);
        tracing::info!("closing connections");
        shutdown_rooms.stop_conns.cancel();
    });
    serving.await;
    let cluster = hub.cluster.get().cloned();
    drop(hub);
    rooms.conn_tasks.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), rooms.conn_tasks.wait()).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), ratings_task).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), tournament_task).await;
    // Everything the games queued (their ends, aborted ones included) is on disk.
    store.flush().await;
    if let Some(cluster) = cluster {
        cluster.leave().await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Takes up the games the last run left live; those that cannot be resumed are stored.
async fn resume(
    hub: &Arc<hub::Hub>,
    store: &store::Store,
    live: Vec<store::LiveGame>,
) -> anyhow::Result<()> {
    let (mut resumed, mut stored) = (0, 0);
    for cut in live {
        let (red, black) = (&cut.start.red.player_id, &cut.start.black.player_id);
        let seats = match (hub.player_by_id(red).await?, hub.player_by_id(black).await?) {
            (Some(red), Some(black)) => Some([red, black]),
            _ => None,
        };
        let Some(seats) = seats else {
            tracing::error!(game = %cut.start.id, "a player of a cut-off game is unknown");
            store.store_aborted(cut).await?;
            stored += 1;
            continue;
        };
        match game::restore(&hub.rooms, cut, seats) {
            Ok(_) => resumed += 1,
            Err(cut) => {
                store.store_aborted(*cut).await?;
                stored += 1;
            }
        }
    }
    if resumed + stored > 0 {
        tracing::warn!(resumed, stored, "games left live by the last run");
    }
    Ok(())
}

/// Sets the ratings other nodes' games moved on the players this node holds (see
/// `cluster::ratings`); ends with the hub.
fn spawn_shared_ratings(
    hub: &Arc<hub::Hub>,
    updates: impl futures::Stream<Item = Vec<(String, protocol::rating::TimeControl, ratings::Rated)>>
        + Send
        + 'static,
) {
    let weak = Arc::downgrade(hub);
    tokio::spawn(async move {
        use futures::StreamExt;
        let mut updates = std::pin::pin!(updates);
        while let Some(batch) = updates.next().await {
            let Some(hub) = weak.upgrade() else { break };
            for (player, tc, rated) in batch {
                hub.rating_moved(&player, tc, rated);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    /// A crowd connecting at once is queued whole by the kernel before the server accepts
    /// one: with the standard library's queue of 128, the 130th connect waited for its
    /// handshake to be sent again (a second or more), and here, with nobody accepting,
    /// for ever.
    #[tokio::test]
    async fn a_crowd_connecting_at_once_is_queued_whole_before_any_accept() {
        let listener = super::bind(([127, 0, 0, 1], 0).into(), super::LISTEN_BACKLOG)
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let connects = (0..300).map(|_| tokio::net::TcpStream::connect(addr));
        let clients = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            futures::future::try_join_all(connects),
        )
        .await
        .expect("every connect completes without an accept")
        .unwrap();
        for _ in &clients {
            let (tcp, _) = listener.accept().await.unwrap();
            assert!(clients
                .iter()
                .any(|c| c.local_addr().unwrap() == tcp.peer_addr().unwrap()));
        }
    }
}
