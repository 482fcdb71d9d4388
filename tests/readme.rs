//! The README, as a new user reads it, still holds, and so do the docs pages it links: its
//! walk-through code is `examples/migration_owner.rs`, the outputs it shows are what that
//! code prints, the `sutra-sim` commands the pages show run and take the flags they show,
//! the files they name exist, and every output they quote (`snapshot`) is what its command
//! prints today.
//!
//! When this fails after a change, regenerate the quoted outputs from real runs
//! (`SUTRA_SIM_BLESS=1 cargo test --test readme`; the failure message shows the diff)
//! rather than editing this test.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use sutra_sim::plugin::{CheckerSet, Mutant};
use sutra_sim::sweep::{self, SweepPlan};
use sutra_sim::testing::SimTest;

mod common;
mod snapshot;
use common::sutra_sim_in;

/// A scratch directory of this file's own for test `name`.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("readme", name)
}

#[allow(dead_code)]
#[path = "../examples/migration_owner.rs"]
mod migration_owner;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The README's section that starts with `heading`.
fn section(text: &str, heading: &str) -> String {
    let start = text.find(heading).unwrap_or_else(|| panic!("README has no {heading:?}"));
    let rest = &text[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The fenced blocks of `language` in `text`.
fn blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&fence) {
        let body = &rest[at + fence.len()..];
        let end = body.find("```").expect("a closed fence");
        out.push(body[..end].to_string());
        rest = &body[end + 3..];
    }
    out
}

#[test]
fn the_walk_through_code_is_the_example_file() {
    let walk = section(&readme(), "## Write your own invariant");
    let example = std::fs::read_to_string(root().join("examples/migration_owner.rs")).unwrap();
    let code = blocks(&walk, "rust");
    assert_eq!(code.len(), 3, "the walk-through shows the file in three pieces");
    for block in code {
        let block = block.strip_prefix("// examples/migration_owner.rs\n").unwrap_or(&block);
        assert!(example.contains(block), "examples/migration_owner.rs lacks this README block:\n{block}");
    }
}

/// The walk-through's sample failure, as its marker names it.
const WALK_THROUGH_FAILURE: &str = "SimTest::scenario(\"migration\").seeds(0..20), mutant migrate-with-lane-owner";

#[test]
fn the_walk_through_failure_is_what_simtest_prints() {
    let readme_path = root().join("README.md");
    let failure = SimTest::scenario("migration")
        .seeds(0..20)
        .checker(migration_owner::migration_owner_is_distinct())
        .only_checkers(["migration-owner-is-distinct"])
        .mutant(Mutant::MigrateWithLaneOwner)
        .try_run()
        .unwrap_err()
        .to_string();
    // Every line but the replay command, which names the test that ran (here, this one):
    // the README's names the walk-through's test, for the seed this run failed on.
    let (got, got_replay) = failure.trim_end().rsplit_once('\n').unwrap();
    let seed = got.lines().next().unwrap().split("seed ").nth(1).unwrap().split(',').next().unwrap();
    let replay = format!(
        "  SUTRA_SIM_SEED={seed} cargo test -p sutra-sim --example migration_owner -- tests::catches_a_migration_under_a_lane_owner --exact"
    );
    assert!(got_replay.trim_start().starts_with(&format!("SUTRA_SIM_SEED={seed} cargo test")), "{got_replay}");
    snapshot::check_exact(&readme_path, WALK_THROUGH_FAILURE, &format!("{got}\n{replay}\n"));
}

/// The summary's first line and per-checker counts for the walk-through's sweep.
fn walk_through_sweep(mutant: Option<Mutant>) -> String {
    let checkers = CheckerSet::built_in()
        .with(migration_owner::migration_owner_is_distinct())
        .only(["migration-owner-is-distinct"])
        .unwrap();
    let scenarios = sutra_sim::scenario_arg::resolve_with("all", &checkers).unwrap();
    let plan = SweepPlan {
        scenarios,
        start: 0,
        count: 200,
        shard: None,
        mutant,
        strategy: None,
        jobs: 2,
        time_budget: None,
        checkers,
    };
    let (results, early) = sweep::run(&plan, &AtomicBool::new(false), &|_, _| {});
    sweep::report(&plan, &results, Duration::from_secs(1), early).summary()
}

