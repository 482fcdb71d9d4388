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
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// The random walk until the run has made `at` draws, then PCT (exploration's children
    /// switch strategy at their branch point, [`StrategyConfig::switched_at`]).
    RandomThenPct {
        /// The tape position of the switch: the first step at or after it runs PCT.
        at: u32,
        /// PCT's depth after the switch.
        depth: u32,
        /// PCT's horizon for the whole run (change points fall in what is left of it).
        horizon: u32,
    },
    /// PCT until the run has made `at` draws, then the random walk.
    PctThenRandom {
        /// PCT's depth before the switch.
        depth: u32,
        /// PCT's horizon.
        horizon: u32,
        /// The tape position of the switch: the first step at or after it runs the random walk.
        at: u32,
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
            StrategyConfig::RandomThenPct { at, depth, horizon: Self::AUTO_HORIZON } => {
                StrategyConfig::RandomThenPct { at, depth, horizon: fit().max(1) }
            }
            StrategyConfig::PctThenRandom { depth, horizon: Self::AUTO_HORIZON, at } => {
                StrategyConfig::PctThenRandom { depth, horizon: fit().max(1), at }
            }
            other => other,
        }
    }

    /// The strategy a run starts with: itself, or the first of a switched pair.
    pub fn first(self) -> StrategyConfig {
        match self {
            StrategyConfig::RandomThenPct { .. } => StrategyConfig::Random,
            StrategyConfig::PctThenRandom { depth, horizon, .. } => StrategyConfig::Pct { depth, horizon },
            plain => plain,
        }
    }

    /// For a switched strategy: the tape position of the switch and the strategy after it.
    pub fn switch(self) -> Option<(u32, StrategyConfig)> {
        match self {
            StrategyConfig::RandomThenPct { at, depth, horizon } => Some((at, StrategyConfig::Pct { depth, horizon })),
            StrategyConfig::PctThenRandom { at, .. } => Some((at, StrategyConfig::Random)),
            _ => None,
        }
    }

    /// This strategy until tape position `at`, then the other one: the random walk turns
    /// to PCT ([`StrategyConfig::PCT_DEFAULT`], its horizon fitted), PCT to the random walk.
    /// A strategy that already switches keeps its one switch (a lineage switches once).
    pub fn switched_at(self, at: u32) -> StrategyConfig {
        match self {
            StrategyConfig::Random => {
                let StrategyConfig::Pct { depth, horizon } = Self::PCT_DEFAULT else { unreachable!() };
                StrategyConfig::RandomThenPct { at, depth, horizon }
            }
            StrategyConfig::Pct { depth, horizon } => StrategyConfig::PctThenRandom { depth, horizon, at },
            switched => switched,
        }
    }

    /// What a branch of a run of this strategy, cut at tape position `position`, replays
    /// its prefix with: the whole strategy if its switch lies within the prefix (the switch
    /// is part of the world the prefix rebuilds), else only the first strategy.
    pub fn as_of(self, position: u32) -> StrategyConfig {
        match self.switch() {
            Some((at, _)) if at > position => self.first(),
            _ => self,
        }
    }

    /// Parses `random`, `pct`, or `pct:D` / `pct:D:H`; a switched strategy as
    /// `FIRST>THEN@AT` (`random>pct:3:auto@120`, `pct:3:40>random@120`), as exploration
    /// records its children.
    pub fn parse(text: &str) -> Result<StrategyConfig, String> {
        if let Some((pair, at)) = text.split_once('@') {
            let at: u32 = at.parse().map_err(|_| format!("switch position {at:?} is not a number"))?;
            let Some((first, then)) = pair.split_once('>') else {
                return Err(format!("a switched strategy is FIRST>THEN@AT, not {text:?}"));
            };
            return match (Self::parse_plain(first)?, Self::parse_plain(then)?) {
                (StrategyConfig::Random, StrategyConfig::Pct { depth, horizon }) => {
                    Ok(StrategyConfig::RandomThenPct { at, depth, horizon })
                }
                (StrategyConfig::Pct { depth, horizon }, StrategyConfig::Random) => {
                    Ok(StrategyConfig::PctThenRandom { depth, horizon, at })
                }
                _ => Err(format!("a run switches between random and pct, not {text:?}")),
            };
        }
        Self::parse_plain(text)
    }

    fn parse_plain(text: &str) -> Result<StrategyConfig, String> {
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
            switched => {
                let (at, then) = switched.switch().expect("only switched strategies are left");
                format!("{}>{}@{at}", switched.first().label(), then.label())
            }
        }
    }

    /// Builds the strategy a run starts with ([`StrategyConfig::first`]) as a
    /// [`Scheduler`], drawing its initial decisions from `entropy`. The executor makes the
    /// switch of a switched strategy itself ([`StrategyConfig::scheduler_from`]).
    pub fn scheduler(&self, entropy: &mut Entropy) -> Scheduler {
        self.first().scheduler_from(0, std::iter::empty(), entropy)
    }

    /// Builds this plain strategy as a [`Scheduler`] that takes over a run after `polls`
    /// polls, with `live` tasks alive (in slot order): PCT gives each a priority, as if just
    /// spawned, and draws its change points over what is left of the horizon.
    pub fn scheduler_from(&self, polls: u64, live: impl Iterator<Item = TaskId>, entropy: &mut Entropy) -> Scheduler {
        match self.first() {
            StrategyConfig::Pct { depth, horizon } => {
                let horizon = if horizon == Self::AUTO_HORIZON { Self::FALLBACK_HORIZON } else { horizon };
                let left = u64::from(horizon).saturating_sub(polls).max(1) as u32;
                let mut pct = Pct::new(depth, left, entropy);
                for task in live {
                    pct.on_spawn(task, entropy);
                }
                Scheduler::Pct(pct)
            }
            _ => Scheduler::Random(RandomWalk),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switched_strategy_reads_back_from_its_label() {
        for text in ["random", "pct:3:auto", "pct:2:40", "random>pct:3:auto@120", "pct:2:40>random@7"] {
            let parsed = StrategyConfig::parse(text).unwrap();
            assert_eq!(parsed.label(), text);
            assert_eq!(StrategyConfig::parse(&parsed.label()), Ok(parsed));
        }
        for bad in ["random>random@3", "pct>pct@3", "random>pct", "random>pct@x", "random@3"] {
            assert!(StrategyConfig::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_schedulers_name_reads_back_as_the_strategy_it_was_built_from() {
        let mut entropy = Entropy::random(1);
        for config in [StrategyConfig::Random, StrategyConfig::PCT_DEFAULT] {
            let name = config.scheduler(&mut entropy).name();
            let parsed = StrategyConfig::parse(name).unwrap();
            assert_eq!(std::mem::discriminant(&parsed), std::mem::discriminant(&config), "{name}");
        }
    }

    #[test]
    fn a_lineage_switches_once_and_a_branch_before_the_switch_replays_the_first_strategy_only() {
        let random = StrategyConfig::Random;
        let switched = random.switched_at(100);
        assert_eq!(
            switched,
            StrategyConfig::RandomThenPct { at: 100, depth: 3, horizon: StrategyConfig::AUTO_HORIZON }
        );
        assert_eq!(switched.switched_at(200), switched, "one switch per lineage");
        assert_eq!(switched.first(), random);
        assert_eq!(switched.switch(), Some((100, StrategyConfig::PCT_DEFAULT)));
        assert_eq!(switched.as_of(99), random, "a prefix that ends before the switch never made it");
        assert_eq!(switched.as_of(100), switched);
        let pct = StrategyConfig::Pct { depth: 2, horizon: 50 };
        assert_eq!(pct.switched_at(5).switch(), Some((5, random)));
        assert_eq!(pct.switched_at(5).first(), pct);
        assert_eq!(
            StrategyConfig::parse("random>pct:3:auto@9").unwrap().with_fitted_horizon(|| 77),
            StrategyConfig::RandomThenPct { at: 9, depth: 3, horizon: 77 }
        );
    }
}
