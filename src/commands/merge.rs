//! `sutra-sim merge`: shard reports joined into one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sutra_sim::files::read_text_bounded;
use sutra_sim::report::{SweepReport, REPORT_BYTES_MAX};

use super::*;

pub fn merge(paths: &[PathBuf], output: &PathBuf) -> Outcome {
    let inputs: Vec<(&str, &Path)> = paths.iter().map(|p| ("a report to merge", p.as_path())).collect();
    check_outputs(&inputs, &[("-o", Some(output))])?;
    let mut reports = Vec::new();
    for p in paths {
        let text = read_text_bounded(p, REPORT_BYTES_MAX, "sweep report", "REPORT_BYTES_MAX").map_err(Usage)?;
        let r: SweepReport =
            serde_json::from_str(&text).map_err(|e| Usage(format!("{} is not a sweep report: {e}", p.display())))?;
        reports.push(r);
    }
    let merged = SweepReport::merge(&reports).map_err(Usage)?;
    let mut lost = LostOutputs::default();
    lost.keep(write_report_files(&merged, Some(output), None));
    print!("{}", merged.summary());
    // A merge with shards missing is not green: exit 1, like a failure, so CI notices.
    let code =
        if merged.violations == 0 && merged.missing_shards.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    Ok(lost.exit(code))
}