#[test]
fn the_walk_through_sweep_prints_what_the_readme_says() {
    let walk = section(&readme(), "## Write your own invariant");
    let commands = blocks(&walk, "sh").join("");
    let claim = |flag: &str| -> Vec<String> {
        let line = commands
            .lines()
            .find(|l| l.contains("--example migration_owner") && l.contains(flag))
            .unwrap_or_else(|| panic!("no sweep line with {flag:?}"));
        line.split('#').nth(1).unwrap().split('…').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    for (mutant, flag) in [(None, "# GREEN"), (Some(Mutant::MigrateWithLaneOwner), "migrate-with-lane-owner")] {
        let summary = walk_through_sweep(mutant);
        for piece in claim(flag) {
            if summary.contains(&piece) {
                continue;
            }
            // Blessing: the same words with this run's figures, if the summary has them.
            match snapshot::same_words_other_figures(&summary, &piece).filter(|_| snapshot::blessing()) {
                Some(now) => snapshot::replace_once(&root().join("README.md"), &piece, &now),
                None => panic!(
                    "the README claims {piece:?}; the sweep printed:\n{summary}\n\
                     If the change is meant: SUTRA_SIM_BLESS=1 cargo test --test readme"
                ),
            }
        }
    }
}

#[test]
fn the_replay_example_and_the_shrink_walk_through_run_as_shown() {
    let text = readme();
    let dir = scratch("shrink");
    // "Replaying a seed": the example replay line fails with exit 1 and prints its own replay line.
    let replay_line = "sutra-sim run --scenario smoke --seed 204 --mutant sweeper-parses-owner";
    assert!(text.contains(replay_line));
    let args: Vec<&str> = replay_line.split(' ').skip(1).collect();
    let (code, out, _) = sutra_sim_in(&dir, &args);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("replay: {replay_line}")), "{out}");
    // "Shrinking and replaying a failure", line by line.
    let shrinking = section(&text, "## Shrinking and replaying a failure");
    let lines: Vec<String> = blocks(&shrinking, "sh")
        .concat()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| l.starts_with("sutra-sim "))
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (line, code_wanted, needle) in [
        (&lines[0], 1, "saved ppo.toml"),
        (&lines[1], 1, "REPRODUCED"),
        (&lines[2], 1, "REPRODUCED"),
        (&lines[3], 1, "timeline written to ppo.json"),
    ] {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        let (code, out, err) = sutra_sim_in(&dir, &args);
        assert_eq!(code, code_wanted, "{line}: {out}{err}");
        assert!(out.contains(needle), "{line}: {out}");
    }
}

/// The README and the docs pages its table links, each as (path, text).
fn pages() -> Vec<(std::path::PathBuf, String)> {
    let text = readme();
    let mut out = vec![(root().join("README.md"), text.clone())];
    for link in links(&text).into_iter().filter(|l| l.starts_with("docs/") && l.ends_with(".md")) {
        let path = root().join(&link);
        let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("README links {link}: {e}"));
        out.push((path, page));
    }
    out
}

/// The targets of the Markdown links `[..](target)` in `text`, without `#anchors`.
fn links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')'))
        .map(|(target, _)| target.split('#').next().unwrap().to_string())
        .filter(|target| !target.is_empty())
        .collect()
}

