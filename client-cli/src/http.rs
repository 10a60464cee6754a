//! A minimal HTTP/1.1 GET for the server's stored games (`GET /games`, `GET /games/{id}`),
//! on the same host and port as its websocket. Plain `ws://` servers only, like the
//! websocket itself.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest answer read (a record of a long game is a few hundred kilobytes at most).
const MAX_BODY: usize = 8 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP answer: status and body.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// `host:port` of a `ws://host:port/...` URL.
pub fn authority(ws_url: &str) -> Result<String, String> {
    let rest = if let Some(r) = ws_url.strip_prefix("ws://") {
        r
    } else if ws_url.starts_with("wss://") {
        return Err("secure servers (wss://) are not supported by this client yet".into());
    } else {
        return Err(format!("'{ws_url}' is not a ws:// URL"));
    };
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("'{ws_url}' has no host"));
    }
    Ok(if host.contains(':') && !host.ends_with(']') {
        host.to_string()
    } else {
        format!("{host}:80")
    })
}

/// Percent-encodes a query value.
pub fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `GET path` on the server behind `ws_url`, asking for JSON or text.
pub async fn get(ws_url: &str, path: &str, json: bool) -> Result<Answer, String> {
    let authority = authority(ws_url)?;
    let fut = async {
        let mut tcp = TcpStream::connect(&authority)
            .await
            .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
        let accept = if json {
            "application/json"
        } else {
            "text/plain"
        };
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: {accept}\r\nConnection: close\r\nUser-Agent: tamsk\r\n\r\n"
        );
        tcp.write_all(request.as_bytes())
            .await
            .map_err(|e| format!("cannot send the request: {e}"))?;
        let mut raw = Vec::new();
        tcp.take(MAX_BODY as u64 + 64 * 1024)
            .read_to_end(&mut raw)
            .await
            .map_err(|e| format!("cannot read the answer: {e}"))?;
        parse(&raw)
    };
    tokio::time::timeout(TIMEOUT, fut)
        .await
        .map_err(|_| format!("no answer from {authority} in time"))?
}

/// Parses a whole HTTP/1.1 answer (Content-Length, chunked, or until the close).
pub fn parse(raw: &[u8]) -> Result<Answer, String> {
    let bad = |why: &str| Err(format!("not an HTTP answer: {why}"));
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return bad("no end of headers");
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.split_whitespace();
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return bad("no status line");
    };
    if !version.starts_with("HTTP/1.") {
        return bad("not HTTP/1");
    }
    let Ok(status) = code.parse::<u16>() else {
        return bad("no status code");
    };
    let mut length = None;
    let mut chunked = false;
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            if k == "content-length" {
                length = v.parse::<usize>().ok();
            } else if k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            }
        }
    }
    let rest = &raw[end + 4..];
    let body: Vec<u8> = if chunked {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let Some(nl) = rest[at..].windows(2).position(|w| w == b"\r\n") else {
                return bad("a cut chunk");
            };
            let size_text = String::from_utf8_lossy(&rest[at..at + nl]);
            let size_text = size_text.split(';').next().unwrap_or_default().trim();
            let Ok(size) = usize::from_str_radix(size_text, 16) else {
                return bad("a bad chunk size");
            };
            at += nl + 2;
            if size == 0 {
                break;
            }
            if at + size > rest.len() || out.len() + size > MAX_BODY {
                return bad("a cut chunk");
            }
            out.extend_from_slice(&rest[at..at + size]);
            at += size + 2;
        }
        out
    } else if let Some(n) = length {
        if n > rest.len() {
            return bad("a cut body");
        }
        rest[..n].to_vec()
    } else {
        rest.to_vec()
    };
    let body = String::from_utf8(body).map_err(|_| "the answer is not UTF-8 text".to_string())?;
    Ok(Answer { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authority_of_a_websocket_url() {
        assert_eq!(
            authority("ws://127.0.0.1:7878/ws").unwrap(),
            "127.0.0.1:7878"
        );
        assert_eq!(authority("ws://example.org/ws").unwrap(), "example.org:80");
        assert_eq!(authority("ws://[::1]:9/ws").unwrap(), "[::1]:9");
        assert!(authority("wss://x/ws")
            .unwrap_err()
            .contains("not supported"));
        assert!(authority("http://x").is_err());
    }

    #[test]
    fn answers_with_a_length_chunks_or_until_the_close() {
        let a = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, extra").unwrap();
        assert_eq!(
            a,
            Answer {
                status: 200,
                body: "hello".into()
            }
        );
        let a = parse(
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            a,
            Answer {
                status: 404,
                body: "abcde".into()
            }
        );
        let a = parse(b"HTTP/1.0 200 OK\r\n\r\nall of it").unwrap();
        assert_eq!(a.body, "all of it");
        assert!(parse(b"garbage").is_err());
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort").is_err());
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(encode("Ann B&c=d"), "Ann%20B%26c%3Dd");
        assert_eq!(encode("Jürgen"), "J%C3%BCrgen");
    }
}
