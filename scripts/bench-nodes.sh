#!/usr/bin/env bash
# Issue 18's benchmark: the same load on one node, then with the players of each game on
# two nodes (NATS and PostgreSQL shared), in one run. Starts a nats-server with JetStream
# and a throwaway PostgreSQL (initdb into a temporary directory; as the `postgres` user
# when run as root, since initdb refuses root), then each configuration in turn; prints
# tamsk-load's server CPU per move (every node and nats-server summed) and move->opponent
# percentiles for both, and their ratio. Each configuration gets a nats-server of its own
# (no lobby leader, owners or nodes left over from the one before) and its own database;
# the load starts once every node answers /healthz (it serves only after joining the
# cluster and its lobby: the first node started leads it).
#
#   scripts/bench-nodes.sh [tamsk-load options...]   (default: 200 games, 1 watcher,
#                                                     600 moves/s, 8 s)
#   NODE_ARGS="--worker-nice 0" scripts/bench-nodes.sh  (more flags for every node)
# Uses target/release binaries: cargo build --release --bin tamsk-server --bin tamsk-load
set -euo pipefail
cd "$(dirname "$0")/.."

LOAD_ARGS=("$@")
if [ ${#LOAD_ARGS[@]} -eq 0 ]; then
  LOAD_ARGS=(--games 200 --watchers 1 --rate 600 --duration 8)
fi
SERVER=${SERVER:-target/release/tamsk-server}
LOAD=target/release/tamsk-load
for exe in "$SERVER" "$LOAD"; do
  [ -x "$exe" ] || { echo "missing $exe: cargo build --release --bin tamsk-server --bin tamsk-load" >&2; exit 1; }
done
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL binaries not found (apt-get install postgresql)" >&2; exit 1; }
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$NATS" ] || { echo "nats-server not found (apt-get install nats-server)" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl not found (apt-get install curl)" >&2; exit 1; }

WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
  for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null || true; done
  as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
  echo "nothing listens on port $1" >&2; return 1
}
# A node binds its port before it joins NATS and the lobby, and answers /healthz (200 ok)
# only once it serves.
wait_ready() {
  for _ in $(seq 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ] && return 0
    sleep 0.05
  done
  echo "the node on port $1 is not ready (log: $2)" >&2; return 1
}

# PostgreSQL: a throwaway cluster, no fsync (as the tests run it).
mkdir "$WORK/pg" "$WORK/sock"
[ "$(id -u)" -eq 0 ] && chown postgres "$WORK/pg" "$WORK/sock"
as_pg "$PG_BIN/initdb" -D "$WORK/pg" -U postgres -A trust -E UTF8 --no-locale --no-sync >/dev/null
PG_PORT=$(free_port)
as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg" -l "$WORK/sock/pg.log" -w -t 30 \
  -o "-p $PG_PORT -k $WORK/sock -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
  start >/dev/null
