//! `sometimes-override-routed`: relay work for an instance a migration had rebound was
//! claimed by the override's lane. Narrative for the override (the table's change is
//! replica-local), witnessed for the claim: the store records the owner, and a lane's owner
//! names its lane.

use std::collections::BTreeMap;

use crate::ids::{InstanceId, OwnerId, ProcessId, ResumePath};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct OverrideRouted {
    /// Migration overrides: (process, instance) → the lane the table now routes to.
    overrides: BTreeMap<(ProcessId, InstanceId), u16>,
}

impl Property for OverrideRouted {
    const NAME: &'static str = "sometimes-override-routed";
    const DESCRIPTION: &'static str = "relay work for a rebound instance was claimed by the override's lane";
    const READS: &'static [u8] = &[tag::BINDING_CHANGED, tag::CLAIM_GRANTED];

    fn expected(s: &Scenario) -> bool {
        super::migrates(s) && s.workload.relay_weight > 0
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::BindingChanged { process, instance, lane } => {
                match lane {
                    Some(l) => self.overrides.insert((*process, *instance), *l),
                    None => self.overrides.remove(&(*process, *instance)),
                };
                false
            }
            E::ClaimGranted { instance, owner, process: Some(p), path: ResumePath::Relay, .. } => {
                self.overrides.get(&(*p, *instance)).is_some_and(|l| *owner == OwnerId::lane(*p, *l))
            }
            _ => false,
        }
    }
}
