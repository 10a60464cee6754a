//! Behind a reverse proxy or load balancer (`--trusted-proxies`): the per-address limits
//! count each client under the address its `X-Forwarded-For` names; from an address not
//! trusted, the header changes nothing.

use super::*;

/// Connects as if through a proxy that says the client is `client`, says hello as a new
/// player: the first answer.
async fn hello_from(server: &TestServer, client: &str, name: &str) -> (Client, ServerMessage) {
    let mut c = Client::connect_with_headers(server.addr, &[("x-forwarded-for", client)]).await;
    c.hello_new(name).await;
    let first = c.recv().await;
    (c, first)
}

fn refused(msg: &ServerMessage) -> bool {
    matches!(msg, ServerMessage::Error { code, .. } if code == "too_many_connections")
}

#[tokio::test]
async fn a_trusted_proxys_clients_are_counted_each_under_its_own_address() {
    let server = TestServer::start_with(server::Config {
        max_conns_per_ip: 2,
        trusted_proxies: vec![server::forwarded::parse_net("127.0.0.1").unwrap()],
        ..test_config()
    })
    .await;
    let mut open = Vec::new();
    for i in 0..2 {
        let (c, first) = hello_from(&server, "203.0.113.7", &format!("Seven{i}")).await;
        assert!(matches!(first, ServerMessage::Welcome { .. }), "{first:?}");
        open.push(c);
    }
    // A third from the same client is over its address's limit...
    let (mut third, first) = hello_from(&server, "203.0.113.7", "Seven2").await;
    assert!(refused(&first), "{first:?}");
    assert_eq!(third.closed().await, Some(1008));
    // ...while other clients of the same proxy are not (a client's own forged entry, left
    // of the proxy's, counts for nothing).
    for (i, client) in ["203.0.113.8", "198.51.100.1, 203.0.113.9"]
        .iter()
        .enumerate()
    {
        let (c, first) = hello_from(&server, client, &format!("Other{i}")).await;
        assert!(
            matches!(first, ServerMessage::Welcome { .. }),
            "{client}: {first:?}"
        );
        open.push(c);
    }
    for c in &mut open {
        c.sync().await;
    }
}

#[tokio::test]
async fn a_forwarded_address_from_an_untrusted_peer_changes_nothing() {
    let server = TestServer::start_with(server::Config {
        max_conns_per_ip: 2,
        ..test_config()
    })
    .await;
    let mut open = Vec::new();
    for (i, client) in ["203.0.113.7", "203.0.113.8"].iter().enumerate() {
        let (c, first) = hello_from(&server, client, &format!("Claimer{i}")).await;
        assert!(matches!(first, ServerMessage::Welcome { .. }), "{first:?}");
        open.push(c);
    }
    // All three came from 127.0.0.1, whatever they say.
    let (mut third, first) = hello_from(&server, "203.0.113.9", "Claimer2").await;
    assert!(refused(&first), "{first:?}");
    assert_eq!(third.closed().await, Some(1008));
}

#[tokio::test]
async fn a_trusted_proxys_clients_each_have_their_own_connection_rate() {
    let server = TestServer::start_with(server::Config {
        ip_conn_per_min: 1,
        ip_conn_burst: 2,
        trusted_proxies: vec![server::forwarded::parse_net("127.0.0.0/8").unwrap()],
        ..test_config()
    })
    .await;
    let mut open = Vec::new();
    for i in 0..2 {
        let (c, first) = hello_from(&server, "203.0.113.7", &format!("Quick{i}")).await;
        assert!(matches!(first, ServerMessage::Welcome { .. }), "{first:?}");
        open.push(c);
    }
    let (_, first) = hello_from(&server, "203.0.113.7", "Quick2").await;
    assert!(
        matches!(&first, ServerMessage::Error { code, .. } if code == "connecting_too_fast"),
        "{first:?}"
    );
    // Another client of the same proxy has its own budget.
    let (_, first) = hello_from(&server, "203.0.113.8", "Other").await;
    assert!(matches!(first, ServerMessage::Welcome { .. }), "{first:?}");
}
