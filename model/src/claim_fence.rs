//! The claim fence: the store refuses a claim older than one its owner has already made.
//!
//! Why. A claim request outlives the task that sent it: a database applies a statement
//! whose client died or gave up after sending it. When the runtime aborts a lane's worker
//! with its claim in flight, the lane's next worker runs the exit path — claims again
//! (the grant may have been written unheard) and releases — then takes new work under the
//! same lane-scoped owner id. The old claim landing after any of that matches the owner
//! (R10: "a re-claim is a heartbeat refresh"), so the store grants it re-entrantly over
//! the newer claim (a double resume) or after the release (a claim nobody will release:
//! a leak for the sweeper). "Same owner ⇒ same lane ⇒ already serialised" (R11) holds for
//! the lane's *executions*; a request still on the wire is outside that serialisation.
//!
//! Spec 000 is silent on this exact case; what it does fix is that the claim is the one
//! conditional update that decides ownership, and that owner ids are opaque (R14). So the
//! answer is one more condition on that update, keyed by the opaque owner id: each lane
//! numbers its claims (a per-owner sequence that only grows, carried with the request),
//! and the store refuses — writes nothing, and witnesses `ClaimFenced` — a claim whose
//! number is below the highest it has taken from that owner. Every late claim of an
//! aborted worker is followed by a newer claim of its lane (the exit path's), so once
//! that one is taken the old one can never land. Keyed requests (commit, release) need
//! no fence: each is one logical request, applied once ([`crate::request_log`]), and an
//! exit path sends it again as the same request. A dead process's late claim carries an
//! owner id no later incarnation uses (R11), so it can only take a free or stale row for a
//! process that is gone — which the sweep clears by age (R18, R22).
//!
//! The alternative, a lane that drains its in-flight requests before its next worker
//! starts, needs a bound on "may still land", which a network does not give: a store
//! statement timeout counts from when the statement *starts*, not from when it was sent.
//!
//! It sits in front of either store engine, like the idempotency table. A real store on
//! PostgreSQL writes it as a table `claim_fence(owner text primary key, seq bigint)` and,
//! in the claim's transaction, `INSERT … ON CONFLICT (owner) DO UPDATE SET seq =
//! excluded.seq WHERE claim_fence.seq <= excluded.seq RETURNING seq` before the claim's
//! `UPDATE` (no row returned: fenced, roll back); the lane's counter starts above any
//! earlier incarnation's by carrying the process incarnation in its high bits. Under
//! stable-name owner ids (a variant spec 000 argues against) an owner id spans
//! incarnations, and the lane sends its claims bare, as that design always did.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::ids::{OwnerId, ProcessId};

/// The highest claim number the store has taken from each owner.
#[derive(Clone, Default)]
pub struct ClaimFence {
    seen: Rc<RefCell<BTreeMap<OwnerId, u64>>>,
}

impl ClaimFence {
    /// Admits claim number `seq` of `owner` (and remembers it), or refuses it with the
    /// higher number already taken. Equal numbers are admitted: a copy the store refused
    /// (aborted, unavailable) wrote nothing and is sent again under the same number.
    pub fn admit(&self, owner: OwnerId, seq: u64) -> Result<(), u64> {
        let mut seen = self.seen.borrow_mut();
        let highest = seen.entry(owner).or_insert(seq);
        if seq < *highest {
            return Err(*highest);
        }
        *highest = seq;
        Ok(())
    }
}

/// A claimant's numbering of its claims: shared by every worker of one lane (or every exit
/// path of one administrative request), so a worker that replaces an aborted one goes on
/// counting where it stopped.
#[derive(Clone, Debug, Default)]
pub struct ClaimNumbers {
    /// The incarnation the numbers are made in, in the high bits: a later process under
    /// the same (stable-name) owner id numbers above an earlier one.
    base: u64,
    /// Claims numbered so far.
    sent: Rc<std::cell::Cell<u32>>,
}

impl ClaimNumbers {
    /// The numbering of the claims of a lane or request of `process`.
    pub fn of(process: ProcessId) -> ClaimNumbers {
        ClaimNumbers { base: u64::from(process.0) << 32, sent: Rc::default() }
    }

    /// The number of the next claim sent.
    pub fn next(&self) -> u64 {
        let n = self.sent.get() + 1;
        self.sent.set(n);
        self.base | u64::from(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_claim_of_an_owner_is_refused_once_a_newer_one_was_taken() {
        let fence = ClaimFence::default();
        let (a, b) = (OwnerId::lane(ProcessId(1), 0), OwnerId::lane(ProcessId(1), 1));
        assert_eq!(fence.admit(a, 5), Ok(()));
        assert_eq!(fence.admit(a, 5), Ok(()), "a copy sent again after a refusal");
        assert_eq!(fence.admit(a, 4), Err(5));
        assert_eq!(fence.admit(b, 1), Ok(()), "another owner has numbers of its own");
        assert_eq!(fence.admit(a, 6), Ok(()));
        assert_eq!(fence.admit(a, 5), Err(6));
    }

    #[test]
    fn a_later_incarnation_numbers_above_an_earlier_one() {
        let (old, new) = (ClaimNumbers::of(ProcessId(3)), ClaimNumbers::of(ProcessId(4)));
        for _ in 0..10 {
            old.next();
        }
        assert!(new.next() > old.next());
    }
}
