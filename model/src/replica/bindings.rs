//! The binding table: a replica-local component with a cross-collection invariant (C2 of
//! spec 003 §4), guarded by a state lane and consulted on the relay path (L7–L9).
//!
//! It holds the routing overrides set by administrative migration (instance → lane, each
//! a versioned cell) and the tickets of deliveries in flight, with per-lane counts that
//! must always agree with the tickets. Both live on one lane, in plain maps.
//!
//! The relay path asks for a route and a ticket in one turn and gets back a route whose
//! validity was settled inside that turn (spec 003 §3): it may await afterwards and still
//! act on it. Migration's `rebind` enters the lane once and calls the private bodies
//! directly (spec 003 §6, kind ①).

use std::collections::BTreeMap;
use std::rc::Rc;

use sutra_sim_core::cell::{CellId, Settled, Snapshot, VersionedCell};
use sutra_sim_core::lane::{LaneError, LaneEvent, LaneFlaws, StateLane};

use crate::ctx::Context;
use crate::dense::DenseMap;
use crate::event::{Component, LaneAction, ModelEvent};
use crate::ids::{InstanceId, ProcessId};
use crate::mutant::Mutant;
use crate::routing::Routing;

/// Most deliveries a binding table tracks at once.
pub const TICKETS_MAX: usize = 1 << 16;

/// The route of a delivery as the relay path carries it across its await.
pub enum Route {
    /// Settled inside the turn (correct).
    Settled(Settled<u16>),
    /// A bare snapshot carried out of the turn (the prohibited shape).
    Snapshot(Snapshot<u16>),
}

impl Route {
    /// The lane the route names.
    pub fn lane(&self) -> u16 {
        match self {
            Route::Settled(s) => s.snapshot.value,
            Route::Snapshot(s) => s.value,
        }
    }
}

/// A delivery's registration in the table, which the relay path promises has happened
/// before [`Bindings::route_and_register`] returns (L11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// The delivery's broker tag.
    pub tag: u32,
}

/// The state behind the lane.
pub struct BindingState {
    /// Route of each instance seen so far: its home lane until a migration moves it.
    routes: DenseMap<InstanceId, VersionedCell<u16>>,
    /// Deliveries in flight: tag → (instance, lane, the write that registered it). A tree,
    /// not a dense map: broker tags grow with every delivery the run makes while only the
    /// few in flight are held, and checkers walk the tickets after every turn.
    tickets: BTreeMap<u32, (InstanceId, u16, u64)>,
    /// The write that last changed each instance's route (absent: never changed).
    route_changed: DenseMap<InstanceId, u64>,
    /// Writes to routes and tickets so far: a logical clock of the table, so that the order
    /// of a registration and a route change can be read back after the fact.
    writes: u64,
    /// Invariant: `per_lane[l]` is the number of tickets whose lane is `l`.
    per_lane: Vec<u32>,
}

/// The component: a handle to its lane.
#[derive(Clone)]
pub struct Bindings {
    lane: StateLane<BindingState>,
    ctx: Rc<Context>,
    routing: Rc<Routing>,
    process: ProcessId,
}

impl Bindings {
    /// A binding table for `process`, its lane on the current node.
    pub fn new(ctx: Rc<Context>, routing: Rc<Routing>, process: ProcessId) -> Bindings {
        let lanes = ctx.scenario().topology.lanes as usize;
        let flaws =
            LaneFlaws { skip_reentrancy_check: ctx.mutant_is(Mutant::ReentrantCallUndetected), ..LaneFlaws::default() };
        let state = BindingState {
            routes: DenseMap::new(),
            tickets: BTreeMap::new(),
            route_changed: DenseMap::new(),
            writes: 0,
            per_lane: vec![0; lanes],
        };
        let lane = StateLane::with_flaws(format!("p{}:bindings", process.0), state, flaws);
        let tracer = ctx.tracer.clone();
        lane.set_observer(Rc::new(move |event| {
            let action = match event {
                LaneEvent::Submitted { item } => LaneAction::Submitted(item),
                LaneEvent::TurnStarted { item } => LaneAction::TurnStarted(item),
                LaneEvent::TurnEnded { item } => LaneAction::TurnEnded(item),
                LaneEvent::ReentrantRefused => LaneAction::ReentrantRefused,
                LaneEvent::ClosedRefused => LaneAction::ClosedRefused,
            };
            let task = sutra_sim_core::executor::current_task().map(|t| t.number());
            tracer.emit(ModelEvent::Lane { process, component: Component::Bindings, action, task });
        }));
        Bindings { lane, ctx, routing, process }
    }

