//! A replica process, modelled as a group of OS threads sharing one process id: a
//! consumer taking relays from the broker, its execution lanes (each a worker thread under
//! a supervisor), a timer poller, a sweeper, an outbox publisher and a heartbeat. Every
//! thread passes the process's gate between its actions: a crashed process's threads stop
//! there without running any exit path, a paused process's threads wait there.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::broker::Delivery;
use crate::clock::Clock;

/// Why a thread stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gone {
    /// The process crashed (or the run is over): stop where you are.
    Crashed,
    /// This lane thread was killed mid-step: stop where you are.
    Killed,
}

/// Work for a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// A relay delivery.
    Relay(Delivery),
    /// A due timer fire of the row written for version `expects`.
    Timer {
        /// The instance.
        instance: u32,
        /// The version the timer row was written for.
        expects: u64,
    },
}

impl Work {
    /// The instance it is for.
    pub fn instance(&self) -> u32 {
        match self {
            Work::Relay(d) => d.instance,
            Work::Timer { instance, .. } => *instance,
        }
    }
}

/// What a lane's worker holds while it runs an execution: what its successor releases
/// and gives back if it is killed.
#[derive(Clone, Debug)]
pub struct Held {
    /// The work being executed.
    pub work: Work,
    /// The execution id.
    pub exec: u32,
    /// The claim's epoch, once granted.
    pub epoch: Option<u64>,
}

/// One lane's queue and its worker's state.
#[derive(Default)]
pub struct Lane {
    queue: Mutex<VecDeque<Work>>,
    ready: Condvar,
    /// What the worker holds (`None` between executions).
    pub held: Mutex<Option<Held>>,
    /// Set by the harness: the worker dies in the middle of its next step.
    pub kill: AtomicBool,
}

/// The longest a thread sleeps before it looks at its gate again.
const GATE_SLICE: Duration = Duration::from_millis(2);

/// A replica process.
pub struct Process {
    /// The replica slot it runs in.
    pub replica: u32,
    /// Its process id (a new one for every incarnation).
    pub pid: u32,
    /// `replica-N`.
    pub node: String,
    /// Its clock's offset from the store's, in ns.
    pub offset_ns: AtomicI64,
    crashed: AtomicBool,
    paused: Mutex<bool>,
    resumed: Condvar,
    /// Its lanes.
    pub lanes: Vec<Lane>,
    /// The store time (ns) its heartbeat last ran: the broker's sign of life.
    pub last_seen_ns: AtomicU64,
}

impl Process {
    /// A running process with `lanes` lanes.
    pub fn new(replica: u32, pid: u32, lanes: u32, offset_ns: i64) -> Process {
        Process {
            replica,
            pid,
            node: format!("replica-{replica}"),
            offset_ns: AtomicI64::new(offset_ns),
            crashed: AtomicBool::new(false),
            paused: Mutex::new(false),
            resumed: Condvar::new(),
            lanes: (0..lanes).map(|_| Lane::default()).collect(),
            last_seen_ns: AtomicU64::new(Clock::store().now_ns()),
        }
    }

    /// The owner id of lane `lane`: lane-scoped (spec 000: same owner ⇒ same lane), opaque.
    pub fn owner(&self, lane: u32) -> String {
        format!("p{}-lane{lane}", self.pid)
    }

    /// The process's own clock.
    pub fn local_ns(&self) -> u64 {
        Clock::store().local_ns(self.offset_ns.load(Ordering::Relaxed))
    }

    /// Passes the gate: `Err` if the process is gone; waits while it is paused.
    pub fn gate(&self) -> Result<(), Gone> {
        let mut paused = self.paused.lock().expect("gate lock");
        loop {
            if self.crashed.load(Ordering::SeqCst) {
                return Err(Gone::Crashed);
            }
            if !*paused {
                return Ok(());
            }
            paused = self.resumed.wait_timeout(paused, Duration::from_millis(20)).expect("gate lock").0;
        }
    }

    /// Sleeps `d` of the process's running time (a pause stops the count), passing the gate
    /// every few ms; `lane` set: that lane's worker may be killed here.
    pub fn sleep(&self, d: Duration, lane: Option<&Lane>) -> Result<(), Gone> {
        let mut left = d;
        loop {
            self.gate()?;
            if lane.is_some_and(|l| l.kill.swap(false, Ordering::SeqCst)) {
                return Err(Gone::Killed);
            }
            if left.is_zero() {
                return Ok(());
            }
            let slice = left.min(GATE_SLICE);
            std::thread::sleep(slice);
            left -= slice;
        }
    }

    /// Crashes the process: every thread stops at its next gate.
    pub fn crash(&self) {
        self.crashed.store(true, Ordering::SeqCst);
        for lane in &self.lanes {
            lane.ready.notify_all();
        }
        self.resumed.notify_all();
    }

    /// Whether it crashed (or was stopped).
    pub fn is_crashed(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }

    /// Freezes (`true`) or resumes (`false`) every thread of the process.
    pub fn set_paused(&self, paused: bool) {
        *self.paused.lock().expect("gate lock") = paused;
        self.resumed.notify_all();
    }

    /// Whether it is paused.
    pub fn is_paused(&self) -> bool {
        *self.paused.lock().expect("gate lock")
    }

    /// Queues work on lane `lane`.
    pub fn dispatch(&self, lane: u32, work: Work) {
        let l = &self.lanes[lane as usize];
        l.queue.lock().expect("lane lock").push_back(work);
        l.ready.notify_one();
    }

    /// The next work of lane `lane`, waiting for it at the gate.
    pub fn next_work(&self, lane: u32) -> Result<Work, Gone> {
        let l = &self.lanes[lane as usize];
        loop {
            self.gate()?;
            let mut q = l.queue.lock().expect("lane lock");
            if let Some(w) = q.pop_front() {
                return Ok(w);
            }
            let _ = l.ready.wait_timeout(q, Duration::from_millis(10)).expect("lane lock");
        }
    }

    /// Work queued on any lane and not yet taken.
    pub fn queued(&self) -> usize {
        self.lanes.iter().map(|l| l.queue.lock().expect("lane lock").len()).sum()
    }
}
