//! Scheduling strategies: which ready task runs next. A strategy needs three things — to
//! hear about new tasks, to pick among the ready ones, and its name — and draws every
//! decision from the run's entropy source so that the tape replays the schedule.

mod pct;
mod random;

pub use pct::Pct;
pub use random::RandomWalk;

use serde::{Deserialize, Serialize};

use crate::entropy::Entropy;
use crate::ids::TaskId;

/// Picks the next task to poll.
pub trait Strategy {
    /// The strategy's name as written in scenarios and on the CLI.
    fn name(&self) -> &'static str;
    /// A task was spawned; its slot may be reused from a finished task.
    fn on_spawn(&mut self, _task: TaskId, _entropy: &mut Entropy) {}
    /// Index into `ready` (FIFO order, never empty) of the task to poll; 0 is the simplest.
    fn pick(&mut self, ready: &[TaskId], entropy: &mut Entropy) -> usize;
}

/// A strategy and its parameters, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum StrategyConfig {
    /// Uniform among ready tasks.
    Random,
    /// Probabilistic concurrency testing with `depth` − 1 priority change points spread
    /// over the first `horizon` scheduling steps.
    Pct {
        /// The bug depth targeted (d ≥ 1).
        depth: u32,
        /// Expected number of scheduling steps, where change points are drawn;
        /// [`StrategyConfig::AUTO_HORIZON`] (0) asks for a horizon fitted to the program's
        /// observed run lengths ([`fit_horizon`]) by whoever runs it, and falls back to
        /// [`StrategyConfig::FALLBACK_HORIZON`] where no one did.
        horizon: u32,
    },
}

/// The PCT horizon for a program whose runs took `steps` scheduling steps each (a few
/// calibration runs): the longest, as Coyote and P do. Change points drawn over a horizon
/// much longer than the program mostly fall after its end, and the 1/(n·k^(d−1)) guarantee
/// of Burckhardt et al. is lost; drawn over the program's own length, it holds.
pub fn fit_horizon(steps: impl IntoIterator<Item = u64>) -> u32 {
    steps.into_iter().max().unwrap_or(0).clamp(1, u64::from(u32::MAX)) as u32
}

impl StrategyConfig {
    /// A PCT horizon to be fitted to the program's run lengths ([`fit_horizon`]).
    pub const AUTO_HORIZON: u32 = 0;

    /// The horizon of an unfitted `AUTO_HORIZON` (the fixed horizon of earlier versions).
    pub const FALLBACK_HORIZON: u32 = 2_000;

    /// PCT with the defaults used when only the name `pct` is given: depth 3, the horizon
    /// fitted to the program.
    pub const PCT_DEFAULT: StrategyConfig = StrategyConfig::Pct { depth: 3, horizon: Self::AUTO_HORIZON };

    /// This strategy with a fitted horizon in place of [`StrategyConfig::AUTO_HORIZON`]:
    /// `fit` is asked only if one is needed.
    pub fn with_fitted_horizon(self, fit: impl FnOnce() -> u32) -> StrategyConfig {
        match self {
            StrategyConfig::Pct { depth, horizon: Self::AUTO_HORIZON } => {
                StrategyConfig::Pct { depth, horizon: fit().max(1) }
            }
            other => other,
        }
    }

    /// Parses `random`, `pct`, or `pct:D` / `pct:D:H`.
    pub fn parse(text: &str) -> Result<StrategyConfig, String> {
        let mut parts = text.split(':');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("random"), None, None, None) => Ok(StrategyConfig::Random),
            (Some("pct"), depth, horizon, None) => {
                let StrategyConfig::Pct { depth: d0, horizon: h0 } = Self::PCT_DEFAULT else { unreachable!() };
                let depth = match depth {
                    Some(d) => d.parse().map_err(|_| format!("pct depth {d:?} is not a number"))?,
                    None => d0,
                };
                let horizon = match horizon {
                    Some("auto") | None => h0,
                    Some(h) => match h.parse() {
                        Ok(0) => return Err("pct horizon must be at least 1 (or auto)".into()),
                        Ok(h) => h,
                        Err(_) => return Err(format!("pct horizon {h:?} is not a number")),
                    },
                };
                if depth == 0 {
                    return Err("pct depth must be at least 1".into());
                }
                Ok(StrategyConfig::Pct { depth, horizon })
            }
            _ => Err(format!("unknown strategy {text:?}; known: random, pct, pct:DEPTH, pct:DEPTH:HORIZON|auto")),
        }
    }

    /// The name as shown in reports: `random` or `pct:D:H`.
    pub fn label(&self) -> String {
        match self {
            StrategyConfig::Random => "random".into(),
            StrategyConfig::Pct { depth, horizon: Self::AUTO_HORIZON } => format!("pct:{depth}:auto"),
            StrategyConfig::Pct { depth, horizon } => format!("pct:{depth}:{horizon}"),
        }
    }

    /// Builds the strategy as a [`Scheduler`], drawing its initial decisions from `entropy`.
    pub fn scheduler(&self, entropy: &mut Entropy) -> Scheduler {
        match *self {
            StrategyConfig::Random => Scheduler::Random(RandomWalk),
            StrategyConfig::Pct { depth, horizon } => {
                let horizon = if horizon == Self::AUTO_HORIZON { Self::FALLBACK_HORIZON } else { horizon };
                Scheduler::Pct(Pct::new(depth, horizon, entropy))
            }
        }
    }
}

/// One of the built-in strategies, dispatched without a virtual call. The executor asks
/// for a pick on nearly every poll; a `dyn Strategy` there costs a call that cannot be
/// inlined, and with it the draw behind the pick.
pub enum Scheduler {
    /// Uniform among ready tasks.
    Random(RandomWalk),
    /// Probabilistic concurrency testing.
    Pct(Pct),
}

impl Strategy for Scheduler {
    fn name(&self) -> &'static str {
        match self {
            Scheduler::Random(s) => s.name(),
            Scheduler::Pct(s) => s.name(),
        }
    }

    #[inline]
    fn on_spawn(&mut self, task: TaskId, entropy: &mut Entropy) {
        match self {
            Scheduler::Random(s) => s.on_spawn(task, entropy),
            Scheduler::Pct(s) => s.on_spawn(task, entropy),
        }
    }

    #[inline]
    fn pick(&mut self, ready: &[TaskId], entropy: &mut Entropy) -> usize {
        match self {
            Scheduler::Random(s) => s.pick(ready, entropy),
            Scheduler::Pct(s) => s.pick(ready, entropy),
        }
    }
}