    /// The relay path's one turn: read the instance's route and settle it, and register the
    /// delivery's ticket under that route. The caller may await afterwards and still act on
    /// the route: the registration already names the lane the work goes to (L7, L11).
    ///
    /// Three mutants change this method, each the way careless code would:
    /// `snapshot-across-await` reads the route here and registers the ticket only in
    /// [`Bindings::act_on`], after the caller's await, under the lane it read;
    /// `registration-after-return` posts the registration to the lane from outside the turn
    /// and returns before it happened (spec 003 §5 `Reserve_WRONG`); `per-lane-count-second-turn`
    /// counts the ticket per lane in a second turn.
    pub async fn route_and_register(&self, instance: InstanceId, tag: u32) -> Result<(Route, Ticket), LaneError> {
        let home = self.routing.home_lane(instance);
        let carry_snapshot = self.ctx.mutant_is(Mutant::SnapshotAcrossAwait);
        let post_registration = self.ctx.mutant_is(Mutant::RegistrationAfterReturn);
        let count_later = self.ctx.mutant_is(Mutant::PerLaneCountSecondTurn);
        let lane = self.lane.clone();
        let route = self
            .turn(move |t| {
                let cell =
                    t.routes.get_or_insert_with(instance, || VersionedCell::new(CellId(u64::from(instance.0)), home));
                let snapshot = cell.read();
                if carry_snapshot {
                    return Route::Snapshot(snapshot);
                }
                let route = Route::Settled(snapshot.settle().expect("inside the turn"));
                if !post_registration {
                    if count_later {
                        if t.insert_ticket(tag, instance, route.lane()) {
                            let counter = lane.clone();
                            let lane_index = route.lane();
                            // "The count can follow": a second turn, entered later by a task of
                            // its own; the turn that registered the ticket ends inconsistent.
                            lane.start_detached("bindings:count", async move {
                                let _ = counter.run_with(move |t| t.count_ticket(lane_index)).await;
                            });
                        }
                    } else {
                        t.register(tag, instance, route.lane());
                    }
                }
                route
            })
            .await?;
        if post_registration {
            // Reserve_WRONG of spec 003 §5: posted from outside the lane, so this method
            // returns before the registration is taken.
            let poster = self.lane.clone();
            let lane_index = route.lane();
            self.lane.try_post(async move {
                poster.with(|t| {
                    t.register(tag, instance, lane_index);
                });
            });
        }
        Ok((route, Ticket { tag }))
    }

    /// Acts on `route` after the caller's await. A settled route was registered in the turn
    /// that read it, so nothing is left to do. A bare snapshot (the `snapshot-across-await`
    /// mutant) is registered now, in a second turn, under the lane it named when it was read —
    /// whatever the table routes the instance to by now.
    pub async fn act_on(&self, instance: InstanceId, tag: u32, route: &Route) -> Result<(), LaneError> {
        let Route::Snapshot(s) = route else { return Ok(()) };
        let s = s.clone();
        let used = self
            .turn(move |t| {
                let used = t.routes.get(instance).expect("routed instances have a cell").judge_use(&s);
                t.register(tag, instance, s.value);
                used
            })
            .await?;
        // Narrative for the story; no checker's verdict rests on it.
        self.ctx.emit(ModelEvent::SnapshotUsed { process: self.process, instance, used });
        Ok(())
    }

    /// Forgets a delivery's ticket once its execution ended.
    pub async fn finish(&self, tag: u32) -> Result<(), LaneError> {
        self.turn(move |t| t.unregister(tag)).await
    }

    /// Routes `instance` to `lane` from now on (migration). Enters the lane once.
    pub async fn rebind(&self, instance: InstanceId, lane: u16) -> Result<(), LaneError> {
        let home = self.routing.home_lane(instance);
        if self.ctx.mutant_is(Mutant::ReentrantCall) || self.ctx.mutant_is(Mutant::ReentrantCallUndetected) {
            // Kind ① done wrong: the public unbind called from inside this turn.
            let this = self.clone();
            let outcome = self
                .lane
                .run(async move {
                    this.unbind(instance).await?;
                    this.lane.with(|t| t.bind_on_lane(instance, lane, home));
                    Ok::<(), LaneError>(())
                })
                .await?;
            outcome?;
        } else {
            self.turn(move |t| {
                t.unbind_on_lane(instance, home);
                t.bind_on_lane(instance, lane, home);
            })
            .await?;
        }
        self.ctx.emit(ModelEvent::BindingChanged { process: self.process, instance, lane: Some(lane) });
        Ok(())
    }

