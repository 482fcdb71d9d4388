//! What a state lane tells the world about itself, beyond spec 003 §8's properties (those are
//! `state_lane.rs`): the events its observer receives (the model turns them into trace events
//! that checkers judge), which lane `current()` names, and the errors it refuses with.
//!
//! Written for the framework's mutation run (docs/mutation-testing.md, "The framework"):
//! each test here is one that a careless change to `sim/src/lane.rs` passed before.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::executor::{spawn, yield_now};
use sutra_sim_core::lane::LaneObserver;
use sutra_sim_core::{simulate, Checker, EventKind, LaneError, LaneEvent, RunConfig, StateLane, Verdict};

/// These worlds judge what they observed after the run; they emit no trace events.
#[derive(Clone, Debug, serde::Serialize)]
enum Quiet {}

impl EventKind for Quiet {
    fn name(&self) -> &'static str {
        match *self {}
    }
}

fn world(setup: impl FnOnce() + 'static) -> Verdict {
    simulate(&RunConfig::seeded(11), Vec::<Box<dyn Checker<Quiet, ()>>>::new(), |_| setup()).verdict
}

/// An observer that records every event it receives.
fn recorder() -> (LaneObserver, Rc<RefCell<Vec<LaneEvent>>>) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let into = seen.clone();
    (Rc::new(move |event| into.borrow_mut().push(event)), seen)
}

#[test]
fn the_observer_sees_each_item_numbered_in_submission_order_submitted_started_and_ended() {
    let (observer, seen) = recorder();
    let verdict = world(move || {
        let lane = StateLane::new("numbered", 0u32);
        lane.set_observer(observer);
        spawn("submitter", async move {
            let runs: Vec<_> = (0..3).map(|_| lane.run_with(|n| *n += 1)).collect();
            for run in runs {
                run.await.expect("accepted");
            }
        });
    });
    assert_eq!(verdict, Verdict::Pass);
    use LaneEvent::*;
    let expected = vec![
        Submitted { item: 0 },
        Submitted { item: 1 },
        Submitted { item: 2 },
        TurnStarted { item: 0 },
        TurnEnded { item: 0 },
        TurnStarted { item: 1 },
        TurnEnded { item: 1 },
        TurnStarted { item: 2 },
        TurnEnded { item: 2 },
    ];
    assert_eq!(*seen.borrow(), expected);
}

#[test]
fn current_names_the_lane_whose_turn_runs_and_is_tells_it_from_another() {
    let seen = Rc::new(RefCell::new(None));
    let seen_in = seen.clone();
    let verdict = world(move || {
        let a = StateLane::new("a", ());
        let b = StateLane::new("b", ());
        spawn("caller", async move {
            let outside = StateLane::<()>::current();
            let (a2, b2) = (a.clone(), b.clone());
            let inside = a
                .run(async move {
                    let id = StateLane::<()>::current().expect("on a's turn");
                    (id.name.to_string(), a2.is(&id), b2.is(&id))
                })
                .await
                .expect("accepted");
            *seen_in.borrow_mut() = Some((outside, inside));
        });
    });
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(*seen.borrow(), Some((None, ("a".to_string(), true, false))));
}

#[test]
fn every_refusal_names_its_lane_and_says_why() {
    let cases = [
        (LaneError::Reentrant { lane: "bindings".into() }, "reentrant"),
        (LaneError::Closed { lane: "bindings".into() }, "closed"),
        (LaneError::Aborted { lane: "bindings".into() }, "node died"),
    ];
    for (error, why) in cases {
        let text = error.to_string();
        assert!(text.contains("bindings") && text.contains(why), "{error:?} reads {text:?}");
    }
}

#[test]
fn a_turn_that_yields_keeps_the_lane_until_it_ends() {
    let (observer, seen) = recorder();
    let verdict = world(move || {
        let lane = StateLane::new("yielding", ());
        lane.set_observer(observer);
        let second = lane.clone();
        spawn("first", async move {
            lane.run(async {
                for _ in 0..3 {
                    yield_now().await;
                }
            })
            .await
            .expect("accepted");
        });
        spawn("second", async move { second.run(async {}).await.expect("accepted") });
    });
    assert_eq!(verdict, Verdict::Pass);
    let turns: Vec<LaneEvent> =
        seen.borrow().iter().copied().filter(|e| !matches!(e, LaneEvent::Submitted { .. })).collect();
    use LaneEvent::*;
    assert_eq!(
        turns,
        vec![TurnStarted { item: 0 }, TurnEnded { item: 0 }, TurnStarted { item: 1 }, TurnEnded { item: 1 }]
    );
}

#[test]
fn a_lane_answers_to_the_name_it_was_given() {
    let names = Rc::new(RefCell::new(Vec::new()));
    let names_in = names.clone();
    let verdict = world(move || {
        for name in ["bindings", "lane-3"] {
            names_in.borrow_mut().push(StateLane::new(name, ()).name().to_string());
        }
    });
    assert_eq!(verdict, Verdict::Pass);
    assert_eq!(*names.borrow(), vec!["bindings", "lane-3"]);
}

#[test]
fn a_wait_on_a_lane_dropped_after_its_world_was_left_drops_quietly() {
    use sutra_sim_core::executor::{sleep, Executor};
    use sutra_sim_core::{Entropy, StrategyConfig};
    let executor = Executor::new(Entropy::random(5), StrategyConfig::Random);
    {
        let _entered = executor.enter();
        let lane = StateLane::new("busy", ());
        let holder = lane.clone();
        spawn("holder", async move {
            let _ = holder.run(sleep(std::time::Duration::from_secs(1))).await;
        });
        spawn("waiter", async move {
            let _ = lane.run(async {}).await;
        });
        // Every task polled until both wait: the holder on its sleep, the waiter on the lane.
        while executor.step() == sutra_sim_core::Step::Polled {}
    }
    // The world is left with the waiter still waiting; its tasks drop with the executor,
    // outside any world, and the wait's bookkeeping must not reach for one.
    drop(executor);
}
