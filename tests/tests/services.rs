//! The real services the tests start themselves (tests/src/services.rs): a throwaway
//! PostgreSQL that takes connections and is gone after, and a nats-server that answers
//! NATS's PING (for the multi-node work of issue 18).

use std::time::Instant;

use sqlx::Connection;
use tamsk_tests::services::{Nats, Postgres};

#[tokio::test]
async fn a_throwaway_postgres_starts_serves_and_stops() {
    let started = Instant::now();
    let Some(pg) = tokio::task::spawn_blocking(Postgres::start).await.unwrap() else {
        return;
    };
    eprintln!(
        "PostgreSQL: initdb and start {} ms",
        started.elapsed().as_millis()
    );
    let url = pg.database().await;
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one, 1);
    conn.close().await.unwrap();
    let port = pg.port;
    let stopping = Instant::now();
    drop(pg);
    eprintln!("PostgreSQL: stop {} ms", stopping.elapsed().as_millis());
    assert!(
        sqlx::PgConnection::connect(&format!("postgres://postgres@127.0.0.1:{port}/postgres"))
            .await
            .is_err(),
        "stopped on drop"
    );
}

#[test]
fn a_nats_server_starts_answers_and_stops() {
    let started = Instant::now();
    let Some(nats) = Nats::start() else { return };
    eprintln!("nats-server: start {} ms", started.elapsed().as_millis());
    let info = nats.ping().expect("INFO, then PONG to PING");
    assert!(info.starts_with("INFO "), "{info}");
    assert!(info.contains("\"jetstream\":true"), "{info}");
    let port = nats.port;
    drop(nats);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "stopped on drop"
    );
}
