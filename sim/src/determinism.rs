//! The determinism self-check: run one seed twice and name the first difference.
//!
//! Everything sutra-sim promises — a failing seed replays bit for bit, a shrunk tape is a
//! simpler run of the same world, parallel sweeps equal serial ones — rests on the same
//! configuration always giving the same run. Determinism is checked, not hoped for: a
//! model that reads a wall clock, iterates a randomly seeded hash map, or keeps state in a
//! static between runs is caught here, and the report points at the first event where the
//! two runs parted, which is where to start looking.

use crate::checker::Checker;
use crate::run::{simulate, Outcome, RunConfig};
use crate::trace::{first_divergence, Divergence, EventKind, Tracer};

/// Runs `config` twice, each time with fresh checkers from `make_checkers` and a fresh world
/// from `setup`, keeping both traces, and compares them.
///
/// Returns the fingerprint if the runs are identical. Otherwise returns the first event
/// where the traces differ; if the events agree but the runs still differ silently (another
/// schedule, another verdict, a different number of polls or draws), the divergence is
/// placed just past the last event and describes both ends of run.
pub fn check_determinism<K, V>(
    config: &RunConfig,
    make_checkers: impl Fn() -> Vec<Box<dyn Checker<K, V>>>,
    setup: impl Fn(&Tracer<K>) -> V,
) -> Result<u64, Divergence>
where
    K: EventKind + PartialEq,
{
    let mut config = config.clone();
    config.keep_trace = true;
    let first = simulate(&config, make_checkers(), &setup);
    let second = simulate(&config, make_checkers(), &setup);
    if let Some(divergence) = first_divergence(&first.trace, &second.trace) {
        return Err(divergence);
    }
    if first.verdict != second.verdict
        || first.polls != second.polls
        || first.sim_time != second.sim_time
        || first.tape != second.tape
    {
        let draw = first.tape.0.iter().zip(&second.tape.0).position(|(a, b)| a != b);
        let draw = draw.or((first.tape.len() != second.tape.len()).then(|| first.tape.len().min(second.tape.len())));
        return Err(Divergence {
            seq: first.events,
            first: Some(end_of_run(&first, draw)),
            second: Some(end_of_run(&second, draw)),
        });
    }
    debug_assert_eq!(first.fingerprint, second.fingerprint, "identical traces have identical fingerprints");
    Ok(first.fingerprint)
}

/// How a run ended, for a divergence that shows in no event.
fn end_of_run<K>(outcome: &Outcome<K>, first_differing_draw: Option<usize>) -> String {
    let draws = match first_differing_draw {
        Some(i) => {
            format!("{} draws, the first to differ being #{i} = {:?}", outcome.tape.len(), outcome.tape.0.get(i))
        }
        None => format!("{} draws", outcome.tape.len()),
    };
    format!(
        "end of run after the same events: verdict {}, {} polls, simulated time {}, {draws}",
        outcome.verdict, outcome.polls, outcome.sim_time
    )
}
