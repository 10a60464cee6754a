//! A websocket spoken by hand over a raw TCP socket, for what a library client would not
//! do: pipelining frames with the upgrade, a burst written at once, reading only later.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The upgrade request for `/ws`.
pub const UPGRADE: &[u8] =
    b"GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/// A final, masked text frame (a client's frames are masked).
pub fn text_frame(payload: &[u8]) -> Vec<u8> {
    let mask = [7u8, 1, 9, 3];
    let mut out = vec![0x81];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n => {
            out.push(0x80 | 126);
            out.extend((n as u16).to_be_bytes());
        }
    }
    out.extend(mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// A server frame: opcode and payload (the server's frames are unmasked).
pub type Frame = (u8, Vec<u8>);

/// The whole frames at the start of `bytes` (after the upgrade's answer, if it is there
/// whole), and whether the answer was `101`.
pub fn frames(bytes: &[u8]) -> (bool, Vec<Frame>) {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return (false, Vec::new());
    };
    (bytes.starts_with(b"HTTP/1.1 101"), parse(&bytes[end + 4..]))
}

/// The whole frames at the start of `bytes`.
pub fn parse(bytes: &[u8]) -> Vec<Frame> {
    let mut at = 0;
    let mut out = Vec::new();
    while at + 2 <= bytes.len() {
        let (opcode, len7) = (bytes[at] & 0x0f, (bytes[at + 1] & 0x7f) as usize);
        let (len, head) = match len7 {
            126 if at + 4 <= bytes.len() => (
                u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]) as usize,
                4,
            ),
            126 | 127 => break,
            n => (n, 2),
        };
        if at + head + len > bytes.len() {
            break;
        }
        out.push((opcode, bytes[at + head..at + head + len].to_vec()));
        at += head + len;
    }
    out
}

/// Connects to `addr` and writes the upgrade and `then` in one write.
pub async fn connect_with(addr: SocketAddr, then: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut out = UPGRADE.to_vec();
    out.extend(then);
    s.write_all(&out).await.expect("write");
    s
}

/// Reads until the first frame after the upgrade's answer (the answer to a hello, say)
/// has come whole; what came after it is left unread.
pub async fn read_first_frame(s: &mut TcpStream) -> Frame {
    let mut got = Vec::new();
    let mut buf = [0u8; 1];
    loop {
        let n = s.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed before a frame: {got:?}");
        got.extend(&buf[..n]);
        if let (true, mut all) = frames(&got) {
            if let Some(first) = all.pop() {
                return first;
            }
        }
    }
}

/// Reads until the server's close frame: every frame up to it, and its code. `upgraded`:
/// the upgrade's answer was read already (by [`read_first_frame`]).
pub async fn read_until_close(s: &mut TcpStream, upgraded: bool) -> (Vec<Frame>, u16) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed without a close frame: {got:?}");
        got.extend(&buf[..n]);
        let all = match upgraded {
            true => parse(&got),
            false => {
                let (ok, all) = frames(&got);
                assert!(ok || all.is_empty(), "{got:?}");
                all
            }
        };
        if let Some(close) = all.iter().position(|(op, _)| *op == 8) {
            let p = &all[close].1;
            let code = u16::from_be_bytes([p[0], p[1]]);
            return (all[..close].to_vec(), code);
        }
    }
}
