//! The websocket to the server, reconnecting on its own after a lost connection.
//!
//! [`Net::next`] is cancel-safe, so it can sit in a `tokio::select!` beside keys, stdin
//! and the redraw tick.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::wire::{ClientMessage, ServerFrame};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a lost connection is retried before giving up. The server keeps a seat for its
/// reconnection grace (60 s by default), and the game goes on after it until the opponent
/// claims or the claim window (60 s more) closes: a player whose network came back within
/// that still resumes. 60 s gave up while the game still waited for him.
pub const RETRY_FOR: Duration = Duration::from_secs(300);
/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the connection did.
#[derive(Debug)]
pub enum NetEvent {
    /// A connection is open (the first, or again after a loss): say hello.
    Connected,
    Message(ServerFrame),
    /// A frame that is not a server message (shown, then ignored).
    Unreadable(String),
    /// The connection was lost; reconnecting.
    Lost(String),
    /// Cannot (re)connect: the session is over.
    GaveUp(String),
}

enum State {
    Waiting(Instant),
    Connecting(JoinHandle<Result<Ws, String>>),
    Open(Box<Ws>),
    Closed,
}

pub struct Net {
    url: String,
    state: State,
    ever_connected: bool,
    /// When the current run of failures started.
    failing_since: Option<Instant>,
    failures: u32,
    /// A loss noticed while sending, reported by the next [`Net::next`].
    pending: Option<NetEvent>,
}

/// Opens a websocket to `url` with Nagle's algorithm off: a move must leave at once, not
/// wait for the acknowledgement of the frame before it (say, the pong that answered the
/// server's ping), since the server's clock runs from the moment it arrives.
pub(crate) async fn open(url: &str) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let (ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true).await?;
    Ok(ws)
}

async fn connect(url: String) -> Result<Ws, String> {
    match tokio::time::timeout(CONNECT_TIMEOUT, open(&url)).await {
        Ok(Ok(ws)) => Ok(ws),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("timed out".into()),
    }
}

impl Net {
    /// Starts connecting to `url` at once.
    pub fn new(url: &str) -> Net {
        Net {
            url: url.to_string(),
            state: State::Waiting(Instant::now()),
            ever_connected: false,
            failing_since: None,
            failures: 0,
            pending: None,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The next thing that happens on the connection.
    pub async fn next(&mut self) -> NetEvent {
        if let Some(ev) = self.pending.take() {
            return ev;
        }
        loop {
            match &mut self.state {
                State::Closed => std::future::pending::<()>().await,
                State::Waiting(at) => {
                    sleep_until(*at).await;
                    self.state = State::Connecting(tokio::spawn(connect(self.url.clone())));
                }
                State::Connecting(task) => {
                    let result = task.await.unwrap_or_else(|e| Err(e.to_string()));
                    match result {
                        Ok(ws) => {
                            self.state = State::Open(Box::new(ws));
                            self.ever_connected = true;
                            self.failing_since = None;
                            self.failures = 0;
                            return NetEvent::Connected;
                        }
                        Err(e) => {
                            let why = format!("cannot connect to {}: {e}", self.url);
                            let since = *self.failing_since.get_or_insert_with(Instant::now);
                            if !self.ever_connected || since.elapsed() >= RETRY_FOR {
                                self.state = State::Closed;
                                return NetEvent::GaveUp(why);
                            }
                            self.failures += 1;
                            let backoff =
                                Duration::from_millis(250) * 2u32.pow(self.failures.min(4));
                            self.state = State::Waiting(Instant::now() + backoff);
                        }
                    }
                }
                State::Open(ws) => match ws.next().await {
                    Some(Ok(Message::Text(text))) => {
                        return match serde_json::from_str::<ServerFrame>(text.as_str()) {
                            Ok(m) => NetEvent::Message(m),
                            Err(e) => NetEvent::Unreadable(format!(
                                "unreadable message from the server: {e}"
                            )),
                        };
                    }
                    Some(Ok(Message::Close(frame))) => {
                        let why = frame
                            .map(|f| format!("closed by the server: {} {}", f.code, f.reason))
                            .unwrap_or_else(|| "closed by the server".into());
                        return self.lost(why);
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return self.lost(e.to_string()),
                    None => return self.lost("connection closed".into()),
                },
            }
        }
    }

    fn lost(&mut self, why: String) -> NetEvent {
        self.state = State::Waiting(Instant::now() + Duration::from_millis(200));
        self.failing_since = Some(Instant::now());
        NetEvent::Lost(why)
    }

    /// Sends a message if connected; while reconnecting it is dropped (the session says
    /// hello and resumes its game on the next connection).
    pub async fn send(&mut self, msg: &ClientMessage) {
        if let State::Open(ws) = &mut self.state {
            let text = serde_json::to_string(msg).expect("client messages serialise");
            if let Err(e) = ws.send(Message::Text(text.into())).await {
                self.pending = Some(self.lost(e.to_string()));
            }
        }
    }

    /// Closes the connection politely and stops.
    pub async fn close(&mut self) {
        if let State::Open(ws) = &mut self.state {
            let _ = tokio::time::timeout(Duration::from_secs(1), ws.close()).await;
        }
        self.state = State::Closed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_connection_sends_without_waiting_to_fill_a_segment() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            tokio_tungstenite::accept_async(tcp).await.unwrap()
        });
        let ws = connect(url).await.expect("connects");
        let MaybeTlsStream::Plain(tcp) = ws.get_ref() else {
            panic!("a plain TCP stream");
        };
        assert!(tcp.nodelay().unwrap(), "Nagle's algorithm is off");
        drop(server.await.unwrap());
    }
}
