//! Administrative migration: at random times an operator moves an instance to another
//! lane. The migration claims under a distinct owner that no lane can produce (R15); a
//! refusal answers 409 `SUTRA.ADMIN.MIGRATE.CLAIM_HELD` having read and written nothing
//! (R6); a granted one rewrites the replica's binding table and releases with its write.

use std::rc::Rc;

use sutra_sim_core::executor::{self, sleep};
use sutra_sim_core::NodeStatus;

use crate::event::{Exit, ModelEvent, Reaction};
use crate::ids::{Code, OwnerId, ResumePath};
use crate::mutant::Mutant;
use crate::store::{Claim, ClaimResult};
use crate::streams;
use crate::world::World;

/// The operator: considers a migration every fault tick until the heal.
pub async fn operator(world: Rc<World>) {
    let phase = crate::faults::phase(&world.ctx, world.ctx.faults().tick);
    if !phase.is_zero() {
        sleep(phase).await;
    }
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
        let instance = crate::ids::InstanceId(executor::choose_in(streams::ADMIN, instances));
        let replica = executor::choose_in(streams::ADMIN, world.ctx.scenario().topology.replicas);
        let to_lane = executor::choose_in(streams::ADMIN, world.ctx.scenario().topology.lanes) as u16;
        let (node, surface) = {
            let replicas = world.cluster.slots.borrow();
            let slot = &replicas[replica as usize];
            (slot.node, slot.surface.clone())
        };
        let Some(surface) = surface else { continue };
        // A replica shutting down no longer serves its admin API.
        if executor::node_status(node) != NodeStatus::Alive
            || surface.shutdown.requested()
            || surface.process != world.cluster.slots.borrow()[replica as usize].process
        {
            continue;
        }
        let w = world.clone();
        executor::spawn_daemon_on(node, "admin:migrate", async move {
            migrate(&w, &surface, instance, to_lane).await;
        });
    }
}

async fn migrate(
    world: &Rc<World>,
    surface: &crate::replica::ReplicaSurface,
    instance: crate::ids::InstanceId,
    to_lane: u16,
) {
    let exec = world.ctx.new_exec();
    let process = surface.process;
    let owner = if world.ctx.mutant_is(Mutant::MigrateWithLaneOwner) {
        // The careless version: "the lane that runs it is the natural owner".
        OwnerId::lane(process, world.routing.home_lane(instance))
    } else {
        OwnerId::migration(world.ctx.new_operation())
    };
    let path = ResumePath::Migration;
    world.ctx.emit(ModelEvent::MigrationRequested { instance, exec, process, to_lane });
    // The careless order: "point the table at the new lane, then take the instance".
    let rebind_first = world.ctx.mutant_is(Mutant::MigrationRebindsBeforeClaim);
    if rebind_first && surface.bindings.rebind(instance, to_lane).await.is_err() {
        world.ctx.emit(ModelEvent::ExecutionEnded { instance, exec, exit: Exit::LaneError });
        return;
    }
    world.ctx.emit(ModelEvent::ClaimAttempt { instance, exec, owner, path });
    let epoch = match world.store.claim(instance, exec, owner, None, path).await {
        ClaimResult::Refused { .. } => {
            world.ctx.emit(ModelEvent::Refusal {
                instance,
                exec,
                path,
                code: Code::MigrateClaimHeld,
                reaction: Reaction::Conflict409,
            });
            world.ctx.emit(ModelEvent::ExecutionEnded { instance, exec, exit: Exit::Refused });
            return;
        }
        ClaimResult::Granted { epoch } => epoch,
    };
    let claim = Claim { owner, epoch };
    let (version, _) = world.store.read(instance, exec, claim).await;
    world.ctx.emit(ModelEvent::Rehydrated { instance, exec, version });
    if !rebind_first && surface.bindings.rebind(instance, to_lane).await.is_err() {
        world.store.release(instance, exec, claim).await;
        world.ctx.emit(ModelEvent::ExecutionEnded { instance, exec, exit: Exit::LaneError });
        return;
    }
    if !world.store.migrate_commit(instance, exec, claim).await {
        world.ctx.emit(ModelEvent::ExecutionEnded { instance, exec, exit: Exit::LostClaim });
        return;
    }
    world.ctx.emit(ModelEvent::ExecutionEnded { instance, exec, exit: Exit::Migrated });
}
