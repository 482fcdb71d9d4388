//! How a run ended. Only [`Verdict::Pass`] is a pass: a hang, a budget overrun or a crash
//! is a failure of its own class, never silently green.

use serde::{Deserialize, Serialize};

/// Which budget a run overran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Budget {
    /// More trace events than the run's event budget.
    Events,
    /// More simulated time than the run's time budget.
    SimTime,
    /// More task polls than the run's poll budget (a spin that emits nothing).
    Polls,
}

/// The outcome class of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Every checker held and the run finished.
    Pass,
    /// A checker failed.
    Violation {
        /// The checker's registered name.
        checker: String,
        /// What it saw.
        message: String,
    },
    /// Work was outstanding but nothing could make progress: no ready task and no timer,
    /// a lane turn stalled past the bound, or a wait-for cycle between lane turns.
    Hang {
        /// What was stuck and why.
        message: String,
        /// The stuck tasks, by node and task name.
        stuck: Vec<String>,
    },
    /// The run overran one of its budgets.
    BudgetExceeded {
        /// Which budget.
        budget: Budget,
        /// The limit and where the run was.
        message: String,
    },
    /// Model code panicked.
    Crash {
        /// The panic message.
        message: String,
    },
}

impl Verdict {
    /// The short class name used in reports: `pass`, `violation`, `hang`, `budget`, `crash`.
    pub fn class(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Violation { .. } => "violation",
            Verdict::Hang { .. } => "hang",
            Verdict::BudgetExceeded { .. } => "budget",
            Verdict::Crash { .. } => "crash",
        }
    }

    /// True only for [`Verdict::Pass`].
    pub fn is_pass(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// The checker that failed, or the class name for other failures; `None` for a pass.
    pub fn checker(&self) -> Option<&str> {
        match self {
            Verdict::Pass => None,
            Verdict::Violation { checker, .. } => Some(checker),
            other => Some(other.class()),
        }
    }

    /// A one-line message, empty for a pass.
    pub fn message(&self) -> String {
        match self {
            Verdict::Pass => String::new(),
            Verdict::Violation { message, .. }
            | Verdict::Crash { message }
            | Verdict::BudgetExceeded { message, .. } => message.clone(),
            Verdict::Hang { message, stuck } => {
                if stuck.is_empty() {
                    message.clone()
                } else {
                    format!("{message}; stuck: {}", stuck.join(", "))
                }
            }
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.checker() {
            None => f.write_str("pass"),
            Some(checker) if matches!(self, Verdict::Violation { .. }) => {
                write!(f, "violation of {checker}: {}", self.message())
            }
            Some(_) => write!(f, "{}: {}", self.class(), self.message()),
        }
    }
}
