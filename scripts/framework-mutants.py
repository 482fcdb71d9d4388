#!/usr/bin/env python3
"""Mutation testing of the framework itself: cargo-mutants over sim/src and shrink/src,
each mutant tested by its own crate's tests (docs/mutation-testing.md, "The framework").

Runs, in this order, so that what must be covered is covered first:
  1. every mutant of the shrinker's core (shrink/src/search.rs),
  2. every mutant of the state lane (sim/src/lane.rs) and of node pause and resume
     (`pause` and `resume` in sim/src/executor/nodes.rs),
  3. a random sample of --sample of the other mutants of both crates, drawn with
     random.Random(--seed) from cargo-mutants' list (sorted by name), or all of them
     with --sample all.

Each group is one cargo-mutants run (--jobs 1, --timeout, --no-shuffle) with its own
output directory under --output; the script then prints every mutant's outcome and the
counts (caught, missed, timeout, unviable) per group and in total.

Usage:  scripts/framework-mutants.py [--sample 60] [--seed 1] [--timeout 240] [--in-place] [--one-at-a-time]
        scripts/framework-mutants.py --only required     # groups 1 and 2
        scripts/framework-mutants.py --only sample       # group 3
        scripts/framework-mutants.py --names FILE        # exactly the mutants named in FILE
Needs:  cargo install cargo-mutants --version 27   (see docs/mutation-testing.md)
--in-place mutates the working tree itself (faster: no copy, a warm target/), so use it
only in a spare worktree (`git worktree add --detach ../spare HEAD`).
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

PACKAGES = {"sim/": "sutra-sim-core", "shrink/": "sutra-sim-shrink"}
SHRINKER_CORE = "shrink/src/search.rs"
LANE = "sim/src/lane.rs"
NODES = "sim/src/executor/nodes.rs"
PAUSE_RESUME = re.compile(r" in (pause|resume)$| (pause|resume) with \(\)$")


def listed(package):
    out = subprocess.run(["cargo", "mutants", "--list", "--json", "--package", package],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"cargo mutants --list failed:\n{out.stderr}")
    return [m["name"] for m in json.loads(out.stdout)]


def package_of(name):
    return next(p for prefix, p in PACKAGES.items() if name.startswith(prefix))


def required(name):
    file = name.split(":", 1)[0]
    return file in (SHRINKER_CORE, LANE) or (file == NODES and PAUSE_RESUME.search(name) is not None)


def run_mutants(label, package, names, output, a, baseline=True):
    """One cargo-mutants run over `names` of `package`; returns the outcome rows."""
    output.mkdir(parents=True, exist_ok=True)
    regex = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    # The files as well as the names: cargo-mutants 27.1 applies neither --re nor
    # --exclude-re to its struct-field deletions, but it does apply --file.
    files = [arg for f in sorted({n.split(":", 1)[0] for n in names}) for arg in ("--file", f)]
    command = [
        "cargo", "mutants", "--package", package, *files, "--re", regex,
        "--timeout", str(a.timeout), "--build-timeout", str(a.build_timeout),
        "--no-shuffle", "--output", str(output),
    ]
    if not baseline:
        command += ["--baseline", "skip"]
    # One mutant at a time: in place there is only one tree to mutate anyway.
    command += ["--in-place"] if a.in_place else ["--jobs", "1"]
    if a.test_args:
        command += ["--", *a.test_args.split()]
    subprocess.run(command, check=False)
    outcomes = json.loads((output / "mutants.out" / "outcomes.json").read_text())
    rows = []
    for o in outcomes["outcomes"]:
        scenario = o.get("scenario")
        if isinstance(scenario, dict) and "Mutant" in scenario:
            rows.append((label, o.get("summary"), scenario["Mutant"]["name"]))
    return rows


def run_group(label, names, a):
    """Runs cargo-mutants over `names`: one run per package, or with --one-at-a-time one
    run per mutant in the order of `names` (so a run stopped early has tested a prefix of
    that order); returns the outcome rows."""
    rows = []
    if a.one_at_a_time:
        for i, name in enumerate(names):
            package = package_of(name)
            print(f"[{label}] {i + 1}/{len(names)} {name}", flush=True)
            output = Path(a.output) / f"{label}-{i:04}"
            rows += run_mutants(label, package, [name], output, a, baseline=False)
        return rows
    for package in sorted({package_of(n) for n in names}):
        mine = sorted(n for n in names if package_of(n) == package)
        output = Path(a.output) / f"{label}-{package}"
        print(f"[{label}] {len(mine)} mutants of {package} -> {output}", flush=True)
        rows += run_mutants(label, package, mine, output, a)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sample", default="60", help="mutants drawn from the rest, or 'all'")
    p.add_argument("--seed", type=int, default=1, help="seed of the draw")
    p.add_argument("--timeout", type=int, default=240, help="seconds per mutant's tests")
    p.add_argument("--build-timeout", type=int, default=900, help="seconds per mutant's build")
    p.add_argument("--output", default="target/framework-mutants")
    p.add_argument("--only", choices=["required", "sample"])
    p.add_argument("--names", help="a file of mutant names (one a line) to run instead of the groups")
    p.add_argument("--in-place", action="store_true", help="mutate this tree (a spare worktree only)")
    p.add_argument("--one-at-a-time", action="store_true",
                   help="the sample in a random order (of --seed), one cargo-mutants run per mutant, no baseline: "
                        "stopped early, it has tested a random subset")
    p.add_argument("--test-args", help="arguments for cargo test, e.g. '--test lane_reports' (to show which test kills)")
    a = p.parse_args()
    os.chdir(Path(__file__).resolve().parent.parent)

    names = sorted(set(listed("sutra-sim-core") + listed("sutra-sim-shrink")))
    groups = []
    if a.names:
        wanted = {line.strip() for line in Path(a.names).read_text().splitlines() if line.strip()}
        unknown = wanted - set(names)
        if unknown:
            sys.exit(f"not in cargo-mutants' list: {sorted(unknown)}")
        groups.append(("named", sorted(wanted)))
    else:
        must = [n for n in names if required(n)]
        rest = [n for n in names if not required(n)]
        count = len(rest) if a.sample == "all" else min(int(a.sample), len(rest))
        drawn = sorted(random.Random(a.seed).sample(rest, count))
        if a.one_at_a_time:
            random.Random(a.seed).shuffle(drawn)
        print(f"{len(names)} mutants: {len(must)} required, {len(drawn)} of the other {len(rest)} drawn with seed {a.seed}")
        if a.only != "sample":
            groups.append(("required", must))
        if a.only != "required":
            groups.append(("sample", drawn))
    rows = [row for label, group in groups for row in run_group(label, group, a)]
    for label, summary, name in sorted(rows):
        print(f"{label:9} {summary:13} {name}")
    summaries = ("CaughtMutant", "MissedMutant", "Timeout", "Unviable")
    for label in sorted({r[0] for r in rows}) + ["total"]:
        mine = [r for r in rows if label in ("total", r[0])]
        counts = {s: sum(1 for r in mine if r[1] == s) for s in summaries}
        print(json.dumps({"group": label, "mutants": len(mine), **counts}))


if __name__ == "__main__":
    main()
