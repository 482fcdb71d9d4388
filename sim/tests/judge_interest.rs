//! Who hears what: a checker is called for the events of the tags it listens to and no
//! others, a sometimes-checker is called for nothing more once it reached its situation
//! (whatever it costs, it costs once), its reaching deafens no other checker, and an
//! eventually-checker's failure at the end of a run is the run's verdict — with the
//! checkers in one word of the judge's interest table and in two.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md): mistakes in the
//! table's indexing, or in how a reached checker is taken off it, passed every test before.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::trace::tag_mask;
use sutra_sim_core::{simulate, Check, Checker, CheckerKind, Event, EventKind, RunConfig, Verdict};

/// An event of a given tag.
#[derive(Clone, Debug, serde::Serialize)]
struct Tagged(u8);

impl EventKind for Tagged {
    fn name(&self) -> &'static str {
        "tagged"
    }

    fn tag(&self) -> u8 {
        self.0
    }
}

/// The tag every listener hears: high enough that a table read at a wrong row finds it empty.
const HEARD: u8 = 20;
/// A tag no listener hears.
const UNHEARD: u8 = 19;

/// Counts the events it is called for; a sometimes-listener reaches on each of them.
struct Listener {
    name: String,
    kind: CheckerKind,
    calls: Rc<Cell<u32>>,
}

impl Checker<Tagged, ()> for Listener {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> CheckerKind {
        self.kind
    }
    fn on_event(&mut self, event: &Event<Tagged>, _: &()) -> Check {
        assert_eq!(event.kind.0, HEARD, "{} was called for an event it does not listen to", self.name);
        self.calls.set(self.calls.get() + 1);
        if self.kind == CheckerKind::Sometimes {
            Check::Reached
        } else {
            Check::Ok
        }
    }
    fn interest(&self) -> u64 {
        tag_mask(&[HEARD])
    }
}

/// Runs `count` listeners, the last one a sometimes-checker, over three events of the heard
/// tag and three of another; returns each listener's calls and the verdict.
fn hear(count: usize) -> (Vec<u32>, Verdict) {
    let calls: Vec<Rc<Cell<u32>>> = (0..count).map(|_| Rc::new(Cell::new(0))).collect();
    let checkers: Vec<Box<dyn Checker<Tagged, ()>>> = (0..count)
        .map(|i| {
            let kind = if i + 1 == count { CheckerKind::Sometimes } else { CheckerKind::Always };
            Box::new(Listener { name: format!("c{i}"), kind, calls: calls[i].clone() }) as Box<dyn Checker<Tagged, ()>>
        })
        .collect();
    let out = simulate(&RunConfig::seeded(1), checkers, |tracer| {
        let tracer = tracer.clone();
        sim::spawn("emitter", async move {
            for _ in 0..3 {
                tracer.emit(Tagged(UNHEARD));
                tracer.emit(Tagged(HEARD));
                sleep(Duration::from_millis(1)).await;
            }
        });
    });
    (calls.iter().map(|c| c.get()).collect(), out.verdict)
}

#[test]
fn each_checker_hears_its_tag_and_a_reached_one_hears_nothing_more_with_one_word_of_checkers() {
    let (calls, verdict) = hear(2);
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(calls, vec![3, 1]);
}

#[test]
fn each_checker_hears_its_tag_and_a_reached_one_hears_nothing_more_with_two_words_of_checkers() {
    let (calls, verdict) = hear(70);
    assert_eq!(verdict, Verdict::Pass);
    assert!(calls[..69].iter().all(|&c| c == 3), "{calls:?}");
    assert_eq!(calls[69], 1);
}

/// Fails at the end of the run, saying so.
struct FailsAtTheEnd;

impl Checker<Tagged, ()> for FailsAtTheEnd {
    fn name(&self) -> &str {
        "fails-at-the-end"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Eventually
    }
    fn on_event(&mut self, _: &Event<Tagged>, _: &()) -> Check {
        Check::Ok
    }
    fn at_end(&mut self, _: &()) -> Check {
        Check::Fail("it never converged".into())
    }
}

#[test]
fn an_eventually_checkers_failure_at_the_end_is_the_verdict() {
    let out = simulate(&RunConfig::seeded(1), vec![Box::new(FailsAtTheEnd) as Box<dyn Checker<Tagged, ()>>], |_| {
        sim::spawn("idle", sleep(Duration::from_millis(1)));
    });
    assert_eq!(
        out.verdict,
        Verdict::Violation { checker: "fails-at-the-end".into(), message: "it never converged".into() }
    );
}
