#!/usr/bin/env bash
# Issue #26's by-hand acceptance: writes the scaled copies of the built-in scenarios
# (examples/scaled_copies.rs) into a new directory and sweeps each with COUNT seeds of the
# correct model; prints one line per copy and exits 1 if any copy has a failing seed.
#
#   scripts/scaled-copies.sh [COUNT] [JOBS]        # defaults: 2000 seeds, 2 jobs
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}; jobs=${2:-2}
[[ $count =~ ^[0-9]+$ && $jobs =~ ^[0-9]+$ ]] || { echo "usage: $0 [COUNT] [JOBS]" >&2; exit 2; }
cargo build --release --locked --quiet --bin sutra-sim --example scaled_copies
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
target/release/examples/scaled_copies "$dir/copies"
red=0
for file in "$dir"/copies/*.toml; do
    set +e
    line=$(target/release/sutra-sim sweep --scenario "$file" --count "$count" --jobs "$jobs" --no-shrink 2>&1 | head -2 | tr '\n' ' ')
    set -e
    echo "$(basename "$file" .toml): $line"
    case $line in GREEN*) ;; *) red=1 ;; esac
done
exit $red
