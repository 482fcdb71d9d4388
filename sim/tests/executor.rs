//! The executor end to end: virtual time, determinism, nodes dying, restarting and pausing.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self as sim, sleep};
use sutra_sim_core::{simulate, Check, Checker, CheckerKind, Event, EventKind, NodeStatus, RunConfig, Verdict};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
enum Ev {
    Tick(u32, u32),
}

impl EventKind for Ev {
    fn name(&self) -> &'static str {
        "tick"
    }
}

fn ticking(seed: u64) -> sutra_sim_core::Outcome<Ev> {
    let mut config = RunConfig::seeded(seed);
    config.keep_trace = true;
    simulate(&config, Vec::new(), |tracer| {
        for task in 0..5u32 {
            let tracer = tracer.clone();
            sim::spawn(format!("ticker{task}"), async move {
                for i in 0..10 {
                    let ms = sim::choose(20) as u64;
                    sleep(Duration::from_millis(ms)).await;
                    tracer.emit(Ev::Tick(task, i));
                }
            });
        }
    })
}

#[test]
fn the_same_seed_gives_the_same_trace_and_fingerprint() {
    let a = ticking(11);
    let b = ticking(11);
    assert_eq!(a.verdict, Verdict::Pass);
    assert_eq!(a.events, 50);
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert_ne!(a.fingerprint, ticking(12).fingerprint);
}

#[test]
fn time_jumps_to_the_next_timer() {
    let out = ticking(3);
    let times: Vec<u64> = out.trace.iter().map(|e| e.time.0).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "time never goes back");
    assert!(out.sim_time.as_millis() <= 10 * 19);
}

#[test]
fn a_replayed_tape_gives_the_same_run() {
    let first = ticking(5);
    let mut config = RunConfig::seeded(0);
    config.entropy = sutra_sim_core::EntropyMode::Tape(first.tape.clone());
    config.keep_trace = true;
    let tracer_run = |config: &RunConfig| {
        simulate(config, Vec::new(), |tracer: &sutra_sim_core::Tracer<Ev>| {
            for task in 0..5u32 {
                let tracer = tracer.clone();
                sim::spawn(format!("ticker{task}"), async move {
                    for i in 0..10 {
                        let ms = sim::choose(20) as u64;
                        sleep(Duration::from_millis(ms)).await;
                        tracer.emit(Ev::Tick(task, i));
                    }
                });
            }
        })
    };
    let replayed = tracer_run(&config);
    assert_eq!(replayed.fingerprint, first.fingerprint);
    assert_eq!(replayed.tape, first.tape);
}

#[test]
fn a_killed_node_runs_no_more_and_a_restart_boots_a_new_incarnation() {
    let log = Rc::new(RefCell::new(Vec::<String>::new()));
    let log2 = log.clone();
    let out = simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let boot_log = log2.clone();
        let node = sim::add_node(
            "replica",
            Some(Rc::new(move |node| {
                let log = boot_log.clone();
                sim::spawn_daemon_on(node, "beat", async move {
                    loop {
                        log.borrow_mut().push(format!("beat@{}#{}", sim::now().as_millis(), sim::incarnation(node)));
                        sleep(Duration::from_millis(10)).await;
                    }
                });
            })),
        );
        sim::spawn("driver", async move {
            sleep(Duration::from_millis(25)).await;
            sim::kill(node);
            assert_eq!(sim::node_status(node), NodeStatus::Dead);
            sleep(Duration::from_millis(30)).await;
            sim::restart(node);
            sleep(Duration::from_millis(15)).await;
        });
    });
    assert_eq!(out.verdict, Verdict::Pass);
    assert_eq!(*log.borrow(), vec!["beat@0#0", "beat@10#0", "beat@20#0", "beat@55#1", "beat@65#1"]);
}

#[test]
fn a_task_that_kills_its_own_node_finishes_its_poll_on_the_world_node() {
    // The trace stamps an event with the node of the task that emits it; a task that has
    // just ended (with its node) has none, and the rest of its poll is the world's.
    let mut config = RunConfig::seeded(1);
    config.keep_trace = true;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seen2 = seen.clone();
    let out = simulate(&config, Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |tracer| {
        let tracer = tracer.clone();
        let node = sim::add_node("replica", None);
        sim::spawn_on(node, "suicide", async move {
            seen2.borrow_mut().push(sim::current_node());
            tracer.emit(Ev::Tick(0, 0));
            sim::kill(sim::current_node());
            seen2.borrow_mut().push(sim::current_node());
            tracer.emit(Ev::Tick(0, 1));
        });
    });
    assert_eq!(out.verdict, Verdict::Pass);
    let replica = sutra_sim_core::NodeId(1);
    assert_eq!(*seen.borrow(), vec![replica, sutra_sim_core::NodeId::WORLD]);
    let nodes: Vec<_> = out.trace.iter().map(|e| e.node).collect();
    assert_eq!(nodes, vec![replica, sutra_sim_core::NodeId::WORLD]);
}

