//! The search: the best candidate so far, the property that judges new ones, the limits,
//! and the loop of passes. Passes propose candidates through [`Search::try_candidate`],
//! which is the only place a candidate can become the best — so "the best always still
//! fails" and "the best only gets simpler" are checked in one place.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::candidate::Candidate;
use crate::limits::{Limits, ROUNDS_MAX};
use crate::{knob_passes, tape_passes};

/// A failing run as the property ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    /// The candidate as the run actually used it: the candidate itself, or a normalised
    /// form of it (for example the draws the run really read). It must fail the same way
    /// when run again: the shrinker keeps this, never an unvouched candidate.
    pub candidate: Candidate,
    /// What the run costs the person who reads it — for a simulation, its events. The
    /// shrinker never keeps a run that costs more than the input's.
    pub cost: u64,
}

/// What the shrinker needs from its caller: run a candidate, and say whether it still fails
/// the same way.
pub trait Property {
    /// Runs `candidate`. Returns what ran if it still fails the same way; `None` if it
    /// passes, fails differently, or is not a valid run.
    fn still_fails(&mut self, candidate: &Candidate) -> Option<Ran>;

    /// How many tapes of its own the property can offer for new knobs (see
    /// [`Property::still_fails_reseeded`]). A tape recorded under some knobs may mean
    /// little under others — every draw after the first one the knobs change is read by a
    /// different decision — so when lowering a knob fails with the current tape, the knob
    /// passes also try these. Default: none.
    fn reseeds(&self) -> u32 {
        0
    }

    /// Runs the candidate's knobs with the property's own tape number `attempt` (in
    /// `0..reseeds()`) instead of the candidate's tape — for a simulation, a fresh run of
    /// another seed. Must be deterministic in (knobs, attempt). Returns what ran, as
    /// [`Property::still_fails`] does.
    fn still_fails_reseeded(&mut self, candidate: &Candidate, attempt: u32) -> Option<Ran> {
        let _ = (candidate, attempt);
        None
    }
}

/// Any `FnMut(&Candidate) -> bool` is a property whose runs use candidates as given and
/// all cost the same.
impl<F: FnMut(&Candidate) -> bool> Property for F {
    fn still_fails(&mut self, candidate: &Candidate) -> Option<Ran> {
        self(candidate).then(|| Ran { candidate: candidate.clone(), cost: 0 })
    }
}

/// Why a shrink stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A whole round of passes found nothing simpler: the result is a local minimum.
    Fixpoint,
    /// [`Limits::oracle_calls_max`] property calls were made.
    OracleCalls,
    /// [`Limits::time_budget`] ran out.
    TimeBudget,
    /// [`ROUNDS_MAX`] rounds each found something simpler.
    Rounds,
}

impl Stop {
    /// A short name for reports: `fixpoint`, `oracle-calls`, `time-budget`, `rounds`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Fixpoint => "fixpoint",
            Stop::OracleCalls => "oracle-calls",
            Stop::TimeBudget => "time-budget",
            Stop::Rounds => "rounds",
        }
    }
}

/// The size of a candidate, for before/after reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The knobs.
    pub knobs: Vec<u32>,
    /// Draws on the tape.
    pub tape_len: usize,
    /// Draws on the tape that are not 0 (not the simplest choice).
    pub tape_nonzero: usize,
}

impl Sizes {
    /// The sizes of `candidate`.
    pub fn of(candidate: &Candidate) -> Sizes {
        Sizes {
            knobs: candidate.knobs.clone(),
            tape_len: candidate.tape.len(),
            tape_nonzero: candidate.tape.iter().filter(|&&v| v != 0).count(),
        }
    }
}

/// The result of a shrink.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The simplest failing candidate found. It failed the property when last run.
    pub candidate: Candidate,
    /// Its cost, as the property reported it; never more than the input's.
    pub cost: u64,
    /// Sizes of the input.
    pub before: Sizes,
    /// Sizes of the result.
    pub after: Sizes,
    /// Property calls made, the initial check included.
    pub oracle_calls: u64,
    /// Candidates accepted as simpler.
    pub accepted: u64,
    /// Rounds of passes run.
    pub rounds: u32,
    /// Why it stopped.
    pub stop: Stop,
    /// Wall-clock time taken.
    pub wall: Duration,
}

/// The input did not fail the property, so there is nothing to shrink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFailing;

impl std::fmt::Display for NotFailing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the run to shrink does not fail: nothing to shrink")
    }
}

impl std::error::Error for NotFailing {}

/// Shrinks `initial`, which must fail `property`, to the simplest failing candidate it can
/// find within `limits`. Deterministic: the same input, property and limits give the same
/// result, unless the time budget cuts the search short (see [`Shrunk::stop`]).
pub fn shrink<P: Property + ?Sized>(
    initial: Candidate,
    property: &mut P,
    limits: Limits,
) -> Result<Shrunk, NotFailing> {
    let started = Instant::now();
    let before = Sizes::of(&initial);
    let first = property.still_fails(&initial).ok_or(NotFailing)?;
    assert_eq!(first.candidate.knobs.len(), initial.knobs.len(), "the property keeps the number of knobs");
    let mut search = Search {
        property,
        best: first.candidate,
        best_cost: first.cost,
        cost_max: first.cost,
        limits,
        started,
        calls: 1,
        accepted: 0,
        rejected: BTreeSet::new(),
        reseeded: BTreeSet::new(),
        stop: None,
    };
    let mut rounds = 0;
    while search.stop.is_none() {
        if rounds == ROUNDS_MAX {
            search.stop = Some(Stop::Rounds);
            break;
        }
        rounds += 1;
        let at_start = search.best.clone();
        knob_passes::lower_each_knob(&mut search);
        tape_passes::truncate(&mut search);
        tape_passes::delete_spans(&mut search);
        tape_passes::zero_spans(&mut search);
        tape_passes::lower_each_value(&mut search);
        if search.stop.is_none() && search.best == at_start {
            search.stop = Some(Stop::Fixpoint);
        }
    }
    let stop = search.stop.expect("the loop ends only with a reason");
    Ok(Shrunk {
        after: Sizes::of(&search.best),
        before,
        oracle_calls: search.calls,
        accepted: search.accepted,
        rounds,
        stop,
        wall: started.elapsed(),
        cost: search.best_cost,
        candidate: search.best,
    })
}