    /// The careless rebind of the `store-read-in-turn` mutant: `still_live` (a store read of
    /// the instance's row) is awaited inside the table's turn, "so the check and the write
    /// are one atomic step", and the route changes only if it says the instance is still
    /// live. The turn holds the lane for a store round trip (L8).
    pub async fn rebind_if(
        &self,
        instance: InstanceId,
        lane: u16,
        still_live: impl std::future::Future<Output = bool> + 'static,
    ) -> Result<(), LaneError> {
        let home = self.routing.home_lane(instance);
        let table = self.lane.clone();
        let changed = self
            .lane
            .run(async move {
                let live = still_live.await;
                if live {
                    table.with(|t| {
                        t.unbind_on_lane(instance, home);
                        t.bind_on_lane(instance, lane, home);
                    });
                }
                live
            })
            .await?;
        if changed {
            self.ctx.emit(ModelEvent::BindingChanged { process: self.process, instance, lane: Some(lane) });
        }
        Ok(())
    }

    /// Puts `instance` back on its home lane.
    pub async fn unbind(&self, instance: InstanceId) -> Result<(), LaneError> {
        let home = self.routing.home_lane(instance);
        self.turn(move |t| t.unbind_on_lane(instance, home)).await
    }

    /// One turn of the table's lane running `work`; the C2 invariant (per-lane counts
    /// agree with the tickets) holds again when the turn ends.
    fn turn<T: 'static>(
        &self,
        work: impl FnOnce(&mut BindingState) -> T + 'static,
    ) -> impl std::future::Future<Output = Result<T, LaneError>> + 'static {
        // The per-lane-count-second-turn mutant ends a turn inconsistent on purpose; a crash
        // here would hide it from the checker that must witness it (bindings-consistent).
        let assert_consistent = !self.ctx.mutant_is(Mutant::PerLaneCountSecondTurn);
        self.lane.run_with(move |t| {
            let result = work(t);
            debug_assert!(!assert_consistent || t.consistent(), "binding table inconsistent at the end of a turn");
            result
        })
    }

    /// Reads the table from outside the world's tasks (views, tests).
    pub fn inspect<R>(&self, f: impl FnOnce(&BindingState) -> R) -> R {
        self.lane.inspect(f)
    }
}

impl BindingState {
    fn register(&mut self, tag: u32, instance: InstanceId, lane: u16) {
        if self.insert_ticket(tag, instance, lane) {
            self.count_ticket(lane);
        }
    }

    /// Records the ticket; true if it is new (and must be counted).
    fn insert_ticket(&mut self, tag: u32, instance: InstanceId, lane: u16) -> bool {
        assert!(self.tickets.len() < TICKETS_MAX, "binding table tracks more than {TICKETS_MAX} deliveries");
        self.writes += 1;
        self.tickets.insert(tag, (instance, lane, self.writes)).is_none()
    }

    fn count_ticket(&mut self, lane: u16) {
        self.per_lane[lane as usize] += 1;
    }

    fn unregister(&mut self, tag: u32) {
        if let Some((_, lane, _)) = self.tickets.remove(&tag) {
            assert!(self.per_lane[lane as usize] > 0, "lane {lane} counts no ticket to forget");
            self.per_lane[lane as usize] -= 1;
        }
    }

    fn bind_on_lane(&mut self, instance: InstanceId, lane: u16, home: u16) {
        self.routes.get_or_insert_with(instance, || VersionedCell::new(CellId(u64::from(instance.0)), home)).set(lane);
        self.writes += 1;
        self.route_changed.insert(instance, self.writes);
    }

    fn unbind_on_lane(&mut self, instance: InstanceId, home: u16) {
        if let Some(cell) = self.routes.get_mut(instance) {
            if *cell.get() != home {
                cell.set(home);
                self.writes += 1;
                self.route_changed.insert(instance, self.writes);
            }
        }
    }

    /// The lane the table routes `instance` to, if it has seen the instance, and the
    /// table write that last changed it (0: never changed since the table first saw it).
    pub fn route_of(&self, instance: InstanceId) -> Option<(u16, u64)> {
        let cell = self.routes.get(instance)?;
        Some((*cell.get(), self.route_changed.get(instance).copied().unwrap_or(0)))
    }

    /// The deliveries in flight: tag, instance, the lane each was registered under, and the
    /// table write that registered it.
    pub fn tickets(&self) -> impl Iterator<Item = (u32, InstanceId, u16, u64)> + '_ {
        self.tickets.iter().map(|(tag, (instance, lane, written))| (*tag, *instance, *lane, *written))
    }

    /// True if the per-lane counts agree with the tickets (the C2 invariant).
    pub fn consistent(&self) -> bool {
        // On the stack: checked after every turn, so it must not allocate.
        let mut counts = [0u32; crate::scenario::LANES_MAX as usize];
        assert!(self.per_lane.len() <= counts.len(), "at most LANES_MAX lanes");
        for (_, lane, _) in self.tickets.values() {
            counts[*lane as usize] += 1;
        }
        counts[..self.per_lane.len()] == self.per_lane[..]
    }
}
