#!/bin/sh
# Fuzzes the message decoder and the engine's apply/advance for N executions each
# (default 10 million), in a release build, and prints the figures.
#   scripts/fuzz.sh [N]
set -eu
n="${1:-10000000}"
export TAMSK_FUZZ_EXECS="$n"
cargo test --release --locked -p tamsk-server --test fuzz_decoder -- --nocapture 2>&1 | grep -E 'fuzz:|panicked|test result'
cargo test --release --locked -p tamsk-protocol --test fuzz_engine -- --nocapture 2>&1 | grep -E 'fuzz:|panicked|test result'
