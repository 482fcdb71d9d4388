//! The claim store as SQL inside the simulation (`[store] engine = "sqlite"`, issue 25):
//! the named statements of a file (`sutra_sql`, the shipped default or a team's own) run
//! on one in-memory SQLite database per run. `engine` holds the connection and binds the
//! statements, `ops` types each operation's rows, `apply` turns them into the store's
//! answers and witnesses, `careless` holds the SQL the model's mutants and design
//! alternatives call for, `load` checks a file before anything runs.

pub mod apply;
pub mod careless;
pub mod differential;
pub mod engine;
pub mod load;
pub mod ops;
pub mod section;

pub use engine::SqlEngine;
pub use section::{StoreEngine, StoreSection};
