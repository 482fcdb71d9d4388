//! What every thread of a run shares: the configuration, the statements, the broker, the
//! id counters, and the first infrastructure error (a database that fails is no verdict
//! about the protocol: the run stops and says so).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sutra_sql::Statements;

use crate::broker::Broker;
use crate::config::Config;
use crate::store::Store;

/// The run's shared state.
pub struct Ctx {
    /// The run's parameters.
    pub cfg: Config,
    /// The statements of the run's variant.
    pub sql: Arc<Statements>,
    /// The broker.
    pub broker: Broker,
    /// The claim-bounce meter the lanes push to.
    pub bounces: crate::meter::BounceMeter,
    next_exec: AtomicU32,
    next_task: AtomicU64,
    next_pid: AtomicU32,
    error: Mutex<Option<String>>,
}

impl Ctx {
    /// The shared state of a run of `cfg` with `sql`.
    pub fn new(cfg: Config, sql: Statements) -> Ctx {
        let sql = Arc::new(sql);
        let broker = Broker::new(sql.clone(), cfg.prefetch);
        Ctx {
            cfg,
            sql,
            broker,
            bounces: crate::meter::BounceMeter::default(),
            next_exec: AtomicU32::new(1),
            next_task: AtomicU64::new(1),
            next_pid: AtomicU32::new(1),
            error: Mutex::new(None),
        }
    }

    /// A fresh execution id.
    pub fn exec_id(&self) -> u32 {
        self.next_exec.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh task id: every thread incarnation has its own.
    pub fn task_id(&self) -> u64 {
        self.next_task.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh process id.
    pub fn pid(&self) -> u32 {
        self.next_pid.fetch_add(1, Ordering::Relaxed)
    }

    /// A store client for a thread of `node`.
    pub fn store(&self, node: &str) -> Result<Store, String> {
        Store::open(&self.cfg.target, self.sql.clone(), node, self.cfg.claim_timeout_ms * 1_000_000)
    }

    /// Records an infrastructure error (the first one wins).
    pub fn fail(&self, error: String) {
        self.error.lock().expect("error lock").get_or_insert(error);
    }

    /// The first infrastructure error, if any.
    pub fn error(&self) -> Option<String> {
        self.error.lock().expect("error lock").clone()
    }
}

/// Why a thread stopped.
#[derive(Debug)]
pub enum Stop {
    /// Its process (or itself) is gone.
    Gone(crate::process::Gone),
    /// The database failed.
    Error(String),
}

impl From<crate::process::Gone> for Stop {
    fn from(g: crate::process::Gone) -> Stop {
        Stop::Gone(g)
    }
}

impl From<String> for Stop {
    fn from(e: String) -> Stop {
        Stop::Error(e)
    }
}
