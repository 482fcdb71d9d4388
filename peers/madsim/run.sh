#!/usr/bin/env bash
# Side-by-side: the same micro-workload on sutra-sim-core and on madsim (DESIGN §12).
#
# Builds `peer` twice in --release, each in its own target directory, because
# `--cfg madsim` in RUSTFLAGS changes every crate's fingerprint and would otherwise force
# a full rebuild of the other side each time. Checks that each side is deterministic (the
# per-seed checksums of two runs agree), then runs the two ALTERNATELY, RUNS times each,
# so drift in the load of a shared machine hits both alike, and prints every run, the
# median seeds/s of each and the ratio ours/madsim.
#
#   SEEDS=1000 RUNS=7 peers/madsim/run.sh   (the defaults; RUNS must be at least 5 for the issue)
set -euo pipefail

cd "$(dirname "$0")"
SEEDS="${SEEDS:-1000}"
RUNS="${RUNS:-7}"
BASE_FLAGS="${RUSTFLAGS:-}"

echo "== build (release)"
CARGO_TARGET_DIR=target/sutra RUSTFLAGS="$BASE_FLAGS" cargo build --release --quiet
CARGO_TARGET_DIR=target/madsim RUSTFLAGS="$BASE_FLAGS --cfg madsim" cargo build --release --quiet
OURS=target/sutra/release/peer
THEIRS=target/madsim/release/peer
echo "madsim $(cargo pkgid --quiet madsim | sed 's/.*[@#]//')"

echo "== determinism: checksums of the final shared state, two runs each"
for bin in "$OURS" "$THEIRS"; do
  first="$("$bin" checksums 3)"
  second="$("$bin" checksums 3)"
  echo "$first"
  if [[ "$first" != "$second" ]]; then
    echo "NOT DETERMINISTIC: $bin gave different checksums on a second run:" >&2
    echo "$second" >&2
    exit 1
  fi
done
echo "(identical on a second run)"

echo "== machine: $(nproc) cores, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $RUNS alternating runs of $SEEDS seeds each"
ours_rates=() theirs_rates=() ours_cpu=() theirs_cpu=()
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
for ((i = 1; i <= RUNS; i++)); do
  line="$("$OURS" bench "$SEEDS")"
  echo "run $i  $line"
  ours_rates+=("$(field seeds_per_sec <<<"$line")")
  ours_cpu+=("$(field seeds_per_cpu_sec <<<"$line")")
  line="$("$THEIRS" bench "$SEEDS")"
  echo "run $i  $line"
  theirs_rates+=("$(field seeds_per_sec <<<"$line")")
  theirs_cpu+=("$(field seeds_per_cpu_sec <<<"$line")")
done

median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ours_median="$(median "${ours_rates[@]}")"
theirs_median="$(median "${theirs_rates[@]}")"
ours_cpu_median="$(median "${ours_cpu[@]}")"
theirs_cpu_median="$(median "${theirs_cpu[@]}")"
echo "== medians (wall clock is the figure; CPU time shows what the shared machine took away)"
echo "sutra  median seeds/s: $ours_median   (per CPU second: $ours_cpu_median)"
echo "madsim median seeds/s: $theirs_median   (per CPU second: $theirs_cpu_median)"
awk -v a="$ours_cpu_median" -v b="$theirs_cpu_median" 'BEGIN { printf "ratio ours/madsim per CPU second: %.2fx\n", a / b }'
awk -v a="$ours_median" -v b="$theirs_median" 'BEGIN { printf "ratio ours/madsim: %.2fx (acceptance: >= 3x)\n", a / b }'
