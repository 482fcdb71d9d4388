//! The one micro-workload both runtimes run, defined once so the two sides cannot drift.
//!
//! [`TASKS`] tasks, each [`ITERATIONS`] times: sleep a uniformly random 1..=[`SLEEP_MS_MAX`]
//! virtual milliseconds, then update [`Shared`]. It is the shape of sutra-sim-core's bare
//! workload (`sim/src/bench.rs`) without its trace events, which madsim has no equivalent
//! of. The small duration range matters: deadlines collide, so several tasks are ready at
//! once and each scheduler makes real choices.
//!
//! Each runtime module (`on_sutra`, `on_madsim`) only supplies the spawning, sleeping and
//! random draws; the state, its update and the checksum live here.

/// Tasks per run.
pub const TASKS: u32 = 100;
/// Sleep-then-update iterations per task.
pub const ITERATIONS: u32 = 100;
/// Sleeps last 1 to this many virtual milliseconds, uniformly.
pub const SLEEP_MS_MAX: u32 = 10;

/// The state every task updates. Single-threaded on both sides, so it sits in an
/// `Rc<RefCell<_>>` on both: the update costs the same and only the runtime differs.
pub struct Shared {
    updates: u64,
    /// An order-sensitive hash of every (task, iteration) update: it changes if the
    /// interleaving changes, so equal checksums across runs mean equal schedules.
    mix: u64,
}

impl Shared {
    /// Nothing updated yet.
    pub fn new() -> Shared {
        // The FNV-1a 64 offset basis, so an empty run hashes to a recognisable value.
        Shared { updates: 0, mix: 0xcbf2_9ce4_8422_2325 }
    }

    /// Records that `task` finished the sleep of `iteration`.
    #[inline]
    pub fn update(&mut self, task: u32, iteration: u32) {
        self.updates += 1;
        let word = (u64::from(task) << 32) | u64::from(iteration);
        // FNV-1a 64 step over a whole word: cheap, and not commutative across steps.
        self.mix = (self.mix ^ word).wrapping_mul(0x0000_0100_0000_01b3);
    }

    /// The checksum of the final state. Panics if an update went missing, so a broken
    /// run can never be timed as a fast one.
    pub fn checksum(&self) -> u64 {
        assert_eq!(self.updates, u64::from(TASKS) * u64::from(ITERATIONS), "every iteration updates once");
        self.mix
    }
}