/// Every command line the page's `sh` blocks show, comments cut, with `cargo run --release
/// [-q] --` read as the `sutra-sim` it runs.
fn command_lines(page: &str) -> Vec<String> {
    blocks(page, "sh")
        .iter()
        .flat_map(|block| block.lines().map(str::to_string).collect::<Vec<_>>())
        .map(|line| line.split(" #").next().unwrap().trim().to_string())
        .map(|line| {
            let line = line.replace("cargo run --release -q -- ", "sutra-sim ");
            line.replace("cargo run --release -- ", "sutra-sim ")
        })
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// The `sutra-sim` commands among `lines`: (subcommand, its words after it, the line).
fn sutra_sim_commands(lines: &[String]) -> Vec<(String, Vec<String>, String)> {
    lines
        .iter()
        .filter_map(|line| {
            let mut words = line.strip_prefix("sutra-sim ")?.split_whitespace().map(str::to_string);
            Some((words.next()?, words.collect(), line.clone()))
        })
        .collect()
}

/// `sutra-sim COMMAND --help`, once per command.
fn help(command: &str) -> String {
    static HELP: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    let mut cache = HELP.lock().unwrap();
    if let Some((_, text)) = cache.iter().find(|(c, _)| c == command) {
        return text.clone();
    }
    let (code, text, err) = sutra_sim_in(root(), &[command, "--help"]);
    assert_eq!(code, 0, "`sutra-sim {command} --help`: {err}");
    cache.push((command.to_string(), text.clone()));
    text
}

/// The options `help`'s usage line requires, each with its short form if it has one.
fn required_options(help: &str) -> Vec<Vec<String>> {
    let usage = help.lines().find(|l| l.starts_with("Usage:")).expect("a usage line");
    let mut depth = 0;
    let mut required = Vec::new();
    for word in usage.split_whitespace() {
        if depth == 0 && word.starts_with("--") {
            let short = help
                .lines()
                .find_map(|l| {
                    l.trim()
                        .strip_suffix(&format!(", {word}"))
                        .or_else(|| l.trim().split_once(&format!(", {word} ")).map(|(short, _)| short))
                })
                .map(str::to_string);
            required.push([Some(word.to_string()), short].into_iter().flatten().collect());
        }
        depth += word.matches('[').count() as i32 - word.matches(']').count() as i32;
    }
    required
}

#[test]
fn every_command_shown_takes_its_flags_and_has_its_required_options() {
    for (path, page) in pages() {
        for (command, words, line) in sutra_sim_commands(&command_lines(&page)) {
            let help = help(&command);
            for flag in words.iter().filter(|w| w.starts_with('-')) {
                let flag = flag.split('=').next().unwrap();
                let taken = help.split(|c: char| c.is_whitespace() || c == ',').any(|w| w == flag);
                assert!(taken, "{}: `{line}`: `sutra-sim {command}` takes no {flag}", path.display());
            }
            for forms in required_options(&help) {
                assert!(
                    words.iter().any(|w| forms.contains(w)),
                    "{}: `{line}` lacks {}, which `sutra-sim {command}` requires",
                    path.display(),
                    forms.join(" / ")
                );
            }
        }
    }
}

/// A shown command line made cheap to run, or `None` for one the test does not run: one
/// with a placeholder (`<file>`, `...`) or a benchmark (`bench`, whose figures take
/// minutes; `bench --explore` runs one start of the maze). Seed and run counts become 4
/// (enough for the README's three shards), `variants` saves its first failures as
/// recorded, and `list a|b` is one line per word.
fn tiny(command: &str, words: &[String]) -> Option<Vec<Vec<String>>> {
    if words.iter().any(|w| w.contains('<') || w.contains("...") || w.contains('…')) {
        return None;
    }
    let mut args = vec![command.to_string()];
    let mut words = words.iter();
    while let Some(word) = words.next() {
        args.push(word.clone());
        if word == "--count" || word == "--runs" {
            words.next();
            args.push("4".into());
        }
    }
    let counted = ["sweep", "mutants", "variants"];
    if counted.contains(&command) && !args.iter().any(|a| a == "--count") {
        args.extend(["--count".into(), "4".into()]);
    }
    match command {
        "bench" if !args.iter().any(|a| a == "--explore") => return None,
        "bench" => args.extend(["--only", "maze", "--starts", "1"].map(String::from)),
        "variants" => args.push("--no-shrink".into()),
        "list" if args.len() == 2 && args[1].contains('|') => {
            return Some(args[1].split('|').map(|what| vec!["list".to_string(), what.to_string()]).collect());
        }
        _ => {}
    }
    Some(vec![args])
}

/// For a sweep of shard `0/N` writing `shard-0.json`, the sweeps of shards 1..N alike (the
/// README's comment says so), so the `merge` line after it has every shard to join.
fn with_sibling_shards(args: Vec<String>) -> Vec<Vec<String>> {
    let Some(at) = args.iter().position(|a| a == "--shard") else { return vec![args] };
    let Some(n) = args[at + 1].strip_prefix("0/").and_then(|n| n.parse::<usize>().ok()) else { return vec![args] };
    (0..n)
        .map(|i| {
            args.iter().map(|a| a.replace("0/", &format!("{i}/")).replace("shard-0", &format!("shard-{i}"))).collect()
        })
        .collect()
}

#[test]
fn every_command_shown_runs_at_a_tiny_count() {
    for (path, page) in pages() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let dir = scratch(&format!("commands-{name}"));
        // The pages name the corpus by its path from the checkout's root.
        std::os::unix::fs::symlink(root().join("seeds"), dir.join("seeds")).unwrap();
        // "A team's own SQL": the copy of the statements, edited as the README says.
        std::fs::write(dir.join("ours.sql"), ours_sql()).unwrap();
        for (command, words, line) in sutra_sim_commands(&command_lines(&page)) {
            for args in tiny(&command, &words).into_iter().flatten().flat_map(with_sibling_shards) {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (code, out, err) = sutra_sim_in(&dir, &args);
                assert!(
                    code == 0 || code == 1,
                    "{}: `{line}`, run as `sutra-sim {}`, exits {code}:\n{out}{err}",
                    path.display(),
                    args.join(" ")
                );
            }
        }
    }
}

