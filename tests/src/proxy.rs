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
