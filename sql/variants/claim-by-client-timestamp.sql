-- SQL variant `claim-by-client-timestamp` of sutra-sim's default statements: the claim judges staleness by the claimant's own clock, sent as $5 (fabric8 #7258's shape).
-- Spec 000, "The claim is a compare-and-set, and a failure is a refusal". Expected: unsafe, caught by stale-steal.
-- Only the `claim` statement differs from sql/statements.sql: this file holds it alone,
-- layered over the default by the directive below (docs/sql-store.md, "Override files").
-- base: default

-- name: claim
-- rule: R2, R21 — broken on purpose: staleness judged by $5, the claimant's own clock, so a
-- claimant whose clock runs ahead takes a live claim.
UPDATE instance
   SET prev_owner = owner, prev_claimed_at = claimed_at,
       owner = $2, claimed_at = $3, epoch = epoch + 1
 WHERE id = $1
   AND (owner IS NULL OR owner = $2 OR $5 - claimed_at > $4)
RETURNING owner, epoch, version, parked, prev_owner, prev_claimed_at