#[test]
fn every_file_the_pages_name_exists() {
    const TOP: [&str; 13] = [
        "examples/",
        "docs/",
        "seeds/",
        "scenarios/",
        "scripts/",
        "tests/",
        "sim/",
        "model/",
        "shrink/",
        "src/",
        "peers/",
        ".github/",
        ".ci/",
    ];
    for (path, page) in pages() {
        let named = page
            .split(|c: char| c.is_whitespace() || "`()[],;:".contains(c))
            .filter(|w| TOP.iter().any(|top| w.starts_with(top)))
            .filter(|w| !w.contains('<') && !w.contains('*'))
            .map(|w| w.trim_end_matches(['.', '…']))
            // A file has an extension, a directory a trailing slash (`seeds/s` is a rate).
            .filter(|w| w.ends_with('/') || w.rsplit('/').next().unwrap().contains('.'));
        for file in named {
            assert!(root().join(file).exists(), "{} names {file}, which does not exist", path.display());
        }
        let dir = path.parent().unwrap();
        for link in links(&page).into_iter().filter(|l| !l.starts_with("http")) {
            assert!(dir.join(&link).exists(), "{} links {link}, which does not exist", path.display());
        }
        // `cargo run --example NAME` and `cargo bench -p CRATE --bench NAME` name files too.
        for line in blocks(&page, "sh").concat().lines() {
            let words: Vec<&str> = line.split(" #").next().unwrap().split_whitespace().collect();
            for pair in words.windows(2) {
                if pair[0] == "--example" {
                    let file = root().join("examples").join(format!("{}.rs", pair[1]));
                    assert!(file.exists(), "{}: `{line}`: no {}", path.display(), file.display());
                }
                if pair[0] == "--bench" {
                    let found = ["sim", "model", "shrink", "."]
                        .iter()
                        .any(|c| root().join(c).join("benches").join(format!("{}.rs", pair[1])).exists());
                    assert!(found, "{}: `{line}`: no bench {}", path.display(), pair[1]);
                }
            }
        }
    }
}

#[test]
fn the_readme_links_every_docs_page() {
    let table = section(&readme(), "## Where to read more");
    let linked = links(&table);
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            assert!(linked.contains(&format!("docs/{name}")), "the README's table does not link docs/{name}");
        }
    }
}

#[test]
fn the_readme_installs_with_the_lock_file() {
    for (path, page) in pages() {
        for line in command_lines(&page).iter().filter(|l| l.starts_with("cargo install") && l.contains("--path")) {
            assert!(line.contains("--locked"), "{}: `{line}` ignores Cargo.lock without --locked", path.display());
        }
    }
}

/// The `[[example]]` entries of `Cargo.toml` that say `test = true`.
fn examples_tested_by_cargo_test() -> Vec<String> {
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml")).unwrap().parse().unwrap();
    let examples = manifest.get("example").and_then(|e| e.as_array()).cloned().unwrap_or_default();
    examples
        .iter()
        .filter(|e| e.get("test").and_then(|t| t.as_bool()) == Some(true))
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_example_with_tests_runs_them_under_cargo_test_workspace() {
    let tested = examples_tested_by_cargo_test();
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if std::fs::read_to_string(&path).unwrap().contains("#[cfg(test)]") {
            assert!(
                tested.contains(&name),
                "examples/{name}.rs has tests, but `cargo test --workspace` skips them: give its \
                 [[example]] entry in Cargo.toml `test = true`"
            );
        }
    }
    // And the README says so, with the entry as Cargo.toml has it.
    let walk = section(&readme(), "## Write your own invariant");
    let entry = blocks(&walk, "toml").into_iter().next().expect("the walk-through shows the [[example]] entry");
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(manifest.contains(&entry), "Cargo.toml lacks the README's entry:\n{entry}");
}

