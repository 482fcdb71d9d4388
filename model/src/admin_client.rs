//! The operator and its admin client: at random times during the faulty phase the operator
//! orders a migration of a random instance to a random lane; the client sends it to a
//! replica's admin API and acts on the structured code of the answer (R7, spec 000: the code lets "a caller tell
//! 'you lost a race, try again' apart from 'this will never work'").
//!
//! - `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` (409): lost a race — the same request (same request
//!   id, the next attempt number) is sent again after a capped exponential backoff, the
//!   runtime's own for a refused resume (`timeouts.timer_backoff_base`, doubling, at most
//!   `timer_backoff_max`), to the process that answered while it still serves, else to any
//!   replica that does. The budget is [`ADMIN_ATTEMPTS_MAX`] attempts: a migration that
//!   loses that many races in a row is handed back to the operator.
//! - `SUTRA.ADMIN.MIGRATE.VALIDATION` (422): will never work — never sent again.
//! - 200: done. A 500 (`SUTRA.ADMIN.MIGRATE.FAILED`) is neither a race nor a verdict on the
//!   request — its write may have landed though the reply was lost — so it is reported to
//!   the operator, not repeated; so is a request that got no answer (the process died), and
//!   one whose client hung up (the operator gave up on it).
//!
//! Nothing here is believed by a checker: the server witnesses what it received and what
//! it answered (`AdminRequestReceived`, `AdminRequestEnded`), and `codes-acted-on` judges
//! those. The careless clients live here: `admin-retries-validation` retries every answer
//! that is not a success, `admin-gives-up-on-claim-held` takes every 4xx as final.

use std::rc::Rc;
use std::time::Duration;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::sync::oneshot;
use sutra_sim_core::NodeId;

use crate::admin::{Answer, Order, Sent, Server};
use crate::event::AdminStatus;
use crate::ids::{Code, InstanceId};
use crate::mutant::Mutant;
use crate::spec::ADMIN_ATTEMPTS_MAX;
use crate::streams;
use crate::world::World;

/// The operator's client id, as the admin server authenticates it.
pub const OPERATOR_CLIENT: u32 = 0;
/// One attempt in this many is from an operator who hangs up before the answer.
const HANG_UP_ONE_IN: u32 = 4;
/// The longest a hanging-up operator waits before hanging up.
const HANG_UP_AFTER_MAX: Duration = Duration::from_millis(200);
/// Most fault ticks the client waits for some replica to serve a retry, when the process
/// that answered no longer does.
const SERVER_LOOKS_MAX: u32 = 600;

/// The operator: considers a migration every fault tick until the heal, and hands each one
/// it orders to its admin client ([`crate::admin_client`]), which sends it and acts on the
/// answer.
pub async fn operator(world: Rc<World>) {
    let phase = crate::faults::phase(&world.ctx, world.ctx.faults().tick);
    if !phase.is_zero() {
        sleep(phase).await;
    }
    let mut next_request = 0u32;
    loop {
        sleep(world.ctx.faults().tick).await;
        if world.ctx.healed() {
            return;
        }
        let rate = world.ctx.scenario().admin.migration_per_tick;
        if rate.is_never() || !rate.draw(streams::ADMIN) {
            continue;
        }
        let instances = world.ctx.scenario().workload.instances;
        let instance = InstanceId(executor::choose_in(streams::ADMIN, instances));
        let replica = executor::choose_in(streams::ADMIN, world.ctx.scenario().topology.replicas);
        let to_lane = executor::choose_in(streams::ADMIN, world.ctx.scenario().topology.lanes) as u16;
        // A replica shutting down no longer serves its admin API.
        let Some(server) = Server::of(&world, replica).filter(Server::running) else {
            continue;
        };
        let order = Order { client: OPERATOR_CLIENT, request: next_request, instance, to_lane };
        next_request += 1;
        executor::spawn_daemon_on(NodeId::WORLD, "admin:client", migrate(world.clone(), order, server));
    }
}

/// Sends `order` to `server` and acts on each answer until it is done.
pub async fn migrate(world: Rc<World>, order: Order, mut server: Server) {
    for attempt in 1..=ADMIN_ATTEMPTS_MAX {
        let Some(answer) = send(&world, &server, Sent { order, attempt }).await else {
            return;
        };
        if !sends_again(&world, answer) || attempt == ADMIN_ATTEMPTS_MAX {
            return;
        }
        sleep(backoff(&world, attempt)).await;
        match next_server(&world, server).await {
            Some(next) => server = next,
            None => return,
        }
    }
}

/// One attempt: the answer, or `None` if the process died before answering.
async fn send(world: &Rc<World>, server: &Server, sent: Sent) -> Option<Answer> {
    let (hang_up, hung_up) = oneshot::<()>();
    if executor::choose_in(streams::ADMIN, HANG_UP_ONE_IN) == 1 {
        let after = streams::millis_up_to(streams::ADMIN, HANG_UP_AFTER_MAX);
        executor::spawn_daemon_on(NodeId::WORLD, "admin:client-hangs-up", async move {
            sleep(after).await;
            hang_up.send(());
        });
    }
    server.send(world, sent, hung_up).await.ok()
}

/// True if the answer asks for the same request again.
fn sends_again(world: &World, answer: Answer) -> bool {
    if answer.status == AdminStatus::HungUp {
        // The operator hung up: it gave up on the request.
        return false;
    }
    if world.ctx.mutant_is(Mutant::AdminRetriesValidation) {
        // The careless client: "whatever failed may work next time".
        return answer.status != AdminStatus::Migrated;
    }
    if world.ctx.mutant_is(Mutant::AdminGivesUpOnClaimHeld) {
        // The careless client: "a 4xx is the caller's mistake; only server errors are retried".
        return answer.status == AdminStatus::Failed;
    }
    answer.code.is_some_and(Code::is_retryable_race)
}

/// The wait before attempt `attempt + 1`: the runtime's backoff for a refused resume,
/// doubling per attempt from `timer_backoff_base` and capped at `timer_backoff_max`.
fn backoff(world: &World, attempt: u32) -> Duration {
    let t = &world.ctx.scenario().timeouts;
    let doublings = attempt.saturating_sub(1).min(31);
    t.timer_backoff_base.saturating_mul(1 << doublings).min(t.timer_backoff_max)
}

/// Where the next attempt goes: the process that answered while it serves; else the first
/// replica that does, looked for once a fault tick (`None` if none does for
/// [`SERVER_LOOKS_MAX`] ticks).
async fn next_server(world: &World, last: Server) -> Option<Server> {
    if last.serves(world) {
        return Some(last);
    }
    let replicas = world.ctx.scenario().topology.replicas;
    for _ in 0..SERVER_LOOKS_MAX {
        if let Some(server) = (0..replicas).find_map(|r| Server::of(world, r)) {
            return Some(server);
        }
        sleep(world.ctx.faults().tick).await;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claim_held_is_a_race_and_only_validation_is_permanent() {
        for code in [Code::MigrateClaimHeld, Code::ResumeClaimHeld] {
            assert!(code.is_retryable_race() && !code.is_permanent(), "{code:?}");
        }
        assert!(Code::MigrateValidation.is_permanent() && !Code::MigrateValidation.is_retryable_race());
        assert!(!Code::MigrateFailed.is_permanent() && !Code::MigrateFailed.is_retryable_race());
    }
}
