//! The single-threaded executor of the simulated world.
//!
//! Tasks are futures owned by nodes. The executor keeps a ready list (in the order tasks
//! became ready) and a timer queue ordered by (deadline, registration order). It polls one
//! ready task at a time, chosen by the run's [`Strategy`](crate::strategy::Strategy); when
//! nothing is ready, virtual time jumps to the earliest timer. No thread, no wall clock, no
//! OS randomness: the same entropy gives the same sequence of polls.
//!
//! Model code reaches the executor through free functions ([`spawn`], [`sleep`], [`now`],
//! [`choose`], [`kill`], …) that use the executor installed on this thread by
//! [`Executor::enter`]; this is the ambient context of the simulated world, exactly one
//! per thread at a time, so parallel sweeps run one executor per thread.
//!
//! Wakers carry only a task id (slot and generation) and reach the executor through the
//! same thread-local, so waking allocates nothing and a waker of a finished or killed task
//! is harmlessly ignored.
//!
//! One concept per file, layered so that the files import one another without a cycle:
//! `state.rs` holds the world's data; `tasks.rs` the task table over it; `ambient.rs` the
//! thread-local and the free functions of model code; `wakers.rs` the wakers; `nodes.rs`
//! node faults; `honesty.rs` the environment's promises, asserted; `lanes.rs` the lane registry used for hang detection; `run_loop.rs` the
//! [`Executor`] and its step. This file only re-exports them.
//!
//! The executor logs through `tracing` under the target [`LOG_TARGET`]: node faults at
//! `debug`, task spawns and ends at `trace`. With no subscriber listening, each record
//! costs a check of the callsite's interest and nothing else: no formatting, no lookup of
//! names, no allocation. [`crate::log`] provides a subscriber that stamps each record with
//! the simulated time and the current node.

mod ambient;
mod honesty;
mod lanes;
mod nodes;
mod run_loop;
mod state;
mod tasks;
mod wakers;

pub use ambient::{
    chance_in, chance_in_exact, choose, choose_in, current_node, current_task, elapse, finish, in_simulation,
    local_now, node_now, now, sleep, sleep_until, spawn, spawn_daemon_on, spawn_on, stamp, yield_now, EnterGuard,
    Sleep, YieldNow, LOG_TARGET,
};
pub(crate) use ambient::{marking, peek_stamp, record_mark};
pub use honesty::BROKEN_PROMISE;
pub(crate) use honesty::{expect_kill_witnesses, witness_node_end};
pub use lanes::LANES_MAX;
pub(crate) use lanes::{
    current_lane, lane_name, leak_marker, register_lane, set_turn, set_waiting_on_lane, turn_waits_on_current_task,
};
pub use nodes::{
    add_node, clock, incarnation, kill, node_name, node_names, node_status, pause, restart, resume, set_clock,
    NODES_MAX,
};
pub use run_loop::{Executor, Step};
pub use tasks::TASKS_MAX;

pub use crate::ids::{LaneKey, TaskId, TaskName};
