//! The contract of every statement the store needs: its name, the parameters a caller
//! binds (in order), what it gives back, and the rule it serves. The file supplies the
//! SQL; this table is what the loader holds it to, so a team's own file is checked
//! against the same promises as the default one.

/// What a statement gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    /// Nothing: a write whose count of changed rows is all that matters.
    Nothing,
    /// At most one row.
    Row,
    /// Any number of rows, in a fixed order (a SELECT must say ORDER BY).
    Rows,
}

/// One statement's contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contract {
    /// The name after `-- name:`.
    pub name: &'static str,
    /// The parameters a caller binds, `$1` first. A statement may use fewer (a leading
    /// run of them: the ones it leaves out at the end are ignored), never more.
    pub params: &'static [&'static str],
    /// What it gives back.
    pub returns: Returns,
    /// The rules it serves.
    pub rule: &'static str,
}

/// Statement names that start with this are schema: run in file order on a fresh
/// database, before anything else. A file may add its own (an index, say).
pub const SCHEMA_PREFIX: &str = "schema_";

/// Every statement the store runs, in the order the default file has them.
pub const CONTRACTS: &[Contract] = &[
    c("schema_instance", &[], Returns::Nothing, "R2"),
    c("schema_plan", &[], Returns::Nothing, "R25"),
    c("schema_step", &[], Returns::Nothing, "R8, R19"),
    c("schema_timer", &[], Returns::Nothing, "R5"),
    c("schema_task", &[], Returns::Nothing, "R17"),
    c("schema_lease", &[], Returns::Nothing, "R18"),
    c("schema_outbox", &[], Returns::Nothing, "R4, R8"),
    c("lease_create", &[], Returns::Nothing, "R18"),
    c("instance_create", &["instance", "steps"], Returns::Nothing, "R2"),
    c("plan_create", &["instance", "step", "trigger"], Returns::Nothing, "R25"),
    c("claim", &["instance", "owner", "now", "claim_timeout", "claimant_clock"], Returns::Row, "R2, R10, R21"),
    c("read", &["instance"], Returns::Row, "R1, R3"),
    c("commit", &["instance", "owner", "based_on", "release"], Returns::Row, "R8, R19"),
    c("step_forget", &["instance", "based_on"], Returns::Nothing, "R8"),
    c("step_record", &["instance", "based_on", "epoch"], Returns::Nothing, "R8, R19"),
    c("timer_clear", &["instance"], Returns::Nothing, "R25"),
    c("task_clear", &["instance"], Returns::Nothing, "R17, R25"),
    c("timer_schedule", &["instance", "expects", "due"], Returns::Nothing, "R5"),
    c("task_park", &["instance", "expects"], Returns::Nothing, "R17"),
    c("outbox_put", &["instance", "expects", "path"], Returns::Nothing, "R4, R8"),
    c("outbox_take", &[], Returns::Row, "R4"),
    c("release", &["instance", "owner"], Returns::Row, "R9, R22"),
    c("migrate_commit", &["instance", "owner"], Returns::Row, "R6, R15"),
    c("committed_under", &["instance", "based_on"], Returns::Row, "R8, R19"),
    c("lease_acquire", &["process", "now", "expires"], Returns::Row, "R18"),
    c("lease_held", &["process", "now"], Returns::Row, "R18"),
    c("sweep", &["process", "now", "claim_timeout", "cutoff"], Returns::Rows, "R18, R14"),
    c("sweep_select", &["now", "claim_timeout", "cutoff"], Returns::Rows, "R18"),
    c("sweep_clear", &["instance", "epoch", "process", "now", "claim_timeout", "cutoff"], Returns::Row, "R18, R19"),
    c("timer_due", &["now", "limit"], Returns::Rows, "R5"),
    c("timer_pick", &["instance", "now", "hidden_until"], Returns::Row, "R5"),
    c("timer_refuse", &["instance", "expects", "refused"], Returns::Row, "R5"),
    c("timer_defer", &["instance", "expects", "due"], Returns::Row, "R5"),
    c("task_lock", &["worker", "now", "locked_until"], Returns::Row, "R17"),
    c("task_complete", &["worker", "instance", "expects", "now"], Returns::Row, "R17"),
    // Conformance only (issue 24 item 5): the reference runtime's witness audit table.
    // The simulation runs none of these but the schema.
    c("schema_audit", &[], Returns::Nothing, "R1-R25 witnesses"),
    c("schema_audit_counter", &[], Returns::Nothing, "R1-R25 witnesses"),
    c("audit_counter_create", &[], Returns::Nothing, "R1-R25 witnesses"),
    c("audit_reserve", &["count"], Returns::Row, "R1-R25 witnesses"),
    c("audit_write", &["seq", "time_ns", "node", "kind", "witness", "fields"], Returns::Nothing, "R1-R25 witnesses"),
    c("audit_export", &["after_seq", "limit"], Returns::Rows, "R1-R25 witnesses"),
];

/// The statements only the reference runtime runs (its witness audit table): checked
/// against their contracts when a file has them, not required of a file the simulation
/// loads (a team's own file, a design variant), since the simulation runs none of them.
pub const CONFORMANCE_ONLY: &[&str] =
    &["schema_audit", "schema_audit_counter", "audit_counter_create", "audit_reserve", "audit_write", "audit_export"];

const fn c(name: &'static str, params: &'static [&'static str], returns: Returns, rule: &'static str) -> Contract {
    Contract { name, params, returns, rule }
}

/// The contract of `name`: one of [`CONTRACTS`], or a schema statement of the file's own
/// (no parameters, nothing back). `None` for a name the store does not know.
pub fn contract_of(name: &str) -> Option<Contract> {
    if let Some(known) = CONTRACTS.iter().find(|c| c.name == name) {
        return Some(*known);
    }
    name.starts_with(SCHEMA_PREFIX).then_some(Contract {
        name: "schema",
        params: &[],
        returns: Returns::Nothing,
        rule: "",
    })
}
