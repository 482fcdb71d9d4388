//! Design choices: the alternatives spec 000 names and argues for or against, each one a
//! switch in the scenario's `[design]` section. A mutant is a careless change that breaks
//! a rule; a *design* is something a team might choose on purpose, and `sutra-sim
//! variants` runs every alternative and reports whether the spec's verdict on it holds.
//! The defaults are the designs spec 000 settles on, so a scenario without a `[design]`
//! section runs the correct model. Keeping the choice in the scenario (not in a CLI flag)
//! puts it inside every reproducer, so a variant's failure replays from its file alone.

use serde::{Deserialize, Serialize};

/// The design choices of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Design {
    /// How a lane's owner id is formed.
    pub owner_ids: OwnerIds,
    /// How the sweeper clears stale claims.
    pub sweep: SweepShape,
    /// How long a claim spans: one step, or (with a heartbeat) across a parked pull task or
    /// for as long as a step runs.
    pub claim_span: ClaimSpan,
}

impl Design {
    /// True when every choice is the one spec 000 settles on.
    pub fn is_default(&self) -> bool {
        *self == Design::default()
    }
}

/// How a lane's owner id is formed (spec 000, "Owner-id suffixes" and "Re-entrancy").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OwnerIds {
    /// Per process incarnation and lane: a restarted or replacement process never
    /// shares an owner id with the one it replaces.
    #[default]
    PerIncarnation,
    /// A stable replica name (a StatefulSet pod name) plus the lane: a replacement that
    /// starts under the same name while the old process is frozen produces the same ids.
    StableName,
}

/// How the sweeper clears stale claims (spec 000, "The sweep is the only backstop").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepShape {
    /// Two statements, as real code often has them: select the stale ids, then clear
    /// each one with a conditional update that re-checks its age and the sweeper's lease.
    #[default]
    SelectThenClear,
    /// One conditional update that selects and clears in the same statement.
    OneUpdate,
    /// Select the stale ids, then clear them unconditionally: a pause between the two
    /// statements clears claims that were re-granted in the meantime.
    SelectThenClearUnchecked,
}

/// How long one claim spans (spec 000, "Heartbeats: deliberately not wired").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimSpan {
    /// A claim spans one step; a task parked for a pull worker releases with the commit.
    #[default]
    PerStep,
    /// The claim is held across a parked pull task and kept alive by a heartbeat.
    HeartbeatAcrossPark,
    /// The execution renews its claim periodically while its step runs (a mid-step
    /// heartbeat): a step that never returns keeps the instance for as long as it hangs.
    HeartbeatMidStep,
}
