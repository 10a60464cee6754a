//! What `tamsk-load` reads from the server processes and prints: CPU and memory from
//! /proc, the timer-lateness histogram from `/metrics`, latency percentiles.

use hdrhistogram::Histogram;

/// Resident memory (KiB) and CPU time (clock ticks) of a process, from /proc.
pub fn process_usage(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let cpu = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((rss, cpu))
}

/// The server's timer-lateness histogram from its `/metrics`: (bucket bound in seconds,
/// cumulative count) pairs.
pub async fn lateness_buckets(server: &str) -> Option<Vec<(f64, u64)>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = server.split("://").nth(1)?.split('/').next()?;
    let mut tcp = tokio::net::TcpStream::connect(authority).await.ok()?;
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {authority}\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.ok()?;
    let mut body = String::new();
    tcp.read_to_string(&mut body).await.ok()?;
    let prefix = "tamsk_timer_lateness_seconds_bucket{le=\"";
    let buckets: Vec<(f64, u64)> = body
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(prefix)?;
            let (le, count) = rest.split_once("\"} ")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, count.trim().parse().ok()?))
        })
        .collect();
    (!buckets.is_empty()).then_some(buckets)
}

/// Timer lateness over the window: the bucket bounds holding p50 and p99 of the deadlines
/// the server handled between the two readings.
pub fn print_lateness(before: &[(f64, u64)], after: &[(f64, u64)]) {
    let delta: Vec<(f64, u64)> = after
        .iter()
        .zip(before)
        .map(|(&(le, a), &(_, b))| (le, a.saturating_sub(b)))
        .collect();
    let total = delta.last().map_or(0, |&(_, n)| n);
    let bound = |q: f64| {
        let want = (q * total as f64).ceil() as u64;
        delta
            .iter()
            .find(|&&(_, n)| n >= want)
            .map_or(f64::INFINITY, |&(le, _)| le)
    };
    let ms = |s: f64| {
        if s.is_finite() {
            format!("<= {} ms", s * 1000.0)
        } else {
            "> largest bucket".into()
        }
    };
    println!(
        "server timer lateness (deaths, expiries, graces): n={total} p50 {} p99 {} p99.9 {} (bucket bounds)",
        ms(bound(0.5)),
        ms(bound(0.99)),
        ms(bound(0.999))
    );
}

pub fn print_histogram(name: &str, h: &Histogram<u64>) {
    let ms = |us: u64| us as f64 / 1000.0;
    println!(
        "{name}: n={} p50={:.2} ms p99={:.2} ms p99.9={:.2} ms max={:.2} ms",
        h.len(),
        ms(h.value_at_quantile(0.5)),
        ms(h.value_at_quantile(0.99)),
        ms(h.value_at_quantile(0.999)),
        ms(h.max())
    );
}