/// Runs `command` (a quoted output's `sutra-sim …` line) in a fresh directory: its stdout.
fn printed_by(command: &str, name: &str) -> String {
    let dir = scratch(name);
    let args: Vec<&str> = command.strip_prefix("sutra-sim ").unwrap().split_whitespace().collect();
    let (code, out, err) = sutra_sim_in(&dir, &args);
    assert!(code == 0 || code == 1, "`{command}` exits {code}: {err}");
    out
}

const DESIGN_MATRIX: &str = "sutra-sim variants --scenario smoke --count 1000 --jobs 2 --no-shrink";

#[test]
fn the_design_matrix_is_what_variants_prints() {
    let page = root().join("docs/design-matrix.md");
    snapshot::check_exact(&page, DESIGN_MATRIX, &printed_by(DESIGN_MATRIX, "variants"));
}

const MUTANT_TABLE: &str = "sutra-sim mutants --count 2000";

/// `mutants` output without its wall-clock column (`, 12 ms`).
fn without_wall_clock(out: &str) -> String {
    out.lines()
        .map(|line| match line.find(" seed(s),").map(|at| at + " seed(s)".len()) {
            Some(at)
                if line[at..]
                    .trim_start_matches([',', ' '])
                    .split_once(" ms")
                    .is_some_and(|(n, _)| n.parse::<u64>().is_ok()) =>
            {
                let rest = line[at..].trim_start_matches([',', ' ']).split_once(" ms").unwrap().1;
                format!("{}{rest}\n", &line[..at])
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

/// A quoted `mutants` line's mutant name (its second word).
fn mutant_of(line: &str) -> &str {
    line.split_whitespace().nth(1).unwrap_or("")
}

#[test]
fn the_mutant_table_is_what_mutants_prints() {
    let page = root().join("docs/mutants.md");
    if snapshot::full() {
        // 4 minutes of CPU in a debug build: every seed the table counts.
        return snapshot::check_exact(&page, MUTANT_TABLE, &without_wall_clock(&printed_by(MUTANT_TABLE, "mutants")));
    }
    let quoted = snapshot::quoted_in(&page, MUTANT_TABLE).body;
    let rows: Vec<&str> = quoted.lines().filter(|l| l.starts_with("killed") || l.starts_with("SURVIVED")).collect();
    let names: Vec<&str> = rows.iter().map(|l| mutant_of(l)).collect();
    let known: Vec<&str> = sutra_sim_model::MUTANTS.iter().map(|m| m.name).collect();
    assert_eq!(names, known, "docs/mutants.md lists other mutants than the model has; refresh it: SUTRA_SIM_BLESS=1 cargo test --test readme");
    // The full run sweeps smoke first: a kill there is what a sweep of smoke alone prints.
    let count = 2000;
    let smoke = without_wall_clock(&printed_by(
        &format!("sutra-sim mutants --scenario smoke --count {count}"),
        "mutants-smoke",
    ));
    let scenarios: Vec<&str> = sutra_sim_model::scenario::BUILT_IN.iter().map(|(n, _)| *n).collect();
    for (row, now) in rows.iter().zip(smoke.lines().filter(|l| l.starts_with("killed") || l.starts_with("SURVIVED"))) {
        if now.starts_with("killed") {
            assert!(
                *row == now,
                "docs/mutants.md (-) and a sweep of smoke (+) differ:\n{}",
                snapshot::line_diff(row, now)
            );
            continue;
        }
        // Killed past smoke: that run kills it, and the seed count is where it lies.
        let words: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(words[0], "killed", "docs/mutants.md: {row}");
        let (checker, tried) = (words[3], words[5].parse::<u64>().unwrap());
        let (scenario, seed) =
            (words[7].trim_start_matches('('), words[9].trim_end_matches(')').parse::<u64>().unwrap());
        let at = scenarios.iter().position(|s| *s == scenario).unwrap();
        assert!(at > 0, "docs/mutants.md: {row}, but {count} seeds of smoke do not kill it: {now}");
        assert_eq!(tried, at as u64 * count + seed + 1, "docs/mutants.md: {row}");
        let info = Mutant::parse(words[1]).unwrap().info();
        let outcome =
            sutra_sim_model::run_for_kill(&sutra_sim_model::Scenario::built_in(scenario).unwrap(), seed, info).unwrap();
        assert!(
            info.killed_by(&outcome.verdict) && outcome.verdict.checker() == Some(checker),
            "docs/mutants.md: {row}, but that run: {:?}",
            outcome.verdict
        );
    }
    let correct = quoted.lines().last().unwrap();
    assert_eq!(
        correct,
        format!("correct model: {} seed(s), 0 failing", scenarios.len() as u64 * count),
        "docs/mutants.md"
    );
}

/// Every quoted output in the pages is one a test here checks.
#[test]
fn every_quoted_output_is_checked() {
    let checked = [DESIGN_MATRIX, MUTANT_TABLE, WALK_THROUGH_FAILURE];
    for (path, page) in pages() {
        for quoted in snapshot::quoted(&page) {
            assert!(
                checked.contains(&quoted.command.as_str()),
                "{} quotes `{}`, which no test checks",
                path.display(),
                quoted.command
            );
        }
    }
}

#[test]
fn the_exploration_figures_are_dated_and_their_command_still_prints_them() {
    let page = std::fs::read_to_string(root().join("docs/exploration.md")).unwrap();
    assert!(page.contains("Measured on 20") && page.contains("`sutra-sim bench --explore --only NAME --json`"));
    // The table's columns are the fields one start of one benchmark still prints.
    let (code, out, err) = sutra_sim_in(root(), &["bench", "--explore", "--only", "maze", "--starts", "1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let maze = &doc["benchmarks"][0];
    assert_eq!(maze["name"], "maze", "{out}");
    for field in ["brute_force_runs", "sweep_runs_median", "explore_runs_median"] {
        assert!(maze[field].is_number(), "`bench --explore --json` has no {field}: {out}");
    }
    // Each deep mutant's row names the scenario the benchmark measures it in.
    for (mutant, scenario) in sutra_sim::bench_explore::DEEP_BENCH_SCENARIOS {
        assert!(
            page.contains(&format!("`{mutant}` ({scenario})")),
            "docs/exploration.md has no row for {mutant} in {scenario}"
        );
    }
}

#[test]
fn the_performance_figures_are_dated_and_name_what_their_commands_print() {
    let text = section(&readme(), "## How fast");
    assert!(text.contains("Measured on ") && text.contains("(docs/performance.md)"), "{text}");
    // Each figure names the JSON field its command prints; the fields are written in the
    // bench command's source (running `bench` itself takes tens of seconds).
    let source = std::fs::read_to_string(root().join("src/commands/bench.rs")).unwrap();
    for field in ["seeds_per_second", "of_bare_events", "largest_of_smallest"] {
        assert!(text.contains(&format!("{field}`")), "the README's figures do not name {field}");
        assert!(source.contains(&format!("\"{field}\"")), "`sutra-sim bench` no longer prints {field}");
    }
    // The worlds it describes are the ones `bench --scale` runs, smallest first.
    let worlds = sutra_sim::bench_scale::WORLDS;
    let (first, most) = (worlds[0], worlds.iter().max_by_key(|w| w.instances * w.steps).unwrap());
    assert_eq!((first.replicas, first.instances), (1, 6));
    assert_eq!(most.instances, 6_000);
    assert!(worlds.iter().any(|w| (w.replicas, w.instances) == (32, 192)) && worlds.iter().any(|w| w.steps == 300));
    assert!(
        text.contains(
            "from 1 replica and 6 instances up to 32 replicas and\n192 instances, 6,000 instances, and 300 steps"
        ),
        "{text}"
    );
}

/// `sql/statements.sql` edited as "A team's own SQL, end to end" says: the commit's WHERE
/// without `AND owner = $2`.
fn ours_sql() -> String {
    let text = std::fs::read_to_string(root().join("sql/statements.sql")).unwrap();
    let start = text.find("-- name: commit\n").unwrap();
    let end = start + text[start..].find("-- name: step_forget").unwrap();
    let commit = text[start..end].replace("WHERE id = $1 AND owner = $2", "WHERE id = $1 AND $2 = $2");
    assert_ne!(commit, text[start..end], "the README's edit applies");
    format!("{}{}{}", &text[..start], commit, &text[end..])
}

#[test]
fn the_own_sql_walk_through_runs_as_shown() {
    let text = readme();
    let section = section(&text, "## A team's own SQL, end to end");
    assert!(section.contains("drop `AND owner = $2`"), "the README describes the edit the test makes");
    let dir = scratch("own-sql");
    std::fs::write(dir.join("ours.sql"), ours_sql()).unwrap();
    let lines: Vec<String> = command_lines(&section).into_iter().filter(|l| l.starts_with("sutra-sim ")).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let run = |line: &str| {
        let args: Vec<&str> = line.split_whitespace().skip(1).collect();
        sutra_sim_in(&dir, &args)
    };
    let (code, out, _) = run(&lines[0]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("commit-by-owner") && out.contains("--store sqlite --sql ours.sql"), "{out}");
    let (code, out, _) = run(&lines[1]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("replay: sutra-sim run --scenario smoke --seed 1 --store sqlite --sql ours.sql"), "{out}");
    let (code, out, err) = run(&lines[2]);
    assert_eq!(code, 1, "{out}{err}");
    std::fs::remove_file(dir.join("ours.sql")).unwrap();
    let (code, out, err) = run(&lines[3]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("REPRODUCED"), "{out}");
}

/// The README's table of the SQL variants: `| \`name\` | section | expected | caught by |`.
fn sql_matrix_rows(section: &str) -> Vec<[String; 4]> {
    let rows = section.lines().filter(|l| l.starts_with("| `sql-"));
    rows.map(|l| {
        let cells: Vec<String> =
            l.trim_matches('|').split(" | ").map(|c| c.trim().trim_matches('`').to_string()).collect();
        [cells[0].clone(), cells[1].clone(), cells[2].clone(), cells[3].clone()]
    })
    .collect()
}

#[test]
fn the_readmes_sql_matrix_is_what_list_variants_says() {
    let section = section(&readme(), "## A team's own SQL, end to end");
    let dir = scratch("sql-matrix");
    let (code, out, err) = sutra_sim_in(&dir, &["list", "variants", "--store", "sqlite", "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let expected: Vec<[String; 4]> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["name"].as_str().unwrap().starts_with("sql-"))
        .map(|v| {
            let text = |key: &str| v[key].as_str().unwrap_or("—").to_string();
            [text("name"), text("spec"), text("expected"), text("caught_by")]
        })
        .collect();
    assert!(expected.len() >= 10, "the SQL variants are listed: {out}");
    assert_eq!(
        sql_matrix_rows(&section),
        expected,
        "the README's SQL matrix rows, against `list variants --store sqlite`"
    );
}

#[test]
fn the_history_pages_example_header_is_what_run_writes_for_smoke_seed_0() {
    // The page shows the header of `run --scenario smoke --seed 0 --history`, without the
    // fields too long to show (`scenario_toml`, `emits`, `complete`; the page says so).
    let dir = scratch("history-header");
    let file = dir.join("smoke-0.jsonl");
    let (code, _, err) =
        sutra_sim_in(&dir, &["run", "--scenario", "smoke", "--seed", "0", "--history", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&file).unwrap();
    let line = written.lines().next().unwrap();
    let (shown_part, long_part) = line.split_once(r#","scenario_toml":"#).expect("the header writes scenario_toml");
    for long in ["emits", "complete"] {
        assert!(
            long_part.contains(&format!(r#""{long}":"#)),
            "the header no longer writes {long}: the page says it does"
        );
    }
    let now = format!("{shown_part}}}");
    let page_path = root().join("docs/history.md");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let shown = page.lines().find(|l| l.starts_with(r#"{"history":"sutra-sim""#)).expect("the page shows a header");
    if shown != now {
        assert!(
            snapshot::blessing(),
            "docs/history.md shows the header\n{shown}\nbut run writes\n{now}\n\
             If the change is meant: SUTRA_SIM_BLESS=1 cargo test --test readme"
        );
        snapshot::replace_once(&page_path, shown, &now);
    }
}
