//! Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).
//!
//! Each task gets a random priority when spawned; the highest-priority ready task runs.
//! At d − 1 change points, drawn up front among the first `horizon` steps, the task about
//! to run is demoted below every initial priority and the pick is made again. A bug that
//! needs d ordering constraints is then found with probability at least 1/(n·k^(d−1))
//! per run, far better than a uniform walk for deep, narrow orderings.
//!
//! All draws happen at construction and at spawn, so picks draw nothing; a tape of zeros
//! gives equal priorities and no change point: plain FIFO, the simplest schedule.

use super::Strategy;
use crate::entropy::{Entropy, Stream};
use crate::ids::TaskId;

/// Range of initial priorities drawn per task (above the change-point band).
const PRIORITY_RANGE: u32 = 1 << 16;

/// The PCT scheduler state.
pub struct Pct {
    /// `priority[slot]` of each task slot; change points set values below `depth`.
    priority: Vec<u32>,
    /// Steps (1-based) at which the running task is demoted, sorted; at most `depth - 1`.
    change_points: Vec<u64>,
    depth: u32,
    /// Change points passed so far; each demotes to a lower band than the last.
    demotions: u32,
    step: u64,
}

impl Pct {
    /// Draws d − 1 change points in `[1, horizon]`.
    pub fn new(depth: u32, horizon: u32, entropy: &mut Entropy) -> Pct {
        assert!(depth >= 1 && horizon >= 1, "pct needs depth and horizon of at least 1");
        // A zero draw means "no change point" (the simplest schedule); others are steps.
        let mut change_points: Vec<u64> = (1..depth)
            .map(|_| u64::from(entropy.choose_in(Stream::SCHEDULE, horizon + 1)))
            .filter(|&step| step > 0)
            .collect();
        change_points.sort_unstable();
        Pct { priority: Vec::new(), change_points, depth, demotions: 0, step: 0 }
    }
}

impl Strategy for Pct {
    fn name(&self) -> &'static str {
        "pct"
    }

    fn on_spawn(&mut self, task: TaskId, entropy: &mut Entropy) {
        let slot = task.slot() as usize;
        if self.priority.len() <= slot {
            self.priority.resize(slot + 1, 0);
        }
        self.priority[slot] = self.depth + entropy.choose_in(Stream::SCHEDULE, PRIORITY_RANGE);
    }

    fn pick(&mut self, ready: &[TaskId], _entropy: &mut Entropy) -> usize {
        self.step += 1;
        let best = |priority: &[u32]| -> usize {
            let mut best = 0;
            for (i, t) in ready.iter().enumerate().skip(1) {
                if priority[t.slot() as usize] > priority[ready[best].slot() as usize] {
                    best = i;
                }
            }
            best
        };
        let mut chosen = best(&self.priority);
        // Demote at each change point that falls on this step (points may coincide).
        while let Some(pos) = self.change_points.iter().position(|&s| s == self.step) {
            self.change_points.remove(pos);
            self.demotions += 1;
            debug_assert!(self.demotions < self.depth, "at most depth - 1 change points");
            self.priority[ready[chosen].slot() as usize] = self.depth - self.demotions;
            chosen = best(&self.priority);
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::Tape;

    /// A PCT scheduler of `depth` built from `draws` (its change points first), with one
    /// task spawned per slot of `tasks`, in order.
    fn pct(depth: u32, draws: Vec<u32>, tasks: &[TaskId]) -> Pct {
        let mut entropy = Entropy::replay(Tape(draws));
        let mut pct = Pct::new(depth, 1, &mut entropy);
        for &task in tasks {
            pct.on_spawn(task, &mut entropy);
        }
        pct
    }

    #[test]
    fn a_tape_of_zeros_runs_the_tasks_first_in_first_out() {
        let tasks = [0, 1, 2].map(TaskId::for_test);
        let mut fifo = pct(3, Vec::new(), &tasks);
        assert_eq!(fifo.pick(&tasks, &mut Entropy::random(0)), 0);
        assert_eq!(fifo.pick(&tasks[1..], &mut Entropy::random(0)), 0);
    }

    /// A change point demotes the task about to run below every initial priority, the
    /// lowest drawn (zero) included.
    #[test]
    fn a_demoted_task_runs_after_a_task_whose_priority_draw_was_zero() {
        let (high, zero) = (TaskId::for_test(0), TaskId::for_test(1));
        // A change point at step 1, then the priority draws: 7 for `high`, 0 for `zero`.
        let mut demoting = pct(2, vec![1, 7, 0], &[high, zero]);
        assert_eq!(demoting.pick(&[high, zero], &mut Entropy::random(0)), 1, "the demoted task ran first");
    }
}
