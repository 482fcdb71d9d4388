//! `sutra-sim merge`: shard reports joined into one.

use std::path::PathBuf;
use std::process::ExitCode;

use sutra_sim::report::SweepReport;

use super::*;

pub fn merge(paths: &[PathBuf], output: &PathBuf) -> Outcome {
    check_outputs(&[("-o", Some(output))])?;
    if let Some(input) = paths.iter().find(|p| sutra_sim::files::same_file(p, output)) {
        return Err(Usage(format!("-o {} is one of the reports to merge: write the merge elsewhere", input.display())));
    }
    let mut reports = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p).map_err(|e| Usage(format!("cannot read {}: {e}", p.display())))?;
        let r: SweepReport =
            serde_json::from_str(&text).map_err(|e| Usage(format!("{} is not a sweep report: {e}", p.display())))?;
        reports.push(r);
    }
    let merged = SweepReport::merge(&reports).map_err(Usage)?;
    write_report_files(&merged, Some(output), None)?;
    print!("{}", merged.summary());
    // A merge with shards missing is not green: exit 1, like a failure, so CI notices.
    Ok(if merged.violations == 0 && merged.missing_shards.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