#[test]
fn a_paused_node_holds_its_timers_and_resumes_where_it_was() {
    let log = Rc::new(RefCell::new(Vec::<u64>::new()));
    let log2 = log.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let node = sim::add_node("replica", None);
        let log = log2.clone();
        sim::spawn_on(node, "worker", async move {
            for _ in 0..3 {
                sleep(Duration::from_millis(10)).await;
                log.borrow_mut().push(sim::now().as_millis());
            }
        });
        sim::spawn("driver", async move {
            sleep(Duration::from_millis(15)).await;
            sim::pause(node);
            sleep(Duration::from_millis(100)).await;
            sim::resume(node);
        });
    });
    // The 20ms timer fired while paused and was held until the resume at 115ms.
    assert_eq!(*log.borrow(), vec![10, 115, 125]);
}

/// Runs a 1 s sleep on a node with `clock`, while a driver on the world node sets the
/// node's clock to `step` (if any) at 400 ms; returns when the sleep ended, in sim ms.
fn one_second_sleep_on(clock: sutra_sim_core::NodeClock, step: Option<sutra_sim_core::NodeClock>) -> u64 {
    let ended = Rc::new(RefCell::new(0u64));
    let ended2 = ended.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let node = sim::add_node("replica", None);
        sim::set_clock(node, clock);
        let ended = ended2.clone();
        sim::spawn_on(node, "sleeper", async move {
            sleep(Duration::from_secs(1)).await;
            *ended.borrow_mut() = sim::now().as_millis();
        });
        if let Some(step) = step {
            sim::spawn("driver", async move {
                sleep(Duration::from_millis(400)).await;
                sim::set_clock(node, step);
            });
        }
    });
    let at = *ended.borrow();
    at
}

#[test]
fn a_sleep_follows_its_nodes_clock() {
    use sutra_sim_core::NodeClock;
    assert_eq!(one_second_sleep_on(NodeClock::EXACT, None), 1_000);
    // An offset alone changes no span.
    assert_eq!(one_second_sleep_on(NodeClock { offset_ns: 5_000_000_000, drift_ppm: 0 }, None), 1_000);
    // A clock running 10% fast ends the sleep early in simulated time; 10% slow, late.
    assert_eq!(one_second_sleep_on(NodeClock { offset_ns: 0, drift_ppm: 100_000 }, None), 909);
    assert_eq!(one_second_sleep_on(NodeClock { offset_ns: 0, drift_ppm: -100_000 }, None), 1_111);
}

#[test]
fn a_clock_step_moves_the_end_of_a_pending_sleep() {
    use sutra_sim_core::NodeClock;
    let exact = NodeClock::EXACT;
    // Forward by 300ms at 400ms: the 1 s sleep ends at 700ms of simulated time.
    assert_eq!(one_second_sleep_on(exact, Some(NodeClock { offset_ns: 300_000_000, drift_ppm: 0 })), 700);
    // Forward past the deadline: it ends at the step.
    assert_eq!(one_second_sleep_on(exact, Some(NodeClock { offset_ns: 2_000_000_000, drift_ppm: 0 })), 400);
    // Back by 300ms: it ends 300ms late.
    let skewed = NodeClock { offset_ns: 1_000_000_000, drift_ppm: 0 };
    assert_eq!(one_second_sleep_on(skewed, Some(NodeClock { offset_ns: 700_000_000, drift_ppm: 0 })), 1_300);
}

#[test]
fn a_clock_behind_simulated_time_runs_from_the_start_so_a_sleep_on_it_lasts_its_length() {
    use sutra_sim_core::NodeClock;
    // 12 s behind: the clock reads 0 until simulated time reaches 12 s (a reading is never
    // negative), but it runs all along. A sleep measured on a reading that stood still
    // there would end only once the clock read 1 s — at 13 s of simulated time.
    let behind = NodeClock { offset_ns: -12_000_000_000, drift_ppm: 0 };
    assert_eq!(one_second_sleep_on(behind, None), 1_000);
    // Slow as well: 10% slow still means 1.111 s, not the 12 s it takes to read zero.
    assert_eq!(one_second_sleep_on(NodeClock { drift_ppm: -100_000, ..behind }, None), 1_111);
    // A step back while the clock is still below zero moves the end by the step, no more.
    let further = NodeClock { offset_ns: -22_000_000_000, drift_ppm: 0 };
    assert_eq!(one_second_sleep_on(behind, Some(further)), 11_000);
    // A step forward that leaves it below zero ends the sleep early by the step.
    let nearer = NodeClock { offset_ns: -11_700_000_000, drift_ppm: 0 };
    assert_eq!(one_second_sleep_on(behind, Some(nearer)), 700);
}

