-- SQL variant `claim-refuses-same-owner` of sutra-sim's default statements: the claim takes a free or stale row only: the same owner is refused (R10, R21).
-- Spec 000, "Re-entrancy, and the invariant that makes it safe". Expected: unsafe.
-- Only the `claim` statement differs from sql/statements.sql: this file holds it alone,
-- layered over the default by the directive below (docs/sql-store.md, "Override files").
-- base: default

-- name: claim
-- rule: R10 — broken on purpose: a free or stale row only; the same owner's re-claim
-- (a refresh) is refused. `$2 = $2` keeps the owner a bound parameter.
UPDATE instance
   SET prev_owner = owner, prev_claimed_at = claimed_at,
       owner = $2, claimed_at = $3, epoch = epoch + 1
 WHERE id = $1
   AND (owner IS NULL OR $3 - claimed_at > $4) AND $2 = $2
RETURNING owner, epoch, version, parked, prev_owner, prev_claimed_at
