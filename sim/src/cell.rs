//! Versioned cells and snapshots: the generic tool behind "no stale snapshot use" (spec 003
//! §3, rule L7).
//!
//! A value read from shared state carries its cell and the version it was read at. An
//! action that consumes the value declares so with [`VersionedCell::judge_use`], which
//! reports whether that version is still current. The exception is a read turned into a
//! claim inside a lane turn ([`Snapshot::settle`]): its validity was fixed where it was
//! read, so later changes to the cell do not make acting on it wrong.

use serde::{Deserialize, Serialize};

use crate::executor;

/// Identifies a versioned cell within a run (the model chooses the numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CellId(pub u64);

/// A value with a version that increases on every write.
#[derive(Clone, Debug)]
pub struct VersionedCell<T> {
    id: CellId,
    /// Invariant: incremented by exactly one on every write; starts at 0.
    version: u64,
    value: T,
}

/// A copy of a cell's value and the version it was read at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot<T> {
    /// The cell read.
    pub cell: CellId,
    /// The version read.
    pub version: u64,
    /// The value read.
    pub value: T,
}

/// A snapshot whose validity was settled inside a lane turn: the decision it carries was
/// made where the state was read, so acting on it later is not a stale use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled<T> {
    /// The snapshot as read.
    pub snapshot: Snapshot<T>,
}

/// The record of acting on a snapshot: what was read and what was current at the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotUse {
    /// The cell.
    pub cell: CellId,
    /// The version the acting code read.
    pub read_version: u64,
    /// The version current when it acted.
    pub current_version: u64,
    /// True if the read was settled into a claim inside a lane turn.
    pub settled: bool,
}

impl SnapshotUse {
    /// True if the use acted on a version that is no longer current and was not settled.
    pub fn is_stale(&self) -> bool {
        !self.settled && self.read_version != self.current_version
    }
}

/// Settling a snapshot outside any lane turn: nothing fixed its validity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotInTurn;

impl<T> VersionedCell<T> {
    /// A cell at version 0.
    pub fn new(id: CellId, value: T) -> Self {
        VersionedCell { id, version: 0, value }
    }

    /// The cell's id.
    pub fn id(&self) -> CellId {
        self.id
    }

    /// The current version.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The current value, for reading in place (not carried anywhere).
    pub fn get(&self) -> &T {
        &self.value
    }

    /// Replaces the value; the version goes up by one.
    pub fn set(&mut self, value: T) {
        self.value = value;
        self.version += 1;
    }

    /// Changes the value in place; the version goes up by one.
    pub fn update<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
        self.version += 1;
        f(&mut self.value)
    }

    /// A copy of the value with the version it was read at.
    pub fn read(&self) -> Snapshot<T>
    where
        T: Clone,
    {
        Snapshot { cell: self.id, version: self.version, value: self.value.clone() }
    }

    /// Judges acting on `snapshot` now.
    pub fn judge_use(&self, snapshot: &Snapshot<T>) -> SnapshotUse {
        assert_eq!(snapshot.cell, self.id, "snapshot of cell {:?} judged against cell {:?}", snapshot.cell, self.id);
        SnapshotUse { cell: self.id, read_version: snapshot.version, current_version: self.version, settled: false }
    }

    /// Judges acting on a settled claim now: never stale.
    pub fn judge_settled_use(&self, settled: &Settled<T>) -> SnapshotUse {
        SnapshotUse { settled: true, ..self.judge_use(&settled.snapshot) }
    }
}

impl<T> Snapshot<T> {
    /// Turns the read into a claim settled inside the current lane turn. Fails outside a
    /// turn, where nothing can settle it.
    pub fn settle(self) -> Result<Settled<T>, NotInTurn> {
        if executor::in_simulation() && executor::current_lane().is_some() {
            Ok(Settled { snapshot: self })
        } else {
            Err(NotInTurn)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_use_after_a_write_is_stale() {
        let mut cell = VersionedCell::new(CellId(1), 10);
        let snap = cell.read();
        assert!(!cell.judge_use(&snap).is_stale());
        cell.set(11);
        let used = cell.judge_use(&snap);
        assert!(used.is_stale());
        assert_eq!((used.read_version, used.current_version), (0, 1));
    }

    #[test]
    fn the_version_counts_every_write_set_or_update() {
        let mut cell = VersionedCell::new(CellId(4), 0u8);
        assert_eq!(cell.version(), 0);
        cell.update(|v| *v += 1);
        assert_eq!(cell.version(), 1);
        cell.set(5);
        cell.update(|v| *v += 1);
        assert_eq!((cell.version(), *cell.get()), (3, 6));
    }

    #[test]
    fn a_settled_use_is_never_stale() {
        let mut cell = VersionedCell::new(CellId(2), "route");
        let settled = Settled { snapshot: cell.read() };
        cell.update(|v| *v = "moved");
        assert!(!cell.judge_settled_use(&settled).is_stale());
    }

    #[test]
    fn settling_outside_a_turn_is_refused() {
        let cell = VersionedCell::new(CellId(3), 0u8);
        assert_eq!(cell.read().settle(), Err(NotInTurn));
    }
}
