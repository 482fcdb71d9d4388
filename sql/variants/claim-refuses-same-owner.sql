-- SQL variant `claim-refuses-same-owner` of sutra-sim's default statements: the claim takes a free or stale row only: the same owner is refused (R10, R21).
-- Spec 000, "Re-entrancy, and the invariant that makes it safe". Expected: unsafe.
-- Only the `claim` statement differs from sql/statements.sql.
--
-- sutra-sim's default claim store statements (spec 000, "Ownership and claims").
--
-- One file of named statements, run unchanged by the simulation's SQL store engine
-- (`--store sqlite`) and by the reference runtime in `conformance/` (SQLite and
-- PostgreSQL 15). Each block starts with `-- name: NAME`, says which rule it serves
-- with `-- rule:`, and holds exactly one statement. Parameters are positional, `$1`..`$n`
-- (PostgreSQL's spelling; the loader renders `?n` for SQLite). Every time is BIGINT
-- nanoseconds of the store's clock, bound by the caller: no statement reads a clock or
-- draws a random number, and every SELECT of several rows has an ORDER BY. Owner ids are
-- opaque TEXT (R14); instance ids, process ids and worker ids are BIGINT.
--
-- The `prev_*` columns let one UPDATE ... RETURNING report the row both before and after
-- the change (a SET expression reads the row as it was), portably: SQLite and PostgreSQL 15
-- return only the new row.

-- name: schema_instance
-- rule: R2 — the instance row the claim is a conditional update on; epoch is the fencing
-- token, raised by every grant.
CREATE TABLE instance (
    id BIGINT PRIMARY KEY,
    steps BIGINT NOT NULL,
    owner TEXT,
    claimed_at BIGINT NOT NULL,
    version BIGINT NOT NULL,
    epoch BIGINT NOT NULL,
    parked BIGINT NOT NULL,
    prev_owner TEXT,
    prev_claimed_at BIGINT NOT NULL,
    prev_version BIGINT NOT NULL
)

-- name: schema_plan
-- rule: R25 — what each step waits for: trigger 'relay', 'timer' or 'pull' for the step
-- that takes version `step` to `step + 1`.
CREATE TABLE plan (
    instance BIGINT NOT NULL,
    step BIGINT NOT NULL,
    trigger TEXT NOT NULL,
    PRIMARY KEY (instance, step)
)

-- name: schema_step
-- rule: R8, R19 — the step history: the claim epoch under which each step was committed,
-- how a client resolves a commit whose reply it never got.
CREATE TABLE step (
    instance BIGINT NOT NULL,
    version BIGINT NOT NULL,
    epoch BIGINT NOT NULL,
    PRIMARY KEY (instance, version)
)

-- name: schema_timer
-- rule: R5 — at most one pending timer per instance; attempt counts refused fires.
CREATE TABLE timer (
    instance BIGINT PRIMARY KEY,
    expects BIGINT NOT NULL,
    due BIGINT NOT NULL,
    attempt BIGINT NOT NULL
)

-- name: schema_task
-- rule: R17 — a task parked for a pull worker; the long wait is this row's lock.
CREATE TABLE task (
    instance BIGINT PRIMARY KEY,
    expects BIGINT NOT NULL,
    locked_by BIGINT,
    locked_until BIGINT NOT NULL
)

-- name: schema_lease
-- rule: R18 — the sweeper's lease: one holder, with an expiry.
CREATE TABLE lease (
    name TEXT PRIMARY KEY,
    holder BIGINT,
    expires BIGINT NOT NULL,
    prev_holder BIGINT,
    prev_expires BIGINT NOT NULL
)

-- name: schema_outbox
-- rule: R4, R8 — the transactional outbox: a relay written in the commit's transaction and
-- published from here, so a writer that dies after committing loses nothing.
CREATE TABLE outbox (
    seq BIGINT PRIMARY KEY,
    instance BIGINT NOT NULL,
    expects BIGINT NOT NULL,
    path TEXT NOT NULL
)

-- name: lease_create
-- rule: R18 — the sweeper's lease row, free, written once with the schema.
INSERT INTO lease (name, holder, expires, prev_holder, prev_expires) VALUES ('sweeper', NULL, 0, NULL, 0)

-- name: instance_create
-- rule: R2 — a new instance: unowned, version 0, epoch 0. $1 id, $2 steps.
INSERT INTO instance (id, steps, owner, claimed_at, version, epoch, parked, prev_owner, prev_claimed_at, prev_version)
VALUES ($1, $2, NULL, 0, 0, 0, 0, NULL, 0, 0)

-- name: plan_create
-- rule: R25 — one step's trigger. $1 instance, $2 step, $3 trigger ('relay', 'timer', 'pull').
INSERT INTO plan (instance, step, trigger) VALUES ($1, $2, $3)

-- name: claim
-- rule: R2, R10, R21 — one conditional update: take the row if it is free, held by the
-- same owner (a refresh), or older than the claim timeout by the store's clock; otherwise
-- match nothing (no row back: a refusal, R3). Every grant raises the epoch.
-- $1 instance, $2 owner, $3 store now, $4 claim timeout, $5 the claimant's own clock
-- (unused here: staleness is the store's to judge).
UPDATE instance
   SET prev_owner = owner, prev_claimed_at = claimed_at,
       owner = $2, claimed_at = $3, epoch = epoch + 1
 WHERE id = $1
   AND (owner IS NULL OR $3 - claimed_at > $4) AND $2 = $2
RETURNING owner, epoch, version, parked, prev_owner, prev_claimed_at

-- name: read
-- rule: R1, R3 — the row as it is: version, steps, owner, epoch, parked. Also names the
-- holder of a refused claim, a rejected commit and a missed release. $1 instance.
SELECT version, steps, owner, epoch, parked FROM instance WHERE id = $1

-- name: commit
-- rule: R8, R19 — the step's write, conditional on still owning the row, releasing the
-- claim in the same transaction ($4 = 1; 0 keeps it, for a claim spanning a parked task).
-- No row back: rejected, nothing written. Returns the row after, with the owner and
-- version before, and the trigger of the next step (NULL once the last step committed).
-- $1 instance, $2 owner, $3 version the step was computed from, $4 release.
UPDATE instance
   SET prev_owner = owner, prev_version = version,
       version = CAST($3 AS BIGINT) + 1,
       owner = CASE WHEN CAST($4 AS BIGINT) = 1 THEN NULL ELSE owner END,
       parked = CASE WHEN (SELECT p.trigger FROM plan p WHERE p.instance = $1 AND p.step = CAST($3 AS BIGINT) + 1) = 'pull'
                THEN 1 ELSE 0 END
 WHERE id = $1 AND owner = $2
RETURNING version, steps, owner, epoch, parked, prev_owner, prev_version,
          (SELECT p.trigger FROM plan p WHERE p.instance = instance.id AND p.step = instance.version) AS next_trigger

-- name: step_forget
-- rule: R8 — in the commit's transaction: a step committed again from an older version
-- rewrites history from there. $1 instance, $2 version the step was computed from.
DELETE FROM step WHERE instance = $1 AND version >= $2

-- name: step_record
-- rule: R8, R19 — in the commit's transaction: the epoch the step was committed under.
-- $1 instance, $2 version the step was computed from, $3 the committing claim's epoch.
INSERT INTO step (instance, version, epoch) VALUES ($1, $2, $3)

-- name: timer_clear
-- rule: R25 — in the commit's transaction: the step consumed its timer row. $1 instance.
DELETE FROM timer WHERE instance = $1

-- name: task_clear
-- rule: R17, R25 — in the commit's transaction: the step consumed its task row. $1 instance.
DELETE FROM task WHERE instance = $1

-- name: timer_schedule
-- rule: R5 — in the commit's transaction: the next step's timer. $1 instance, $2 expects
-- (the version it fires for), $3 due.
INSERT INTO timer (instance, expects, due, attempt) VALUES ($1, $2, $3, 0)

-- name: task_park
-- rule: R17 — in the commit's transaction: the next step's task row, unlocked.
-- $1 instance, $2 expects.
INSERT INTO task (instance, expects, locked_by, locked_until) VALUES ($1, $2, NULL, 0)

-- name: outbox_put
-- rule: R4, R8 — in the commit's transaction: the next step's relay goes into the outbox.
-- $1 instance, $2 expects, $3 path ('relay' or 'pull-completion').
INSERT INTO outbox (seq, instance, expects, path)
VALUES ((SELECT COALESCE(MAX(o.seq), 0) + 1 FROM outbox o), $1, $2, $3)

-- name: outbox_take
-- rule: R4 — the relay publisher takes the oldest outbox row (one row, or none).
DELETE FROM outbox WHERE seq = (SELECT MIN(o.seq) FROM outbox o)
RETURNING seq, instance, expects, path

-- name: release
-- rule: R9, R22 — every exit that does not commit releases, only while the row still shows
-- the releaser's owner id. $1 instance, $2 owner. No row back: nothing matched.
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1 AND owner = $2
RETURNING version, epoch, parked

-- name: migrate_commit
-- rule: R6, R15 — an admin migration's write, under the migration's own owner id:
-- conditional on owning, releasing in the same transaction. $1 instance, $2 owner.
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1 AND owner = $2
RETURNING version, epoch, parked

-- name: committed_under
-- rule: R8, R19 — which claim epoch committed the step from version $2 (no row: not
-- committed yet). $1 instance, $2 version.
SELECT epoch FROM step WHERE instance = $1 AND version = $2

-- name: lease_acquire
-- rule: R18 — take or renew the sweeper's lease if it is free, expired, or already ours.
-- No row back: another process holds it. $1 process, $2 store now, $3 expiry.
UPDATE lease
   SET prev_holder = holder, prev_expires = expires, holder = $1, expires = $3
 WHERE name = 'sweeper' AND (holder IS NULL OR holder = $1 OR expires <= $2)
RETURNING holder, expires, prev_holder, prev_expires

-- name: lease_held
-- rule: R18 — one row if $1 holds an unexpired lease at $2 (the store's now).
SELECT holder FROM lease WHERE name = 'sweeper' AND holder = $1 AND expires > $2

-- name: sweep
-- rule: R18, R14 — the one-statement sweep: clear every claim older than the claim
-- timeout by the store's clock, owner-blind, only while $1 holds the lease. Returns one row
-- per cleared claim (the engine orders them by id: UPDATE cannot ORDER BY).
-- $1 process, $2 store now, $3 claim timeout, $4 a cutoff instant computed by the caller
-- (unused here: age is the store's to judge).
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE owner IS NOT NULL AND $2 - claimed_at > $3
   AND EXISTS (SELECT 1 FROM lease l WHERE l.name = 'sweeper' AND l.holder = $1 AND l.expires > $2)
RETURNING id, prev_owner, epoch, claimed_at, version, parked

-- name: sweep_select
-- rule: R18 — the first statement of the two-step sweep: the stale claims, each with the
-- epoch it was selected at. $1 store now, $2 claim timeout, $3 caller's cutoff (unused).
SELECT id, epoch FROM instance WHERE owner IS NOT NULL AND $1 - claimed_at > $2 ORDER BY id

-- name: sweep_clear
-- rule: R18, R19 — the second statement: clear one selected claim, re-checking that the
-- row still holds the claim of the selected epoch, that it is still stale at this
-- statement's instant, and that the sweeper still holds its lease. No row: it missed.
-- $1 instance, $2 epoch selected, $3 process, $4 store now, $5 claim timeout,
-- $6 caller's cutoff (unused).
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1 AND owner IS NOT NULL AND epoch = $2 AND $4 - claimed_at > $5
   AND EXISTS (SELECT 1 FROM lease l WHERE l.name = 'sweeper' AND l.holder = $3 AND l.expires > $4)
RETURNING id, prev_owner, epoch, claimed_at, version, parked

-- name: timer_due
-- rule: R5 — the timers due at $1 (store now), lowest instance first, at most $2.
SELECT instance, expects, due, attempt FROM timer WHERE due <= $1 ORDER BY instance LIMIT $2

-- name: timer_pick
-- rule: R5 — hide one due timer from other pollers until $3 (at-least-once firing: a
-- poller that dies lets it come due again), re-checking it is still due at $2.
-- $1 instance, $2 store now, $3 hidden until.
UPDATE timer SET due = $3 WHERE instance = $1 AND due <= $2
RETURNING instance, expects, attempt

-- name: timer_refuse
-- rule: R5 — count a refused fire ($3 = 1) or not ($3 = 0) on the timer still pending for
-- $2, returning the count the backoff is computed from. $1 instance, $2 expects.
UPDATE timer SET attempt = attempt + CAST($3 AS BIGINT) WHERE instance = $1 AND expects = $2
RETURNING attempt

-- name: timer_defer
-- rule: R5 — move the timer still pending for $2 to $3 (the backoff's due time), in the
-- transaction of timer_refuse. $1 instance, $2 expects, $3 due.
UPDATE timer SET due = $3 WHERE instance = $1 AND expects = $2
RETURNING attempt, due

-- name: task_lock
-- rule: R17 — lock the lowest unlocked (or lock-expired) task row for worker $1 until $3.
-- $1 worker, $2 store now, $3 locked until.
UPDATE task SET locked_by = $1, locked_until = $3
 WHERE instance = (SELECT t.instance FROM task t
                    WHERE t.locked_by IS NULL OR t.locked_until <= $2
                    ORDER BY t.instance LIMIT 1)
   AND (locked_by IS NULL OR locked_until <= $2)
RETURNING instance, expects

-- name: task_complete
-- rule: R17 — a pull worker's completion: if $1 still holds the lock of the task for $3,
-- its completion relay goes into the outbox in the same statement. No row: lock lost.
-- $1 worker, $2 instance, $3 expects, $4 store now.
INSERT INTO outbox (seq, instance, expects, path)
SELECT (SELECT COALESCE(MAX(o.seq), 0) + 1 FROM outbox o), t.instance, t.expects, 'pull-completion'
  FROM task t
 WHERE t.locked_by = $1 AND t.instance = $2 AND t.expects = $3 AND t.locked_until > $4
RETURNING instance, expects
