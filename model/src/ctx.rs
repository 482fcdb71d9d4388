//! The context of one run: what every component shares and nothing more — the scenario and
//! the seed's effective faults, the mutant switch, the tracer, the heal flag, the id
//! counters, and the one path by which faults fire and are reported. It sits below every
//! component (it knows no store, broker or replica), so a component takes the context plus
//! the handles of the components it really talks to, never the whole world.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::{Stream, Tracer};

use crate::event::ModelEvent;
use crate::faults::kind::FaultKind;
use crate::ids::{ExecId, ProcessId, ResumePath};
use crate::mutant::Mutant;
use crate::ratio::Ratio;
use crate::scenario::{Faults, Scenario};

/// The scenario and the effective faults of one seed: shared, read-only, by the model and
/// the checkers' view (one copy per run).
#[derive(Debug)]
pub struct Config {
    /// The scenario being run (its `faults` are the configured ones).
    pub scenario: Scenario,
    /// The fault options in force for this seed, after the swarm's selection.
    pub faults: Faults,
}

/// Where a fault kind draws its occurrences from: the kind, for the report, and the
/// sub-stream, so that a new fault draw in one subsystem does not reshuffle the others.
#[derive(Clone, Copy, Debug)]
pub struct FaultGate {
    /// The kind its injections are reported as.
    pub kind: FaultKind,
    /// The entropy sub-stream it draws from.
    pub stream: Stream,
}

impl FaultGate {
    /// The gate of a fault drawn on the injector's tick or at a model action, from the
    /// injector's own stream.
    pub const fn tick(kind: FaultKind) -> FaultGate {
        FaultGate { kind, stream: crate::streams::FAULTS }
    }
}

/// How the world freezes a process for a fault striking inside it.
pub type PauseProcess = Box<dyn Fn(ProcessId)>;

/// The shared context of one run.
pub struct Context {
    /// The scenario and the effective faults.
    pub config: Rc<Config>,
    /// The mutant switched on, if any. Only the model's code looks at it.
    pub mutant: Option<Mutant>,
    /// The trace.
    pub tracer: Tracer<ModelEvent>,
    /// Set once the heal phase began: no more faults. Invariant: never unset.
    healed: Cell<bool>,
    /// Claim bounces so far: (relay, timer) — the R13 meter.
    bounces: Cell<(u32, u32)>,
    next_exec: Cell<u32>,
    next_process: Cell<u32>,
    next_operation: Cell<u32>,
    /// Freezes a process from inside it, for a fault that strikes at a model action (the
    /// lease holder pausing between its sweep's statements). Set by the world, which knows
    /// the replicas; the context does not (a `Weak` inside keeps the world collectable).
    pause_process: RefCell<Option<PauseProcess>>,
}

impl Context {
    /// A context for `config` with `mutant` switched on.
    pub fn new(config: Rc<Config>, mutant: Option<Mutant>, tracer: Tracer<ModelEvent>) -> Context {
        Context {
            config,
            mutant,
            tracer,
            healed: Cell::new(false),
            bounces: Cell::new((0, 0)),
            next_exec: Cell::new(0),
            next_process: Cell::new(0),
            next_operation: Cell::new(0),
            pause_process: RefCell::new(None),
        }
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.config.scenario
    }

    /// The fault options in force for this seed.
    pub fn faults(&self) -> &Faults {
        &self.config.faults
    }

    /// True if `mutant` is the one switched on.
    pub fn mutant_is(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }

    /// Emits an event.
    pub fn emit(&self, event: ModelEvent) {
        self.tracer.emit(event);
    }

    /// True once the heal phase began.
    pub fn healed(&self) -> bool {
        self.healed.get()
    }

    /// Begins the heal phase; returns false if it had already begun.
    pub fn begin_heal(&self) -> bool {
        !self.healed.replace(true)
    }

    /// True if a fault of this rate fires now, drawn from the gate's stream (never after
    /// the heal). The one way any fault of the model decides to fire.
    pub fn fires(&self, gate: FaultGate, rate: Ratio) -> bool {
        !self.healed.get() && !rate.is_never() && rate.draw(gate.stream)
    }

    /// As [`Context::fires`], but never boosted ([`Ratio::draw_exact`]).
    pub fn fires_exact(&self, gate: FaultGate, rate: Ratio) -> bool {
        !self.healed.get() && !rate.is_never() && rate.draw_exact(gate.stream)
    }

    /// Reports an injected fault in the trace. The one way any fault is reported.
    pub fn report(&self, kind: FaultKind, replica: Option<u32>, detail: Duration) {
        self.emit(ModelEvent::FaultInjected {
            fault: kind,
            replica,
            detail_ns: sutra_sim_core::time::duration_nanos(detail),
            // The sender's task, also for a request the store takes on the wire's task.
            task: crate::sender::sender(),
        });
    }

    /// Lends the context the world's way of freezing a process (see [`Context::pause_process`]).
    pub fn set_pause_process(&self, pause: PauseProcess) {
        *self.pause_process.borrow_mut() = Some(pause);
    }

    /// Freezes `process` now (a no-op before the world lent its way, or if the process is
    /// not alive). The caller's task stops at its next await until the process resumes.
    pub fn pause_process(&self, process: ProcessId) {
        if let Some(pause) = self.pause_process.borrow().as_ref() {
            pause(process);
        }
    }

    /// A fresh execution id.
    pub fn new_exec(&self) -> ExecId {
        ExecId(bump(&self.next_exec))
    }

    /// A fresh process id (every boot of a replica is a new process).
    pub fn new_process(&self) -> ProcessId {
        ProcessId(bump(&self.next_process))
    }

    /// A fresh administrative operation number.
    pub fn new_operation(&self) -> u32 {
        bump(&self.next_operation)
    }

    /// Counts a claim bounce on the R13 meter.
    pub fn count_bounce(&self, path: ResumePath) {
        let (relay, timer) = self.bounces.get();
        match path {
            ResumePath::Timer => self.bounces.set((relay, timer + 1)),
            ResumePath::Migration => {}
            _ => self.bounces.set((relay + 1, timer)),
        }
    }

    /// The R13 meter: claim bounces so far, (relay, timer).
    pub fn bounces(&self) -> (u32, u32) {
        self.bounces.get()
    }
}

/// The next number of a counter that starts at 1.
fn bump(counter: &Cell<u32>) -> u32 {
    let id = counter.get().checked_add(1).expect("id counters stay far below u32::MAX within a run's budgets");
    counter.set(id);
    id
}