struct NoTickThree;
impl Checker<Ev, ()> for NoTickThree {
    fn name(&self) -> &str {
        "no-tick-three"
    }
    fn kind(&self) -> CheckerKind {
        CheckerKind::Always
    }
    fn on_event(&mut self, event: &Event<Ev>, _: &()) -> Check {
        match event.kind {
            Ev::Tick(_, 3) => Check::Fail(format!("tick 3 at {}", event.time)),
            _ => Check::Ok,
        }
    }
}

#[test]
fn the_first_failing_always_checker_ends_the_run() {
    let out = simulate(&RunConfig::seeded(2), vec![Box::new(NoTickThree) as Box<dyn Checker<Ev, ()>>], |tracer| {
        let tracer = tracer.clone();
        sim::spawn("t", async move {
            for i in 0..10 {
                tracer.emit(Ev::Tick(0, i));
                sim::yield_now().await;
            }
        });
    });
    assert!(matches!(&out.verdict, Verdict::Violation { checker, .. } if checker == "no-tick-three"));
    assert_eq!(out.events, 4);
    assert_eq!(out.failing_event, Some(3));
}

#[test]
fn a_panic_in_model_code_is_a_crash_not_the_end_of_the_process() {
    let out = simulate(&RunConfig::seeded(2), Vec::<Box<dyn Checker<Ev, ()>>>::new(), |_| {
        sim::spawn("t", async move {
            sleep(Duration::from_millis(1)).await;
            panic!("model bug at step 3");
        });
    });
    assert_eq!(out.verdict, Verdict::Crash { message: "model bug at step 3".into() });
}

#[test]
fn a_finished_run_polls_no_task_though_some_are_ready() {
    let out = simulate(&RunConfig::seeded(1), Vec::new(), |tracer| {
        let tracer = tracer.clone();
        sim::spawn("spinner", async move {
            for i in 0..1_000 {
                tracer.emit(Ev::Tick(0, i));
                sim::yield_now().await;
            }
        });
        sim::spawn("finisher", async { sim::finish() });
    });
    assert_eq!(out.verdict, Verdict::Pass);
    assert!(out.events < 10, "the spinner ran on after the run finished: {} events", out.events);
}

#[test]
fn marking_is_on_exactly_in_a_run_that_collects_marks() {
    for collect in [false, true] {
        let seen = Rc::new(RefCell::new(None));
        let mut config = RunConfig::seeded(1);
        config.marks = collect;
        let inside = seen.clone();
        simulate(&config, Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
            *inside.borrow_mut() = Some(sutra_sim_core::marks::marking());
        });
        assert_eq!(*seen.borrow(), Some(collect));
    }
}

#[test]
fn a_task_reads_its_own_nodes_clock() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let inside = seen.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let ahead = sim::add_node("ahead", None);
        sim::set_clock(ahead, sutra_sim_core::NodeClock { offset_ns: 3_000_000_000, drift_ppm: 0 });
        let seen = inside.clone();
        sim::spawn_on(ahead, "reader", async move {
            sleep(Duration::from_millis(5)).await;
            seen.borrow_mut().push((sim::now().as_nanos(), sim::local_now().as_nanos()));
        });
    });
    assert_eq!(*seen.borrow(), [(5_000_000, 3_005_000_000)]);
}

#[test]
fn a_nodes_clock_reads_back_as_it_was_set() {
    // The clock-skew injector steps a node's clock from its current reading: it must read
    // back what was set, not a default.
    let seen = Rc::new(RefCell::new(None));
    let inside = seen.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let skewed = sim::add_node("skewed", None);
        let clock = sutra_sim_core::NodeClock { offset_ns: -7_000, drift_ppm: 250 };
        sim::set_clock(skewed, clock);
        *inside.borrow_mut() = Some((sim::clock(skewed), sim::clock(sutra_sim_core::NodeId::WORLD)));
    });
    let (skewed, world) = seen.borrow().expect("read inside the world");
    assert_eq!(skewed, sutra_sim_core::NodeClock { offset_ns: -7_000, drift_ppm: 250 });
    assert_eq!(world, sutra_sim_core::NodeClock::EXACT);
}

