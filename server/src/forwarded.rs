//! The client's address behind a reverse proxy or load balancer (`--trusted-proxies`).
//!
//! Every per-address limit (connections, new connections, messages, requests, new
//! players) is keyed by the client's address. Behind a proxy every connection comes from
//! the proxy's: without this, one address would carry all the players, and its limits
//! would refuse them. A connection from a trusted proxy is counted under the address its
//! `X-Forwarded-For` names; from anyone else the header is ignored (it could be forged).

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// Parses one entry of `--trusted-proxies`: an address (`10.0.0.5`) or a network
/// (`10.0.0.0/8`).
pub fn parse_net(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{text:?} is not an address or a network (10.0.0.5, 10.0.0.0/8)"))
}

/// Whether `ip` is one of the trusted proxies.
pub fn trusted(ip: IpAddr, proxies: &[IpNet]) -> bool {
    proxies.iter().any(|net| net.contains(&ip))
}

/// The client of a request that came from `peer`, a trusted proxy: the right-most
/// address of `X-Forwarded-For` that is not itself a trusted proxy (each proxy appends
/// the address it was reached from; those left of the first untrusted one could be
/// anything the client wrote). `None` when the header names no such address: the
/// request is then the proxy's own.
pub fn client_ip(headers: &HeaderMap, proxies: &[IpNet]) -> Option<IpAddr> {
    let entries: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for entry in entries.into_iter().rev() {
        let ip = entry.trim().parse::<IpAddr>().ok()?;
        if !trusted(ip, proxies) {
            return Some(ip);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_client_is_the_right_most_address_no_trusted_proxy_added() {
        let proxies = [
            parse_net("10.0.0.0/8").unwrap(),
            parse_net("192.0.2.1").unwrap(),
        ];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            client_ip(&headers(&["203.0.113.7"]), &proxies),
            Some(ip("203.0.113.7"))
        );
        // A client's own forged entry is left of the one the proxy added.
        assert_eq!(
            client_ip(&headers(&["1.2.3.4, 203.0.113.7"]), &proxies),
            Some(ip("203.0.113.7"))
        );
        // Two proxies of ours: the one nearest the client added its address.
        assert_eq!(
            client_ip(&headers(&["203.0.113.7, 10.1.2.3"]), &proxies),
            Some(ip("203.0.113.7"))
        );
        assert_eq!(
            client_ip(&headers(&["203.0.113.7", "10.1.2.3"]), &proxies),
            Some(ip("203.0.113.7"))
        );
        assert_eq!(
            client_ip(&headers(&["2001:db8::1"]), &proxies),
            Some(ip("2001:db8::1"))
        );
        assert_eq!(client_ip(&headers(&[]), &proxies), None);
        assert_eq!(client_ip(&headers(&["10.0.0.9"]), &proxies), None);
        assert_eq!(client_ip(&headers(&["not an address"]), &proxies), None);
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        let proxies = [
            parse_net("10.0.0.0/8").unwrap(),
            parse_net(" ::1 ").unwrap(),
        ];
        assert!(trusted("10.200.0.1".parse().unwrap(), &proxies));
        assert!(trusted("::1".parse().unwrap(), &proxies));
        assert!(!trusted("11.0.0.1".parse().unwrap(), &proxies));
        assert!(!trusted("127.0.0.1".parse().unwrap(), &proxies));
        let err = parse_net("10.0.0.0/33").unwrap_err();
        assert!(err.contains("10.0.0.0/33"), "{err}");
        assert!(parse_net("proxy.local").is_err());
    }
}
