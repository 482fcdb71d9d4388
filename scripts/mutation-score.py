#!/usr/bin/env python3
"""Mutation score of the model's protocol components against the built-in checkers.

Draws N mutants (cargo-mutants' own list, sampled with a fixed seed) from the files that
implement the protocol, runs each against `model/tests/mutation_sweep.rs` (every built-in
scenario over a fixed seed range), and sorts them by what caught them:

  checker   a checker found a violation (what we want)
  crash     only a crash, a hang or a budget overrun (proves much less)
  missed    every seed passed: the mutant survived
  unviable  it does not build
  timeout   the sweep ran past cargo-mutants' timeout

Usage:  scripts/mutation-score.py [--count 60] [--seed 1] [--seeds-per-scenario 1000]
Needs:  cargo install cargo-mutants   (see docs/mutation-testing.md)
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

# The protocol components: where the rules of spec 000 live.
PROTOCOL_FILES = [
    "model/src/store.rs",
    "model/src/broker.rs",
    "model/src/routing.rs",
    "model/src/admin.rs",
    "model/src/pull.rs",
    "model/src/workload.rs",
    "model/src/replica/*.rs",
]

VERDICT = re.compile(r"SUTRA-MUTATION-VERDICT (\S+)(?: checker=(\S+))?")


def cargo_mutants(args, out=None):
    return subprocess.run(["cargo", "mutants", *args], capture_output=out is None, text=True, check=False)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=60, help="mutants to draw")
    p.add_argument("--seed", type=int, default=1, help="seed of the draw")
    p.add_argument("--seeds-per-scenario", type=int, default=1000)
    p.add_argument("--output", default="target/mutation", help="where cargo-mutants writes mutants.out")
    p.add_argument("--jobs", type=int, default=1, help="mutants built and tested at once")
    a = p.parse_args()

    root = Path(__file__).resolve().parent.parent
    os.chdir(root)
    files = [arg for f in PROTOCOL_FILES for arg in ("-f", f)]
    listed = cargo_mutants(["--list", "--json", "--package", "sutra-sim-model", *files])
    if listed.returncode != 0:
        sys.exit(f"cargo mutants --list failed:\n{listed.stderr}")
    names = sorted({m["name"] for m in json.loads(listed.stdout)})
    drawn = sorted(random.Random(a.seed).sample(names, min(a.count, len(names))))
    print(f"{len(drawn)} of {len(names)} mutant names drawn with seed {a.seed} (a name can cover several mutants)", flush=True)

    regex = "^(" + "|".join(re.escape(n) for n in drawn) + ")$"
    env = dict(os.environ, SUTRA_SIM_MUTATION_SEEDS=str(a.seeds_per_scenario))
    run = subprocess.run(
        [
            "cargo", "mutants", "--package", "sutra-sim-model", *files, "--re", regex,
            "--profile", "mutants", "--jobs", str(a.jobs),
            "--output", a.output, "--no-shuffle",
            "--", "--test", "mutation_sweep", "--", "--include-ignored",
        ],
        env=env, check=False,
    )
    outcomes = json.loads((Path(a.output) / "mutants.out" / "outcomes.json").read_text())
    rows = []
    for o in outcomes["outcomes"]:
        scenario = o.get("scenario")
        if not isinstance(scenario, dict) or "Mutant" not in scenario:
            continue
        name = scenario["Mutant"]["name"] if "name" in scenario["Mutant"] else str(scenario["Mutant"])
        summary = o.get("summary")
        log = Path(a.output) / "mutants.out" / o["log_path"] if o.get("log_path") else None
        text = log.read_text(errors="replace") if log and log.exists() else ""
        verdicts = VERDICT.findall(text)
        if summary == "Unviable":
            kind, by = "unviable", ""
        elif summary == "Timeout":
            kind, by = "timeout", ""
        elif summary == "MissedMutant":
            kind, by = "missed", ""
        elif verdicts and verdicts[-1][0] in ("violation", "coverage"):
            kind, by = "checker", verdicts[-1][1]
        elif verdicts and verdicts[-1][0] != "pass":
            kind, by = "crash", verdicts[-1][0]
        else:
            # The sweep never printed a verdict: a panic in the test harness or a model
            # assertion outside any seed's run.
            kind, by = "crash", "no verdict line"
        rows.append((kind, by, name))
    rows.sort()
    for kind, by, name in rows:
        print(f"{kind:9} {by:24} {name}")
    counts = {k: sum(1 for r in rows if r[0] == k) for k in ("checker", "crash", "missed", "timeout", "unviable")}
    viable = len(rows) - counts["unviable"]
    print(json.dumps({"drawn_names": len(drawn), "mutants": len(rows), "viable": viable, **counts}))
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
