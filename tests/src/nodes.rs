//! Several nodes for the cluster tests: the services (a real nats-server with JetStream
//! and a throwaway PostgreSQL), a node's configuration, and a node that can be killed
//! like `kill -9` (its own runtime on its own thread, dropped without any shutdown).

use std::net::SocketAddr;
use std::time::Duration;

use server::Config;

use crate::services::{Nats, TestDb};

/// NATS and PostgreSQL, or `None` when their binaries are missing (skipped loudly).
pub async fn services() -> Option<(Nats, TestDb)> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let nats = Nats::start()?;
    let db = TestDb::postgres().await?;
    Some((nats, db))
}

/// A node of the cluster on `nats` and `db`, named `node`, with this lease.
pub fn node_config(db: &TestDb, nats: &Nats, node: &str, lease: Duration) -> Config {
    Config {
        nats_url: Some(nats.url()),
        node_id: Some(node.into()),
        lease,
        ..db.config()
    }
}

/// A node that can be killed like kill -9.
pub struct Node {
    pub addr: SocketAddr,
    kill: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Node {
    pub fn start(config: Config) -> Node {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (kill, killed) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("a runtime");
            let listener = rt
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .expect("bind");
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            rt.spawn(server::run_with(listener, config, std::future::pending()));
            let _ = killed.recv();
            // Every task stops where it is: no drain, no suspension, no goodbye.
            rt.shutdown_background();
        });
        Node {
            addr: addr_rx.recv().expect("the node's address"),
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    pub fn kill(&mut self) {
        drop(self.kill.take());
        if let Some(t) = self.thread.take() {
            t.join().expect("the node's thread");
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}
