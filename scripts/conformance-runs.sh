#!/usr/bin/env bash
# Runs the reference runtime (conformance/) COUNT times under one variant and judges every
# history with `sutra-sim check`; prints one line per run and a summary: runs, events,
# verdicts (by checker), the first flagged run. docs/conformance.md shows what it prints.
#
#   scripts/conformance-runs.sh VARIANT COUNT [FIRST_SEED] [--postgres URL] [--until-flagged]
#                               [--expect clean|flagged] [--keep DIR]
#
# Exit 1 when --expect is not met (a flagged run of a shape expected clean, or no flag in
# COUNT runs of a shape expected flagged); 2 when a run or its check failed.
# Uses target/release/{sutra-conformance,sutra-sim}, building them if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 VARIANT COUNT [FIRST_SEED] [--postgres URL] [--until-flagged] [--expect clean|flagged] [--keep DIR]" >&2; exit 2; }
[ $# -ge 2 ] || usage
variant=$1; count=$2; shift 2
first=0
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then first=$1; shift; fi
pg=(); until_flagged=0; keep=""; expect=""
while [ $# -gt 0 ]; do
    case $1 in
        --postgres) [ $# -ge 2 ] || usage; pg=(--postgres "$2"); shift 2 ;;
        --until-flagged) until_flagged=1; shift ;;
        --keep) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
        --expect) [ $# -ge 2 ] || usage; expect=$2; shift 2; [[ $expect =~ ^(clean|flagged)$ ]] || usage ;;
        *) usage ;;
    esac
done
[[ $count =~ ^[0-9]+$ ]] || usage
for bin in sutra-conformance sutra-sim; do
    [ -x "target/release/$bin" ] || cargo build --release --locked -p "$bin" >&2
done
dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
runs=0; events=0; clean=0; first_flag=""; declare -A by_checker=()
for seed in $(seq "$first" $((first + count - 1))); do
    file="$dir/$variant-$seed.jsonl"
    if ! out=$(target/release/sutra-conformance run --variant "$variant" --seed "$seed" "${pg[@]}" --out "$file" 2>&1); then
        echo "seed $seed: the run failed: $out" >&2
        exit 2
    fi
    n=$(echo "$out" | sed -n 's/.*: \([0-9]*\) events.*/\1/p')
    set +e
    verdict=$(target/release/sutra-sim check "$file" 2>&1 | head -1)
    code=$?
    set -e
    runs=$((runs + 1)); events=$((events + n))
    echo "seed $seed: $n events: $verdict"
    case $verdict in
        pass) clean=$((clean + 1)) ;;
        "violation of "*)
            checker=$(echo "$verdict" | sed 's/^violation of \([^:]*\):.*/\1/')
            by_checker[$checker]=$(( ${by_checker[$checker]:-0} + 1 ))
            [ -n "$first_flag" ] || first_flag="run $runs (seed $seed) by $checker"
            ;;
        *) echo "seed $seed: check could not judge the history ($code)" >&2; exit 2 ;;
    esac
    [ -n "$keep" ] || rm -f "$file"
    if [ $until_flagged = 1 ] && [ -n "$first_flag" ]; then break; fi
done
[ -n "$keep" ] || rmdir "$dir" 2>/dev/null || true
echo "variant $variant${pg:+ on PostgreSQL}: $runs run(s), $events events, $clean clean"
if [ ${#by_checker[@]} -gt 0 ]; then
    for c in "${!by_checker[@]}"; do echo "  flagged by $c: ${by_checker[$c]}"; done
fi
echo "  first flag: ${first_flag:-none}"
if [ "$expect" = clean ] && [ "$clean" != "$runs" ]; then exit 1; fi
if [ "$expect" = flagged ] && [ -z "$first_flag" ]; then exit 1; fi
