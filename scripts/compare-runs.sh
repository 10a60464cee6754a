#!/usr/bin/env bash
# Runs the relay yardstick (../shared/bench/relay/compare.sh) N times (default 8) and prints each
# run's line, then the median and mean of the CPU-per-move ratio (relay / tamsk) and of tamsk's p99.
# Why: compare.sh gets both servers' CPU as a whole percent of one core, so at 3,000 moves/s its
# ratio moves in steps of 0.04-0.06 and one run cannot tell 0.68 from 0.72 (BENCHMARKS.md, session
# 28); the machine's own spread is wider still. Steer by the median of many runs.
#
#   scripts/compare-runs.sh [N]      (from anywhere; build with cargo build --release first)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-8}
COMPARE=../shared/bench/relay/compare.sh
[ -x "$COMPARE" ] || { echo "$COMPARE not found (the shared relay benchmark)" >&2; exit 1; }
ratios=() p99s=()
for i in $(seq "$N"); do
  line=$("$COMPARE" 2>&1 | tail -1)
  echo "run $i: $line"
  r=$(echo "$line" | grep -oE 'ratio relay/tamsk = [0-9.]+' | grep -oE '[0-9.]+$')
  p=$(echo "$line" | grep -oE 'tamsk [0-9]+ moves/s, [0-9]+ us CPU/move, p99 [0-9.]+' | grep -oE '[0-9.]+$')
  [ -n "$r" ] && ratios+=("$r")
  [ -n "$p" ] && p99s+=("$p")
done
[ ${#ratios[@]} -gt 0 ] || { echo "no run gave a ratio" >&2; exit 1; }
python3 - "${#ratios[@]}" "${ratios[@]}" "${p99s[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1]); ratios = [float(x) for x in sys.argv[2:2 + n]]; p99s = [float(x) for x in sys.argv[2 + n:]]
print(f"{n} runs: CPU-per-move ratio relay/tamsk median {statistics.median(ratios):.2f}, mean {statistics.mean(ratios):.2f} "
      f"(min {min(ratios):.2f}, max {max(ratios):.2f})"
      + (f"; tamsk p99 median {statistics.median(p99s):.2f} ms, max {max(p99s):.2f} ms" if p99s else ""))
PY
