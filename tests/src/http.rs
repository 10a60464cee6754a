//! Plain HTTP/1.1 requests over a TCP stream, with their answers parsed.

use super::*;

/// An HTTP answer: status code, headers (lower-case names) and body.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A GET asking for JSON that must answer 200: the JSON.
pub async fn get_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let resp = http_get(addr, path, Some("application/json")).await;
    assert_eq!(resp.status, 200, "GET {path}: {}", resp.body);
    resp.json()
}

/// A plain HTTP/1.1 GET over a real socket, with an optional `Accept` header.
/// The value of one unlabelled series in the `/metrics` of the server at `addr`.
pub async fn metric(addr: SocketAddr, name: &str) -> f64 {
    try_metric(addr, name)
        .await
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

/// The sample `name` (with its labels, if any: `name{key="value"}`) of a server's
/// `/metrics`, if it has one.
pub async fn try_metric(addr: SocketAddr, name: &str) -> Option<f64> {
    let text = http_get(addr, "/metrics", None).await.body;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .map(|v| v.parse().unwrap())
}

pub async fn http_get(addr: SocketAddr, path: &str, accept: Option<&str>) -> HttpResponse {
    let s = within("http connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    http_get_on(s, path, accept).await
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2, say: another
/// client address for the server's per-address limits).
pub async fn tcp_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("address"))
        .expect("bind");
    within("tcp connect", socket.connect(to))
        .await
        .expect("connect")
}

/// A GET on a connected stream, with `Connection: close`.
pub async fn http_get_on(mut s: TcpStream, path: &str, accept: Option<&str>) -> HttpResponse {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\n{accept}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    within("http response", s.read_to_end(&mut raw))
        .await
        .expect("read");
    let raw = String::from_utf8(raw).expect("utf-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}
