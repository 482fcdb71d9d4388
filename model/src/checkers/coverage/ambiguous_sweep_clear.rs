//! `sometimes-ambiguous-sweep-clear`: a sweep statement cleared a claim and its reply was
//! lost — the sweeper does not know what it cleared, and must not redo it blindly.
//! Witnessed: the store's clear (`Swept`) and the environment's loss of that call's reply
//! (`RoleCallStruck`, same task, a sweep or a sweep's clear).

use std::collections::BTreeSet;

use crate::event::{CallFault, StoreCall};

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct AmbiguousSweepClear {
    /// Tasks whose latest sweep statement cleared a claim.
    cleared: BTreeSet<u64>,
}

impl Property for AmbiguousSweepClear {
    const NAME: &'static str = "sometimes-ambiguous-sweep-clear";
    const DESCRIPTION: &'static str = "a sweep statement that cleared a claim lost its reply";
    const READS: &'static [u8] = &[tag::SWEPT, tag::SWEEP_SELECTED, tag::SWEEP_CLEAR_MISSED, tag::ROLE_CALL_STRUCK];

    fn expected(s: &Scenario) -> bool {
        !s.faults.store_replies.reply_lost_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        match event {
            E::Swept { task: Some(task), .. } => {
                self.cleared.insert(*task);
                false
            }
            E::SweepSelected { task: Some(task), .. } | E::SweepClearMissed { task: Some(task), .. } => {
                self.cleared.remove(task);
                false
            }
            E::RoleCallStruck {
                call: StoreCall::Sweep | StoreCall::SweepClear,
                fault: CallFault::ReplyLost,
                task: Some(task),
                ..
            } => self.cleared.remove(task),
            _ => false,
        }
    }
}
