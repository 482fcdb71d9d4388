//! The store's idempotency table. A client that gave up on a request (its timeout passed
//! with no answer) sends it again; the first copy may still be in flight and land later,
//! after the retry did — or before it. Every copy of one logical request carries the same
//! key (the call, the instance, the execution, the claim's epoch and, for a commit, the
//! version it is based on), and the store applies a key once: a later copy gets the first
//! copy's answer and writes nothing. Without it a delayed first copy of a release lands
//! after the same lane re-claimed the instance and, matching the owner id, clears the newer
//! claim mid-step (the owner-keyed ABA). It sits in front of either store engine.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The identity of one logical request, shared by all its copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestKey {
    /// Which call (`StoreCall` as a number).
    pub call: u8,
    /// The instance it is for.
    pub instance: u32,
    /// The execution that makes it.
    pub exec: u32,
    /// The epoch of the claim it acts under.
    pub epoch: u64,
    /// What else tells two logical requests of one execution apart (a commit's base
    /// version; a careless client's attempt number).
    pub detail: u64,
}

/// The answers of the keyed requests applied so far, by key.
#[derive(Clone, Default)]
pub struct RequestLog {
    answered: Rc<RefCell<BTreeMap<RequestKey, Rc<dyn Any>>>>,
}

impl RequestLog {
    /// The answer of `key`'s first applied copy, if one was applied.
    pub fn answered<A: Clone + 'static>(&self, key: RequestKey) -> Option<A> {
        let answered = self.answered.borrow();
        let answer = answered.get(&key)?;
        Some(answer.downcast_ref::<A>().expect("one key, one call, one answer type").clone())
    }

    /// Records the answer of `key`'s first applied copy.
    pub fn record<A: 'static>(&self, key: RequestKey, answer: A) {
        let previous = self.answered.borrow_mut().insert(key, Rc::new(answer));
        debug_assert!(previous.is_none(), "a key is applied once");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(detail: u64) -> RequestKey {
        RequestKey { call: 3, instance: 1, exec: 2, epoch: 4, detail }
    }

    #[test]
    fn a_key_answers_with_its_first_copy_and_other_keys_are_unknown() {
        let log = RequestLog::default();
        assert_eq!(log.answered::<bool>(key(0)), None);
        log.record(key(0), true);
        assert_eq!(log.answered::<bool>(key(0)), Some(true));
        assert_eq!(log.answered::<bool>(key(1)), None, "another attempt number is another request");
    }
}
