-- SQL variant `commit-without-owner` of sutra-sim's default statements: the commit's WHERE forgets the owner (R19).
-- Spec 000, "Why a steal from a live-but-slow owner is safe". Expected: unsafe, caught by commit-by-owner.
-- Only the `commit` statement differs from sql/statements.sql: this file holds it alone,
-- layered over the default by the directive below (docs/sql-store.md, "Override files").
-- base: default

-- name: commit
-- rule: R8, R19 — broken on purpose: the WHERE matches the row by id alone, so a commit
-- from a claim that was stolen still writes. `$2 = $2` keeps the owner bound.
UPDATE instance
   SET prev_owner = owner, prev_version = version,
       version = CAST($3 AS BIGINT) + 1,
       owner = CASE WHEN CAST($4 AS BIGINT) = 1 THEN NULL ELSE owner END,
       parked = CASE WHEN (SELECT p.trigger FROM plan p WHERE p.instance = $1 AND p.step = CAST($3 AS BIGINT) + 1) = 'pull'
                THEN 1 ELSE 0 END
 WHERE id = $1 AND $2 = $2
RETURNING version, steps, owner, epoch, parked, prev_owner, prev_version,
          (SELECT p.trigger FROM plan p WHERE p.instance = instance.id AND p.step = instance.version) AS next_trigger
