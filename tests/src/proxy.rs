//! A TCP proxy that delays every byte by a fixed time each way: a player far from the
//! server, without root or network namespaces. Loopback only; it stops with the test's
//! runtime.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

/// Starts a proxy to `target` whose every byte arrives `delay` late, in each direction.
/// Returns the address to connect to.
pub async fn delaying(target: SocketAddr, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("proxy address");
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let Ok(outbound) = TcpStream::connect(target).await else {
                continue;
            };
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            let (in_read, in_write) = inbound.into_split();
            let (out_read, out_write) = outbound.into_split();
            tokio::spawn(pump(in_read, out_write, delay));
            tokio::spawn(pump(out_read, in_write, delay));
        }
    });
    addr
}

/// Copies `from` to `to`, each chunk written `delay` after it was read.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, delay: Duration) {
    // Bounded: a test's traffic is small; a reader that outruns the writer by this many
    // chunks waits.
    let (tx, mut rx) = mpsc::channel::<(Instant, Vec<u8>)>(1024);
    let writer = tokio::spawn(async move {
        while let Some((due, bytes)) = rx.recv().await {
            sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.await;
}

/// A proxy to `target` whose open connections can all be cut at once while it goes on
/// accepting new ones: a client's network failing for a moment, or the node it reached
/// dying behind a load balancer that sends the next connection elsewhere.
pub struct Cuttable {
    pub addr: SocketAddr,
    conns: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Cuttable {
    pub async fn start(target: SocketAddr) -> Cuttable {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let conns = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (list, count) = (conns.clone(), accepted.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let Ok(mut outbound) = TcpStream::connect(target).await else {
                    continue;
                };
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = inbound.set_nodelay(true);
                let _ = outbound.set_nodelay(true);
                // Aborted, the task drops both sockets: each side sees its connection end.
                let task = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                let mut list = list.lock().expect("proxy lock");
                list.retain(|t: &tokio::task::AbortHandle| !t.is_finished());
                list.push(task.abort_handle());
            }
        });
        Cuttable {
            addr,
            conns,
            accepted,
        }
    }

    /// Cuts every open connection; returns how many there were.
    pub fn cut(&self) -> usize {
        let conns = std::mem::take(&mut *self.conns.lock().expect("proxy lock"));
        let open = conns.iter().filter(|t| !t.is_finished()).count();
        for task in conns {
            task.abort();
        }
        open
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}
