-- SQL variant `release-by-id-only` of sutra-sim's default statements: a release clears the row by id, whoever holds it now.
-- Spec 000, "Release is part of the commit, and part of every other exit". Expected: unsafe.
-- Only the `release` statement differs from sql/statements.sql: this file holds it alone,
-- layered over the default by the directive below (docs/sql-store.md, "Override files").
-- base: default

-- name: release
-- rule: R9, R22 — broken on purpose: the release clears the row by id, whoever holds it
-- now. `$2 = $2` keeps the owner bound.
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1 AND $2 = $2
RETURNING version, epoch, parked
