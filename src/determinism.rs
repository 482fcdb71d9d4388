//! The determinism self-check users can run (`run --check-determinism`, `sweep
//! --check-determinism RATE`): a seed run twice must give the same run, event for event.
//!
//! Replay, shrinking and `--jobs` all rest on that. A user's checker or a model change
//! that iterates a `HashMap`, reads a wall clock or keeps state in a static breaks it
//! silently — every run still looks fine on its own. This runs a seed twice with
//! [`sutra_sim_core::check_determinism`] (fresh checkers and a fresh world each time) and
//! names the first event where the two runs parted. A sweep re-checks a share of its seeds
//! this way (FoundationDB re-runs a share of its simulations for the same reason); which
//! seeds is decided by a hash of the scenario and seed, so the choice is the same for any
//! `--jobs` and any shard.

use sutra_sim_core::trace::Divergence;
use sutra_sim_core::RunConfig;
use sutra_sim_model::{RunOptions, Scenario};

use crate::plugin::{CheckerError, CheckerSet};

/// Parts per million, the unit of a re-check rate.
pub const PPM: u32 = 1_000_000;

/// Runs `scenario` under `options` twice, judged by fresh `checkers` each time, and
/// compares the runs: the fingerprint if they are the same, the first divergence if not.
pub fn check(
    checkers: &CheckerSet,
    scenario: &Scenario,
    options: &RunOptions,
) -> Result<Result<u64, Divergence>, CheckerError> {
    let factories = checkers.factories_for(scenario)?;
    // The configuration `sutra_sim_model::run_with` builds for these options.
    let config = RunConfig {
        entropy: options.entropy.clone(),
        strategy: sutra_sim_model::strategy_for(scenario, options),
        budgets: scenario.budgets(),
        stall_bound: Some(scenario.run.stall_bound),
        keep_trace: true,
        marks: false,
    };
    Ok(sutra_sim_core::check_determinism(
        &config,
        || factories.iter().map(|f| f()).collect(),
        |tracer| sutra_sim_model::setup(scenario, options.mutant, tracer),
    ))
}

/// Parses a re-check rate: a percentage (`1%`, `0.5%`) or a fraction (`0.01`), from 0 to 1.
/// Returns parts per million.
pub fn parse_rate(text: &str) -> Result<u32, String> {
    let bad = || format!("{text:?} is not a rate: write a percentage like 1% or a fraction like 0.01, from 0 to 1");
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(p) => (p.trim(), 10_000.0),
        None => (text.trim(), 1_000_000.0),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let ppm = value * scale;
    if !ppm.is_finite() || !(0.0..=f64::from(PPM)).contains(&ppm) {
        return Err(bad());
    }
    Ok(ppm.round() as u32)
}

/// True if the seed `seed` of the scenario named `scenario` is one a sweep re-checks at
/// `rate_ppm`: a hash of the two, so the same seeds are chosen whatever the jobs or shard.
pub fn chosen(scenario: &str, seed: u64, rate_ppm: u32) -> bool {
    if rate_ppm == 0 {
        return false;
    }
    let mut f = sutra_sim_core::trace::Fingerprint::default();
    f.write(scenario.as_bytes());
    f.write_u64(seed);
    f.value() % u64::from(PPM) < u64::from(rate_ppm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_percentages_or_fractions() {
        assert_eq!(parse_rate("1%"), Ok(10_000));
        assert_eq!(parse_rate("0.5%"), Ok(5_000));
        assert_eq!(parse_rate("0.01"), Ok(10_000));
        assert_eq!(parse_rate("100%"), Ok(PPM));
        for bad in ["", "x", "-1%", "101%", "2", "NaN"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn about_the_rate_of_seeds_is_chosen() {
        let n = (0..100_000).filter(|&s| chosen("smoke", s, 10_000)).count();
        assert!((800..1200).contains(&n), "{n} of 100000 at 1%");
        assert!((0..1000).all(|s| chosen("smoke", s, PPM)));
        assert!(!(0..1000).any(|s| chosen("smoke", s, 0)));
    }

    #[test]
    fn the_correct_model_runs_the_same_twice() {
        let scenario = Scenario::built_in("smoke").unwrap();
        let result = check(&CheckerSet::built_in(), &scenario, &RunOptions::seeded(3)).unwrap();
        assert!(result.is_ok(), "{result:?}");
    }
}