db_url() { echo "postgres://postgres@127.0.0.1:$PG_PORT/$1"; }
new_db() { as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE $1" >/dev/null; }

# One run: $1 nodes on a fresh database and a fresh NATS with JetStream; prints
# tamsk-load's report.
run() {
  local n=$1 db="bench_$1_nodes" servers=() pids=() node_pids=()
  new_db "$db"
  NATS_PORT=$(free_port)
  MON_PORT=$(free_port)
  "$NATS" -a 127.0.0.1 -p "$NATS_PORT" -m "$MON_PORT" -js --store_dir "$WORK/nats$n" >"$WORK/nats$n.log" 2>&1 &
  NATS_PID=$!
  PIDS+=("$NATS_PID")
  wait_port "$NATS_PORT"
  # NATS's message counters once a second (seconds, in, out), for the messages per move
  # in the measured window.
  (while kill -0 "$NATS_PID" 2>/dev/null; do
     v=$(curl -sf "http://127.0.0.1:$MON_PORT/varz") || break
     echo "$(date +%s.%N) $(echo "$v" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["in_msgs"], d["out_msgs"])')"
     sleep 1
   done) >"$WORK/varz$n.txt" 2>/dev/null &
  for i in $(seq "$n"); do
    local port
    port=$(free_port)
    RUST_LOG=warn "$SERVER" --listen "127.0.0.1:$port" --db "$(db_url "$db")" \
      --nats "nats://127.0.0.1:$NATS_PORT" --node-id "bench$n-$i" \
      --max-conns-per-ip 100000 --rate-per-sec 1000 --rate-burst 2000 --max-connections 100000 \
      --ip-conn-burst 100000 --ip-rate-per-sec 1000000 --ip-rate-burst 1000000 --ip-register-burst 100000 ${NODE_ARGS:-} >"$WORK/node$n-$i.log" 2>&1 &
    node_pids+=($!)
    PIDS+=($!)
    wait_ready "$port" "$WORK/node$n-$i.log"
    servers+=("--server" "ws://127.0.0.1:$port/ws")
  done
  pids=("${node_pids[@]}" "$NATS_PID")
  date +%s.%N >"$WORK/start$n.txt"
  "$LOAD" "${servers[@]}" --server-pid "$(IFS=,; echo "${pids[*]}")" "${LOAD_ARGS[@]}" | tee "$WORK/load$n.txt"
  # Killed outright: this database is not used again (no drain to wait for).
  for pid in "${node_pids[@]}" "$NATS_PID"; do kill -9 "$pid"; wait "$pid" 2>/dev/null || true; done
}

echo "== 1 node (with NATS and PostgreSQL, as a cluster of one)"
run 1
echo
echo "== 2 nodes: the players of each game on different nodes"
run 2
echo

cpu() { sed -n 's/^server CPU per move .*: \([0-9.]*\) us .*/\1/p' "$WORK/load$1.txt"; }
p99() { sed -n 's/^move-to-opponent: .* p99=\([0-9.]*\) ms .*/\1/p' "$WORK/load$1.txt"; }
p50() { sed -n 's/^move-to-opponent: .* p50=\([0-9.]*\) ms .*/\1/p' "$WORK/load$1.txt"; }
# NATS messages per move in the measured window (set-up ends that long after the load
# started), from the samples inside it.
nats_per_move() {
  python3 - "$WORK/varz$1.txt" "$WORK/load$1.txt" "$(cat "$WORK/start$1.txt")" <<'PY'
import re, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
m = re.search(r"in the ([0-9.]+) s measured after ([0-9.]+) s of set-up -> ([0-9]+) moves/s", open(sys.argv[2]).read())
if not m:
    print("n/a"); sys.exit()
window, setup, rate = map(float, m.groups())
start = float(sys.argv[3]) + setup
inside = [r for r in rows if start <= r[0] <= start + window]
if len(inside) < 2 or rate <= 0:
    print("n/a"); sys.exit()
t = inside[-1][0] - inside[0][0]
print(f"{(inside[-1][1] - inside[0][1]) / t / rate:.1f} in, {(inside[-1][2] - inside[0][2]) / t / rate:.1f} out")
PY
}
echo "1 node : server CPU per move $(cpu 1) us, move->opponent p50 $(p50 1) ms p99 $(p99 1) ms, NATS messages per move $(nats_per_move 1)"
echo "2 nodes: server CPU per move $(cpu 2) us, move->opponent p50 $(p50 2) ms p99 $(p99 2) ms, NATS messages per move $(nats_per_move 2)"
python3 - "$(cpu 1)" "$(cpu 2)" "$(p99 1)" "$(p99 2)" <<'EOF'
import sys
c1, c2, p1, p2 = map(float, sys.argv[1:])
print(f"ratio: CPU per move 2 nodes / 1 node = {c2 / c1:.2f} (target <= 1.5); "
      f"p99 2 nodes - 1 node = {p2 - p1:+.2f} ms (target <= +2 ms)")
EOF