#[test]
fn a_mark_reported_in_a_run_that_collects_marks_is_in_its_outcome_at_its_tape_position() {
    use sutra_sim_core::marks::{slot_of, MarkKind};
    for collect in [false, true] {
        let mut config = RunConfig::seeded(3);
        config.marks = collect;
        let out = simulate(&config, Vec::<Box<dyn Checker<Ev, ()>>>::new(), |_| {
            sim::spawn("marker", async {
                let _ = sim::choose(7);
                let _ = sim::choose(7);
                sutra_sim_core::mark(42);
            });
        });
        let expected: Vec<_> =
            if collect { vec![(slot_of(42, MarkKind::State), out.tape.len(), MarkKind::State)] } else { Vec::new() };
        let got: Vec<_> = out.marks.iter().map(|m| (m.slot, m.position, m.kind)).collect();
        assert_eq!(got, expected, "marks collected: {collect}");
    }
}

#[test]
fn an_event_kind_that_names_no_lane_or_instance_reports_none() {
    // Stories and timelines place an event by these: a kind that does not say must not be
    // put on lane 0 or instance 0.
    assert_eq!(Ev::Tick(1, 2).lane(), None);
    assert_eq!(Ev::Tick(1, 2).instance(), None);
}

#[test]
fn an_event_kind_that_names_no_tag_is_heard_under_tag_0() {
    struct TagZero;
    impl Checker<Ev, ()> for TagZero {
        fn name(&self) -> &str {
            "tag-zero"
        }
        fn kind(&self) -> CheckerKind {
            CheckerKind::Always
        }
        fn on_event(&mut self, _: &Event<Ev>, _: &()) -> Check {
            Check::Fail("heard it".into())
        }
        fn interest(&self) -> u64 {
            sutra_sim_core::trace::tag_mask(&[0])
        }
    }
    let out = simulate(&RunConfig::seeded(1), vec![Box::new(TagZero) as Box<dyn Checker<Ev, ()>>], |tracer| {
        let tracer = tracer.clone();
        sim::spawn("emitter", async move { tracer.emit(Ev::Tick(0, 0)) });
    });
    assert_eq!(out.verdict.checker(), Some("tag-zero"));
}

#[test]
fn another_nodes_clock_is_read_as_that_node_reads_it() {
    let seen = Rc::new(RefCell::new(None));
    let inside = seen.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let ahead = sim::add_node("ahead", None);
        sim::set_clock(ahead, sutra_sim_core::NodeClock { offset_ns: 3_000_000_000, drift_ppm: 0 });
        let seen = inside.clone();
        sim::spawn("reader", async move {
            sleep(Duration::from_millis(5)).await;
            *seen.borrow_mut() = Some((sim::node_now(ahead).as_nanos(), sim::node_now(sim::current_node()).as_nanos()));
        });
    });
    assert_eq!(*seen.borrow(), Some((3_005_000_000, 5_000_000)));
}

#[test]
fn a_task_draws_from_the_runs_tape_and_an_exact_chance_comes_true_on_its_high_values() {
    let mut config = RunConfig::seeded(0);
    config.entropy = sutra_sim_core::EntropyMode::Tape(sutra_sim_core::Tape(vec![5, 2, 1]));
    let seen = Rc::new(RefCell::new(None));
    let inside = seen.clone();
    simulate(&config, Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let seen = inside.clone();
        sim::spawn("drawer", async move {
            let model = sutra_sim_core::Stream::MODEL;
            let drawn = sim::choose_in(model, 10);
            // One in three: the value 2 of [0, 3) is "yes", 1 is "no".
            *seen.borrow_mut() = Some((drawn, sim::chance_in_exact(model, 1, 3), sim::chance_in_exact(model, 1, 3)));
        });
    });
    assert_eq!(*seen.borrow(), Some((5, true, false)));
}

#[test]
fn elapse_and_sleep_until_keep_simulated_time_whatever_the_nodes_clock() {
    let ends = Rc::new(RefCell::new(Vec::new()));
    let inside = ends.clone();
    simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let fast = sim::add_node("fast", None);
        sim::set_clock(fast, sutra_sim_core::NodeClock { offset_ns: 3_000_000_000, drift_ppm: 250_000 });
        let ends = inside.clone();
        sim::spawn_on(fast, "waiter", async move {
            sim::elapse(Duration::from_millis(5)).await;
            ends.borrow_mut().push(sim::now().as_millis());
            sim::sleep_until(sutra_sim_core::SimTime(12_000_000)).await;
            ends.borrow_mut().push(sim::now().as_millis());
        });
    });
    assert_eq!(*ends.borrow(), [5, 12]);
}

