//! A judge of more than 64 checkers keeps its interest table in more than one word per
//! tag: the checker past the first word hears the events it listens to, and only those.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md): a mistake in the
//! table's indexing passes every run of the model, whose checkers fit in one word.

use std::time::Duration;

use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::trace::tag_mask;
use sutra_sim_core::{simulate, Check, Checker, CheckerKind, Event, EventKind, RunConfig, Verdict};

#[derive(Clone, Debug, serde::Serialize)]
enum Ev {
    Common,
    Rare,
}

impl EventKind for Ev {
    fn name(&self) -> &'static str {
        match self {
            Ev::Common => "common",
            Ev::Rare => "rare",
        }
    }

    fn tag(&self) -> u8 {
        match self {
            Ev::Common => 1,
            Ev::Rare => 2,
        }
    }
}

/// Listens to one tag, and fails on the first event it hears if it is `fails`.
struct Listener {
    name: String,
    tag: u8,
    fails: bool,
}

impl Checker<Ev, ()> for Listener {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn on_event(&mut self, event: &Event<Ev>, _: &()) -> Check {
        assert_eq!(event.kind.tag(), self.tag, "{} heard an event it does not listen to", self.name);
        if self.fails {
            Check::Fail(format!("{} heard it", self.name))
        } else {
            Check::Ok
        }
    }
    fn interest(&self) -> u64 {
        tag_mask(&[self.tag])
    }
}

#[test]
fn the_seventieth_checker_hears_its_events_and_no_other() {
    // Checkers 0..69 listen to the common event; the last, in the second word, to the rare one.
    let checkers: Vec<Box<dyn Checker<Ev, ()>>> = (0..70)
        .map(|i| {
            let last = i == 69;
            Box::new(Listener { name: format!("c{i}"), tag: if last { 2 } else { 1 }, fails: last })
                as Box<dyn Checker<Ev, ()>>
        })
        .collect();
    let out = simulate(&RunConfig::seeded(1), checkers, |tracer| {
        let tracer = tracer.clone();
        sim::spawn("emitter", async move {
            for _ in 0..3 {
                tracer.emit(Ev::Common);
                sleep(Duration::from_millis(1)).await;
            }
            tracer.emit(Ev::Rare);
        });
    });
    match out.verdict {
        Verdict::Violation { checker, .. } => assert_eq!(checker, "c69"),
        other => panic!("expected c69 to fail on the rare event, got {other}"),
    }
}

/// Declares no interest, and fails at the rare event.
struct HearsAll;

impl Checker<Ev, ()> for HearsAll {
    fn name(&self) -> &str {
        "hears-all"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn on_event(&mut self, event: &Event<Ev>, _: &()) -> Check {
        match event.kind {
            Ev::Rare => Check::Fail("heard the rare event".into()),
            Ev::Common => Check::Ok,
        }
    }
}

#[test]
fn a_checker_that_declares_no_interest_hears_every_event() {
    let out = simulate(&RunConfig::seeded(1), vec![Box::new(HearsAll) as Box<dyn Checker<Ev, ()>>], |tracer| {
        let tracer = tracer.clone();
        sim::spawn("emitter", async move {
            tracer.emit(Ev::Common);
            tracer.emit(Ev::Rare);
        });
    });
    assert_eq!(out.verdict, Verdict::Violation { checker: "hears-all".into(), message: "heard the rare event".into() });
}
