//! Pull workers: nodes that lock task rows, work for a long time, and complete with a
//! fresh delivery (R17). The long wait lives in the task row's lock, never in an instance
//! claim: the parked instance committed and released before the worker started.
//!
//! Both calls cross the store's faulty boundary. A lock whose reply was lost may have
//! locked a row for this worker, which does not know which: the worker works only on a
//! lock it was told of, and the unknown one runs out and another worker (or this one)
//! takes the task over — the at-least-once path an expired lock already takes. A
//! completion whose reply was lost may have published the completion's relay: the worker
//! does not complete it again (a repeat would be harmless, a duplicate relay the claim
//! makes safe); if it was not applied, the lock runs out and the task is repeated.

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::sleep;

use crate::ctx::Context;
use crate::store::{Reply, Store};
use crate::streams;

/// How often an idle worker asks for a task.
pub const PULL_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The loop of pull worker `worker`.
pub async fn run(ctx: Rc<Context>, store: Store, worker: u32) {
    let lock_duration = ctx.scenario().timeouts.task_lock_duration;
    loop {
        sleep(PULL_POLL_INTERVAL).await;
        // Skip the polls that cannot find a task (see `Store::earliest_task_lockable`).
        if !store.idle_until_work(store.earliest_task_lockable(), PULL_POLL_INTERVAL).await {
            continue;
        }
        let Reply::Answered(Some(task)) = store.lock_task(worker, lock_duration).await else { continue };
        sleep(streams::millis_up_to(streams::PULL, ctx.scenario().workload.pull_work_max)).await;
        // The completion re-enters as a fresh relay, published by the store's outbox.
        let _unknown_if_lost = store.complete_task(worker, task.instance, task.expects).await;
    }
}
