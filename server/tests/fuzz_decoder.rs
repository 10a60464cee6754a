//! A fuzzer of the message decoder ([`server::connection::parse`]): arbitrary text, and
//! valid messages (the corpus, `tests/fuzz_corpus/decoder.txt`) mutated byte by byte. It
//! must never panic, and whatever it accepts must survive a round trip.
//!
//! In the suite: a quick run. As a bench: `scripts/fuzz.sh` (or
//! `TAMSK_FUZZ_EXECS=10000000 cargo test --release -p tamsk-server --test fuzz_decoder --
//! --nocapture`).

use std::time::Instant;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use protocol::wire::ClientMessage;
use server::connection::parse;

fn target() -> u64 {
    std::env::var("TAMSK_FUZZ_EXECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn corpus() -> Vec<Vec<u8>> {
    include_str!("fuzz_corpus/decoder.txt")
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

/// One decode: never a panic; an accepted message encodes and decodes to itself.
fn decode(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return; // the websocket layer closes non-UTF-8 text with 1007 first
    };
    if let Ok(msg) = parse(text) {
        let again = serde_json::to_string(&msg).expect("encodes");
        let back: ClientMessage = parse(&again).unwrap_or_else(|e| panic!("{again}: {e:?}"));
        assert_eq!(back, msg, "round trip of {text}");
    }
}

#[test]
fn decoder_survives_anything() {
    let target = target();
    let corpus = corpus();
    for entry in &corpus {
        let text = std::str::from_utf8(entry).unwrap();
        assert!(
            parse(text).is_ok(),
            "corpus entry {text}: {:?}",
            parse(text)
        );
    }
    let mut runner = TestRunner::new(Config {
        cases: u32::MAX,
        failure_persistence: None,
        ..Config::default()
    });
    let edits = prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..4), 1..12);
    let strategy = (0..corpus.len(), edits, ".{0,40}");
    let began = Instant::now();
    let mut execs = 0u64;
    while execs < target {
        let (seed, edits, free) = strategy.new_tree(&mut runner).expect("a case").current();
        decode(free.as_bytes());
        execs += 1;
        // Each edit applied on top of the previous ones, each stage decoded.
        let mut bytes = corpus[seed].clone();
        for (at, byte, kind) in edits {
            let at = at % (bytes.len() + 1);
            match kind {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                2 if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {
                    // Splice in a piece of another corpus entry.
                    let other = &corpus[at % corpus.len()];
                    let from = byte as usize % other.len();
                    let to = at.min(bytes.len());
                    bytes.splice(to..to, other[from..].iter().take(16).copied());
                }
            }
            decode(&bytes);
            execs += 1;
        }
    }
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "decoder fuzz: {execs} decodes in {secs:.1} s ({:.0}/s), no failure",
        execs as f64 / secs
    );
}
