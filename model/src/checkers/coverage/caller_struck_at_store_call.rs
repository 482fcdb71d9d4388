//! `sometimes-caller-struck-at-store-call`: a caller's process froze or died just before a
//! store request or just after a reply.

use crate::event::CallFault;

use super::prelude::*;

/// The property, with the books it keeps.
#[derive(Default)]
pub struct CallerStruckAtStoreCall;

impl Property for CallerStruckAtStoreCall {
    const NAME: &'static str = "sometimes-caller-struck-at-store-call";
    const DESCRIPTION: &'static str = "a process froze or died just before a store request or just after its reply";
    const READS: &'static [u8] = &[tag::CALL_STRUCK];

    fn expected(s: &Scenario) -> bool {
        let replies = &s.faults.store_replies;
        !replies.boundary_pause_per_call.is_never() || !replies.boundary_crash_per_call.is_never()
    }

    fn reached(&mut self, event: &E, _view: &ModelView) -> bool {
        matches!(event, E::CallStruck { fault, .. } if !matches!(fault, CallFault::RequestLost | CallFault::ReplyLost | CallFault::RequestDelayed | CallFault::LateLanded))
    }
}
