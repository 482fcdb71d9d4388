//! The checkers' view of a history: the scenario's parameters (from the header's inline
//! scenario, a built-in of its name, or `--scenario`), this seed's effective faults (the
//! swarm's `swarm-selected` witness switches kinds off), and the store's instance rows
//! rebuilt from the store's own witnesses — what a checker may ask a [`ModelView`].
//! Binding tables are replica state no history holds: a view built here has none.
//!
//! The rows are kept only for a user's checkers, which may ask the view about them
//! (`version`, `held_claims`, …): the built-in checkers read witnesses only, and a row per
//! instance the history ever named is memory that grows with its length.

use std::cell::RefCell;
use std::rc::Rc;

use sutra_sim_core::{Event, SimTime};
use sutra_sim_model::ctx::Config;
use sutra_sim_model::faults::kind::FaultKind;
use sutra_sim_model::store::{InstanceRow, StoreState};
use sutra_sim_model::{ModelEvent, ModelView, Scenario};

/// The highest instance id a numeric history may use: rows are kept by id, so a larger id
/// would make the view (and the checkers' tables) allocate for every id below it.
pub const INSTANCE_ID_MAX: u32 = 1 << 24;

/// A view kept up to date with the history's witnesses.
pub struct HistoryView {
    scenario: Scenario,
    /// Tags of the kinds the writer does not witness (its header's `emits`).
    unwitnessed: u64,
    /// The broker's call latency the writer declares (its header's `broker_call_latency_max_ns`).
    broker_call_latency: std::time::Duration,
    /// The store's call latency the writer declares (its header's `store_call_latency_max_ns`).
    store_call_latency: Option<std::time::Duration>,
    store: Rc<RefCell<StoreState>>,
    view: ModelView,
    /// Whether the store's rows are rebuilt (a user's checker may read them).
    keeps_rows: bool,
}

impl HistoryView {
    /// A view of `scenario` with every configured fault kind on, and no rows yet.
    pub fn new(scenario: Scenario) -> HistoryView {
        let store = Rc::new(RefCell::new(StoreState::default()));
        let config = Rc::new(Config { faults: scenario.faults.clone(), scenario: scenario.clone() });
        let view = ModelView::new(config, store.clone());
        HistoryView {
            scenario,
            unwitnessed: 0,
            broker_call_latency: std::time::Duration::ZERO,
            store_call_latency: None,
            store,
            view,
            keeps_rows: true,
        }
    }

    /// The same view, rebuilding the store's rows only if `keep` (some checker judging
    /// may read them: a user's); instance ids are still checked against the limit.
    pub fn keeping_rows(mut self, keep: bool) -> HistoryView {
        self.keeps_rows = keep;
        self
    }

    /// The same view, of a history whose writer does not witness the kinds whose tags are
    /// set in `mask` (see [`ModelView::with_unwitnessed`]).
    pub fn with_unwitnessed(mut self, mask: u64) -> HistoryView {
        self.unwitnessed = mask;
        self.view = self.model_view(self.scenario.faults.clone());
        self
    }

    /// The same view, of a history whose writer declares its broker's call latency (see
    /// [`ModelView::with_broker_call_latency`]).
    pub fn with_broker_call_latency(mut self, latency: std::time::Duration) -> HistoryView {
        self.broker_call_latency = latency;
        self.view = self.model_view(self.scenario.faults.clone());
        self
    }

    /// The same view, of a history whose writer declares its store's call latency (see
    /// [`ModelView::with_store_call_latency`]).
    pub fn with_store_call_latency(mut self, latency: Option<std::time::Duration>) -> HistoryView {
        self.store_call_latency = latency;
        self.view = self.model_view(self.scenario.faults.clone());
        self
    }

    /// A model view of the rows with this seed's `faults` and the header's declarations.
    fn model_view(&self, faults: sutra_sim_model::scenario::Faults) -> ModelView {
        ModelView::new(self.config(faults), self.store.clone())
            .sharing_ledger(&self.view)
            .with_unwitnessed(self.unwitnessed)
            .with_broker_call_latency(self.broker_call_latency)
            .with_store_call_latency(self.store_call_latency)
    }

    fn config(&self, faults: sutra_sim_model::scenario::Faults) -> Rc<Config> {
        Rc::new(Config { scenario: self.scenario.clone(), faults })
    }

    /// The view, as of the last event observed.
    pub fn view(&self) -> &ModelView {
        &self.view
    }

    /// Folds one witness into the view, before the checkers judge it (in the simulation
    /// the store has written a row by the time its witness is judged). Errors refuse an
    /// instance id the rows cannot hold.
    pub fn observe(&mut self, event: &Event<ModelEvent>) -> Result<(), String> {
        match &event.kind {
            ModelEvent::SwarmSelected { enabled } => self.select(enabled),
            ModelEvent::InstanceStarted { instance, steps } => {
                if let Some(mut row) = self.row(instance.0)? {
                    row.steps = *steps;
                }
            }
            ModelEvent::ClaimGranted { instance, .. } => {
                if let Some(mut row) = self.row(instance.0)? {
                    row.claimed_at = event.time;
                }
            }
            ModelEvent::RowWritten { instance, owner, version, epoch, parked, .. } => {
                if let Some(mut row) = self.row(instance.0)? {
                    row.owner = *owner;
                    row.version = *version;
                    row.epoch = *epoch;
                    row.parked = *parked;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The swarm's selection: every configured kind not in `enabled` is off for this seed.
    fn select(&mut self, enabled: &[FaultKind]) {
        let mut faults = self.scenario.faults.clone();
        for &kind in FaultKind::ALL {
            if faults.configured_on(kind) && !enabled.contains(&kind) {
                faults.swarm(kind, None);
            }
        }
        self.view = self.model_view(faults);
    }

    /// The row of instance `id`, made if need be (`None` if rows are not kept).
    fn row(&mut self, id: u32) -> Result<Option<std::cell::RefMut<'_, InstanceRow>>, String> {
        if id > INSTANCE_ID_MAX {
            return Err(format!("instance id {id} is above {INSTANCE_ID_MAX}: number instances densely from 0"));
        }
        if !self.keeps_rows {
            return Ok(None);
        }
        let mut store = self.store.borrow_mut();
        while store.instances.len() <= id as usize {
            store.instances.push(InstanceRow {
                owner: None,
                claimed_at: SimTime(0),
                version: 0,
                epoch: 0,
                committed_under: Vec::new(),
                parked: false,
                steps: 0,
                plan: Vec::new(),
            });
        }
        Ok(Some(std::cell::RefMut::map(store, |s| &mut s.instances[id as usize])))
    }
}