/// The state of one shrink, shared by the passes.
pub(crate) struct Search<'p, P: Property + ?Sized> {
    property: &'p mut P,
    /// The simplest failing candidate so far. Invariant: the property vouched that it fails,
    /// and every later best is strictly simpler than every earlier one.
    pub(crate) best: Candidate,
    /// The cost of the best. Invariant: at most `cost_max`.
    best_cost: u64,
    /// The cost of the input: no result costs more. (Not the best's cost: a long idle
    /// tail can vary by a few events between otherwise simpler runs, and holding every step
    /// to the last one's cost would stall the search on such noise.)
    cost_max: u64,
    limits: Limits,
    started: Instant,
    calls: u64,
    accepted: u64,
    /// Fingerprints of candidates already run that were not accepted. Nothing that was
    /// rejected can become acceptable later: the best only gets simpler.
    rejected: BTreeSet<u64>,
    /// Fingerprints of knob settings whose reseeded runs all failed to fail: they depend
    /// on the knobs alone, so they would fail again.
    reseeded: BTreeSet<u64>,
    /// Set once a limit is reached; every pass then returns at its next proposal.
    pub(crate) stop: Option<Stop>,
}

impl<P: Property + ?Sized> Search<'_, P> {
    /// A search whose best is `best` (vouched for by the caller), for a pass's unit tests.
    #[cfg(test)]
    pub(crate) fn for_test(property: &mut P, best: Candidate, limits: Limits) -> Search<'_, P> {
        Search {
            property,
            best,
            best_cost: 0,
            cost_max: 0,
            limits,
            started: Instant::now(),
            calls: 0,
            accepted: 0,
            rejected: BTreeSet::new(),
            reseeded: BTreeSet::new(),
            stop: None,
        }
    }

    /// True once a limit stopped the search.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// Proposes `candidate`: runs it if it is simpler than the best and new, and makes what
    /// ran the best if it still fails and is simpler. Returns true if the best changed.
    pub(crate) fn try_candidate(&mut self, candidate: Candidate) -> bool {
        if self.stop.is_some() || !candidate.simpler_than(&self.best) {
            return false;
        }
        let key = fingerprint(&candidate);
        if self.rejected.contains(&key) {
            return false;
        }
        if !self.spend_a_call() {
            return false;
        }
        let ran = self.property.still_fails(&candidate);
        if self.accept(ran) {
            return true;
        }
        self.rejected.insert(key);
        false
    }

    /// Proposes new knobs: as [`Search::try_candidate`] with the best tape, then with each
    /// of the property's own tapes for those knobs. Returns true if the best changed.
    pub(crate) fn try_knobs(&mut self, candidate: Candidate) -> bool {
        if self.try_candidate(candidate.clone()) {
            return true;
        }
        if self.stop.is_some() || !candidate.simpler_than(&self.best) {
            return false;
        }
        let key = fingerprint(&Candidate::new(candidate.knobs.clone(), Vec::new()));
        if self.reseeded.contains(&key) {
            return false;
        }
        for attempt in 0..self.property.reseeds() {
            if !self.spend_a_call() {
                return false;
            }
            let ran = self.property.still_fails_reseeded(&candidate, attempt);
            if self.accept(ran) {
                return true;
            }
        }
        self.reseeded.insert(key);
        false
    }

    /// Counts one property call, or stops the search if a limit is reached.
    fn spend_a_call(&mut self) -> bool {
        if self.calls >= self.limits.oracle_calls_max {
            self.stop = Some(Stop::OracleCalls);
            return false;
        }
        if self.started.elapsed() >= self.limits.time_budget {
            self.stop = Some(Stop::TimeBudget);
            return false;
        }
        self.calls += 1;
        true
    }

    /// Makes what ran the best, if it failed, is simpler, and costs no more than the input.
    fn accept(&mut self, ran: Option<Ran>) -> bool {
        match ran {
            Some(ran) if ran.candidate.simpler_than(&self.best) && ran.cost <= self.cost_max => {
                assert_eq!(ran.candidate.knobs.len(), self.best.knobs.len(), "the property keeps the number of knobs");
                self.best = ran.candidate;
                self.best_cost = ran.cost;
                self.accepted += 1;
                true
            }
            _ => false,
        }
    }
}

/// FNV-1a 64 over a candidate's knobs and tape, lengths included: a stable key for the
/// rejected set, so it does not hold whole tapes.
fn fingerprint(candidate: &Candidate) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut write = |v: u64| {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    write(candidate.knobs.len() as u64);
    candidate.knobs.iter().for_each(|&k| write(u64::from(k)));
    write(candidate.tape.len() as u64);
    candidate.tape.iter().for_each(|&v| write(u64::from(v)));
    h
}
