-- SQL variant `sweep-clear-unchecked` of sutra-sim's default statements: the clear updates by id what the select found, without re-checking epoch, age or lease (River #1302).
-- Spec 000, "The sweep is the only backstop that can exist". Expected: unsafe, caught by sweep-by-age.
-- Only the `sweep_clear` statement differs from sql/statements.sql: this file holds it alone,
-- layered over the default by the directive below (docs/sql-store.md, "Override files").
-- base: default

-- name: sweep_clear
-- rule: R18, R19 — broken on purpose: clears the selected id whoever holds it now and however
-- young its claim; the epoch, process, now and timeout are bound but never compared.
UPDATE instance SET prev_owner = owner, owner = NULL
 WHERE id = $1 AND owner IS NOT NULL
   AND $2 = $2 AND $3 = $3 AND $4 = $4 AND $5 = $5
RETURNING id, prev_owner, epoch, claimed_at, version, parked
