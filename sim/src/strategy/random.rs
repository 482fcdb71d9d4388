//! The `random` strategy: every ready task equally likely, 0 being the oldest ready task.

use super::Strategy;
use crate::entropy::{Entropy, Stream};
use crate::ids::TaskId;

/// Uniform random choice among ready tasks.
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomWalk;

impl Strategy for RandomWalk {
    fn name(&self) -> &'static str {
        "random"
    }

    #[inline]
    fn pick(&mut self, ready: &[TaskId], entropy: &mut Entropy) -> usize {
        entropy.choose_in(Stream::SCHEDULE, ready.len() as u32) as usize
    }
}
