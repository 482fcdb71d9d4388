//! Re-checks a run from its history file alone, with nothing of sutra-sim but the file:
//! only `serde_json` reads it, and the rule is written here from spec 000, not taken from
//! a built-in checker. This is what `--history` is for — anyone can judge a run with a
//! checker of their own, in any language (schema: `docs/history.md`).
//!
//! The rule: **a commit is accepted only from the current claim** — the owner and the
//! epoch it names are those of the row's claim as the store's own grants and writes left
//! it (spec 000: the store accepts a commit from the claim's holder only; claim epochs are
//! its fencing tokens). The current claim is rebuilt from `claim-granted` (owner, epoch)
//! and `row-written` (the row's owner and epoch after every write: commits, releases,
//! sweeps, migrations) — the check never reads the `current_epoch` or `owner_before` the
//! store wrote beside the commit, so a store that misreports those is caught too.
//!
//! ```text
//! sutra-sim run --scenario smoke --seed 3 --mutant per-process-owner --history run.jsonl
//! cargo run --example history_check -- run.jsonl
//! ```
//! Exits 0 if the rule holds over the file, 1 with the first breach, 2 on a bad file.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::Value;

/// The row's claim as the witnessed writes left it: owner and epoch (`None`: unclaimed).
type Claim = Option<(u64, u64)>;

/// What a re-check found.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    /// Accepted commits judged.
    pub commits: u64,
    /// The first commit accepted from anything but the current claim, described.
    pub breach: Option<String>,
}

/// Re-checks the rule over a history file's text. Errors on a file that is not a version-1
/// sutra-sim history.
pub fn check(text: &str) -> Result<Report, String> {
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().ok_or("empty file")?).map_err(|e| e.to_string())?;
    if header["history"] != "sutra-sim" || header["version"] != 1 {
        return Err(format!("not a version-1 sutra-sim history: {header}"));
    }
    let mut claims: BTreeMap<u64, Claim> = BTreeMap::new();
    let mut commits = 0;
    for (i, line) in lines.enumerate() {
        let e: Value = serde_json::from_str(line).map_err(|err| format!("line {}: {err}", i + 2))?;
        let number = |key: &str| e[key].as_u64();
        let Some(instance) = number("instance") else { continue };
        match e["kind"].as_str() {
            Some("claim-granted") => {
                claims.insert(
                    instance,
                    Some((number("owner").ok_or("grant without owner")?, number("epoch").unwrap_or(0))),
                );
            }
            Some("row-written") => {
                let claim = number("owner").map(|owner| (owner, number("epoch").unwrap_or(0)));
                claims.insert(instance, claim);
            }
            Some("commit-accepted") => {
                commits += 1;
                let named = (number("owner").ok_or("commit without owner")?, number("epoch").unwrap_or(0));
                let current = claims.get(&instance).copied().flatten();
                if current != Some(named) {
                    let held = match current {
                        Some((owner, epoch)) => format!("owner {owner} epoch {epoch}"),
                        None => "nobody".to_string(),
                    };
                    let breach = format!(
                        "seq {} at {}ns: the store accepted a commit of instance {instance} from owner {} under epoch {}, but the claim was held by {held}",
                        e["seq"], e["time_ns"], named.0, named.1
                    );
                    return Ok(Report { commits, breach: Some(breach) });
                }
            }
            _ => {}
        }
    }
    Ok(Report { commits, breach: None })
}

/// Most bytes of a history this reads (as sutra-sim's own `HISTORY_BYTES_MAX`): a file of
/// unknown size, a FIFO or `/dev/zero`, is never read without end.
const HISTORY_BYTES_MAX: u64 = 1 << 30;

/// The file's text, refused past [`HISTORY_BYTES_MAX`].
fn read_bounded(path: &str) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(HISTORY_BYTES_MAX + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > HISTORY_BYTES_MAX {
        return Err(format!("more than {HISTORY_BYTES_MAX} bytes, the most a history may hold"));
    }
    Ok(text)
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: history_check HISTORY.jsonl");
        return ExitCode::from(2);
    };
    let report = read_bounded(&path).and_then(|text| check(&text));
    match report {
        Ok(Report { commits, breach: None }) => {
            println!("{commits} accepted commits, each from the current claim");
            ExitCode::SUCCESS
        }
        Ok(Report { breach: Some(breach), .. }) => {
            println!("BREACH: {breach}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::from(2)
        }
    }
}