/// A driver may step a world on past a hang, with new work: a sleeper killed with its node
/// left a timer ahead of the present, which must not hold back the timers set after it.
#[test]
fn a_world_stepped_on_after_a_hang_times_new_sleeps_from_the_present() {
    use sutra_sim_core::{Entropy, Executor, Step, StrategyConfig};
    let executor = Executor::new(Entropy::random(1), StrategyConfig::Random);
    let _entered = executor.enter();
    let doomed = sim::add_node("doomed", None);
    sim::spawn_on(doomed, "sleeper", async { sleep(Duration::from_secs(10)).await });
    let (_never, waited) = sutra_sim_core::sync::oneshot::<()>();
    sim::spawn("waiter", async move {
        let _ = waited.await;
    });
    sim::spawn("killer", async move {
        sleep(Duration::from_millis(1)).await;
        sim::kill(doomed);
    });
    let step_until_stuck = || loop {
        if let Step::Stuck(..) = executor.step() {
            return sim::now().as_millis();
        }
    };
    assert_eq!(step_until_stuck(), 1, "the dead sleeper's timer moves no time");
    let woke = Rc::new(RefCell::new(None));
    let inside = woke.clone();
    sim::spawn("late", async move {
        sleep(Duration::from_millis(1)).await;
        *inside.borrow_mut() = Some(sim::now().as_millis());
    });
    assert_eq!(step_until_stuck(), 2);
    assert_eq!(*woke.borrow(), Some(2));
}

/// A task that pauses its own node, wakes itself and ends in one poll leaves its woken
/// entry behind on the paused node; dropping it must keep the node's other woken tasks.
#[test]
fn a_task_that_pauses_its_own_node_and_ends_awake_leaves_the_nodes_other_tasks_to_run_at_resume() {
    let mut config = RunConfig::seeded(1);
    // A tape of zeros: the oldest ready task runs first.
    config.entropy = sutra_sim_core::EntropyMode::Tape(sutra_sim_core::Tape(Vec::new()));
    let ran_at = Rc::new(RefCell::new(None));
    let inside = ran_at.clone();
    let out = simulate(&config, Vec::<Box<dyn Checker<Ev, ()>>>::new(), move |_| {
        let replica = sim::add_node("replica", None);
        sim::spawn_on(replica, "pauser", async move {
            sim::pause(replica);
            std::future::poll_fn(|cx| {
                cx.waker().wake_by_ref();
                std::task::Poll::Ready(())
            })
            .await;
        });
        sim::spawn_on(replica, "other", async move { *inside.borrow_mut() = Some(sim::now().as_millis()) });
        sim::spawn("resumer", async move {
            sleep(Duration::from_millis(5)).await;
            sim::resume(replica);
        });
    });
    assert_eq!(out.verdict, Verdict::Pass);
    assert_eq!(*ran_at.borrow(), Some(5));
}

#[test]
fn a_runs_outcome_names_every_node_by_id_the_world_first() {
    let out = simulate(&RunConfig::seeded(1), Vec::<Box<dyn Checker<Ev, ()>>>::new(), |_| {
        sim::add_node("replica-0", None);
        sim::add_node("store", None);
    });
    assert_eq!(out.node_names, ["world", "replica-0", "store"]);
}

/// Records, when dropped, its label and whether a world was entered then.
struct DropProbe(Rc<RefCell<Vec<(&'static str, bool)>>>, &'static str);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.borrow_mut().push((self.1, sim::in_simulation()));
    }
}

/// A task's destructor may touch the world (a handle that calls back into the executor):
/// an executor dropped while entered drops its tasks in the world.
#[test]
fn an_executor_dropped_while_entered_drops_its_tasks_in_the_world() {
    use sutra_sim_core::{Entropy, Executor, StrategyConfig};
    let drops = Rc::new(RefCell::new(Vec::new()));
    let executor = Executor::new(Entropy::random(1), StrategyConfig::Random);
    let entered = executor.enter();
    let probe = DropProbe(drops.clone(), "task");
    sim::spawn("sleeper", async move {
        let _probe = probe;
        sleep(Duration::from_secs(3_600)).await;
    });
    executor.step();
    drop(executor);
    assert_eq!(*drops.borrow(), [("task", true)]);
    drop(entered);
}
