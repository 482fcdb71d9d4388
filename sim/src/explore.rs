//! Exploration: grow the runs that reached something rare, instead of starting every run
//! from zero.
//!
//! A plain sweep pays the product of the probabilities of the rare events a deep bug
//! needs. Here a run that reaches a coverage mark no earlier run reached ([`crate::marks`])
//! becomes a **branch point**: its children replay its tape up to the mark's position —
//! which rebuilds the very same world on any machine, no process forking — and continue
//! with fresh entropy from a child seed derived from the parent's seed, the branch
//! position and the child's index ([`child_seed`]). A child's tape is an ordinary tape:
//! whatever it finds shrinks and replays like any other run.
//!
//! **Energy.** Each branch point gets a budget of children when it is made
//! ([`ExploreConfig::energy_sometimes`] for the first hit of a sometimes-property,
//! [`ExploreConfig::energy_state`] for a new state signature). A child that reaches a new
//! mark earns its parent [`ExploreConfig::bonus`] more (once the schedule settles, see
//! below, only a child that reached at least the mean child's new marks does); a point whose last
//! [`ExploreConfig::barren_after`] children found nothing new is barren, and its remaining
//! energy goes back to the fresh runs. The global budget is the number of runs.
//!
//! **Generations.** The frontier is processed in generations of a fixed size
//! ([`ExploreConfig::generation`]): a generation's runs are planned from the state after
//! the previous one, run on any number of threads, and folded back in plan order. So the
//! runs, their order and every figure are the same for any `jobs`, and the whole is
//! deterministic for a start seed.
//!
//! **The fresh share.** Each generation keeps a share of fresh runs (seeds `start`,
//! `start + 1`, … like a sweep), and that share falls with the runs made
//! ([`fresh_share`]): the first generation is a sweep, after
//! [`ExploreConfig::fresh_decay_runs`] runs half a generation is fresh, and in the end
//! [`ExploreConfig::fresh_per_generation`] runs are. Why: a bug that needs no rare prefix
//! dies within the first hundred runs of a sweep, and there a child — which inherits the
//! early draws of a parent that passed — is worth less than a fresh seed; so exploration
//! spends its first runs like a sweep (measured: no old mutant takes more than 1.1× the
//! sweep's runs), and gives the frontier the budget only once a sweep would have found
//! what a sweep finds. A long exploration is then almost all children, which is what grows
//! rare states (see the settling below for the figure).
//!
//! **A share for sometimes-properties.** A share of each generation's children
//! ([`ExploreConfig::sometimes_share_percent`]) goes to sometimes-properties, round-robin
//! (the property with the fewest children so far first, then the rarest): there are a few
//! dozen of them against thousands of state signatures, and a sometimes-property hit by
//! many runs, ranked among state points by its hits, queued behind every signature hit
//! once and never got a child before the run budget was spent. The share may be held
//! back for the first [`ExploreConfig::sometimes_share_after_runs`] runs (by default it
//! is not: measured, the deep mutants lose most of the gain).
//! And a sometimes-property may branch from more than its first hit: once every point of
//! it is spent, the next run that hits it becomes one more point, up to
//! [`ExploreConfig::sometimes_rehits`] more — the first hit's prefix may be the wrong one
//! (a pause too short to matter), another run's way there gives its children another chance.
//!
//! **Boosted children.** A branch replays the world up to a rare event, but what a deep bug
//! needs next is often another rare event soon after — a pause within a commit's retry
//! backoff, a second fault while the first still holds — and a child drawing as a sweep
//! does meets it no more often than a fresh run would. So past their branch point the
//! children draw every rare chance ([`crate::Entropy::chance_in`] below one half)
//! [`ExploreConfig::boost`] times as often, up to one half ([`crate::Entropy::boosted`]).
//! Every value drawn is one the scenario can draw and is recorded as such, so the tape
//! replays a boosted child exactly with no word of the boost; what changes is only which
//! runs are likely. The prefix, and every fresh run, draw as asked. A chance whose rarity
//! the model relies on is drawn with [`crate::Entropy::chance_in_exact`] and never boosted
//! (store outages per tick: more frequent, they would chain past the client's retry
//! horizon — measured, 21 false crashes in 24,000 boosted runs before that exemption, none
//! in 72,000 after). No child is boosted in the first [`ExploreConfig::boost_after_runs`]
//! runs, where exploration is a sweep in all but name (boosted from the start,
//! snapshot-across-await took 131 runs against a sweep's 83), all are boosted until the
//! schedule settles ([`ExploreConfig::boost_percent`]), and half after
//! ([`ExploreConfig::boost_percent_settled`]). Measured before the clock fix of the same
//! session (21 starts, `explore_tune`; boost 8 from run 96): commit-retry-accepts-free-row 614 → 199 runs, sweep-trusts-renewal
//! 5,444 → 946, queued-copy-acked in process-pause 10,645 → 997; signatures in 10,000 runs
//! smoke 62,728 → 108,903, swarm 182,370 → 193,251; boost 16 was better for
//! queued-copy-acked (261) and worse for the other two (267, 1,261) and for swarm's
//! signatures (144,772 when boosted after settling too). After that fix, with 2 children
//! per new state signature, by `bench --explore`: commit-retry 3,713 → 325,
//! sweep-trusts-renewal 6,689 → 892, queued-copy-acked 57,986 → 861 (sweep → explore).
//!
//! **Strategies mix.** A share of the children ([`ExploreConfig::switch_percent`]) switch
//! between the random walk and PCT at their branch point: the prefix replays under the
//! parent's strategy (it must, to rebuild the same world), and from the branch point on the
//! child schedules with the other one. The switch is a strategy of its own
//! ([`StrategyConfig::switched_at`]), made by tape position, so a child's tape and strategy
//! replay it anywhere, and its descendants keep it.
//!
//! Within each kind, points are served rarest first: the fewest runs hit their mark (as in FairFuzz's rare
//! branches; measured, serving by position alone loses most of the gain), then earliest in
//! their run (a child of an early point has more of its run left to vary; serving the
//! latest first makes children nearly barren), then newest.
//!
//! **Settling: from bugs to coverage.** A bug a sweep can find dies within a few hundred
//! runs, a deep one within a thousand or so (the benchmarks' medians: old mutants ≤ 94,
//! the deep ones 227 and 614); a long exploration is for growing state coverage, and the
//! two want different schedules. So after [`ExploreConfig::settle_after_runs`] runs the
//! schedule settles, and every run before it is planned exactly as before (no benchmark
//! median below it moves). From then on:
//! - rarity counts **independent hits** only: a child replays its parent's tape up to the
//!   branch, so it reaches every mark its parent reached there again; counted, those
//!   replays make a point look common after its first child. Before settling this is what
//!   spreads the children one batch per point, which finds bugs sooner (measured:
//!   snapshot-across-await took 118 runs under the settled rules from the start, 94 under
//!   these; queued-copy-acked 251 against 227); after, leaving the replays out is what
//!   lets a point's bonus pay at all;
//! - a child earns its parent [`ExploreConfig::bonus_settled`] more only if it reached at
//!   least as many new marks as the mean child so far — nearly every child reaches some
//!   new state signature, so "something new" told no point from another — and a new state
//!   signature gets [`ExploreConfig::energy_state_settled`] children: a few children for
//!   every point, more for the fertile ones;
//! - no share of the children is reserved for sometimes-properties any more
//!   ([`sometimes_quota`]): by then each has had its children, and its points compete by
//!   rarity like state points (measured: a share falling as `settle_after_runs / runs`
//!   left swarm at 169,644 signatures, 1.93× a sweep; none after settling, 177,612).
//!
//! Measured (distinct state signatures in 10,000 runs, `bench --explore --only signatures`):
//! smoke 61,562 against a sweep's 29,831 (2.06×), swarm 177,612 against 88,073 (2.02×);
//! never settling, with the share, 49,517 and 133,361 (1.66×, 1.51×). Every kill median of
//! `bench --explore` is below 1,000 runs and unchanged.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::entropy::Tape;
use crate::marks::{Mark, MarkKind, MAP_SLOTS};
use crate::run::EntropyMode;
use crate::strategy::StrategyConfig;

/// How to explore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExploreConfig {
    /// Most runs in all (the global energy).
    pub runs: u64,
    /// The first fresh run's seed; fresh runs take `start`, `start + 1`, …
    pub start: u64,
    /// Runs per generation. Fixed, whatever the number of threads.
    pub generation: usize,
    /// Fewest fresh runs per generation while some branch point has energy left (at least
    /// 1): the share the fresh runs fall to.
    pub fresh_per_generation: usize,
    /// How fast the fresh share falls: after `n` runs a generation holds
    /// `generation · d / (d + n)` fresh runs (rounded up, at least `fresh_per_generation`),
    /// where `d` is this — so it starts as a sweep, is half fresh after `d` runs, and
    /// settles at the floor. 0 keeps the floor from the start.
    pub fresh_decay_runs: u64,
    /// Children granted to the first hit of a sometimes-property.
    pub energy_sometimes: u32,
    /// Children granted to a new state signature before settling. Measured (10,000 runs, no
    /// sometimes-share, never settled): 2 gave smoke 50,299 signatures, 3 52,176, 4 54,866,
    /// 6 55,074, 8 53,697. With the settling and boosted children, 2 rather than 4 (after
    /// the clock fix, 21 starts): snapshot-across-await in smoke 304 → 226 runs (a sweep's
    /// 210), commit-retry-accepts-free-row 406 → 325, sweep-trusts-renewal 1,258 → 892,
    /// queued-copy-acked 997 → 861; signatures smoke 113,565 → 107,450, swarm 187,401 →
    /// 183,142 — fewer children per state point leave more of the early runs to the rest.
    pub energy_state: u32,
    /// Later runs that hit a sometimes-property already reached may each become one more
    /// point of it, up to this many, once every earlier point of it is spent: the first
    /// hit's prefix may be the wrong one (a pause too short, a window already closed), and
    /// another run's way to the same mark gives its children another chance.
    pub sometimes_rehits: u32,
    /// The share of each generation's children reserved for sometimes-properties, in
    /// percent (rounded up), served round-robin; what they leave goes to every point. None
    /// once the schedule settles ([`sometimes_quota`]): measured, kept for 10,000 runs it
    /// cost a tenth of the state signatures (smoke 54,866 → 49,517).
    pub sometimes_share_percent: u32,
    /// Runs made before the share above is reserved (0: from the start). Measured in
    /// pull-workers over 21 starts: a 50% share from run 256 on left the deep mutants at
    /// 470 and 889 runs, a 25% share from the start took them to 227 and 614 while
    /// snapshot-across-await (a sweep's 83) stayed at 94.
    pub sometimes_share_after_runs: u64,
    /// Runs after which the schedule settles from finding bugs to growing coverage (0:
    /// never; see the module doc): from then on no sometimes-share is reserved, rarity
    /// counts independent hits only, a child earns its
    /// parent [`ExploreConfig::bonus_settled`] only if it reached at least the mean child's
    /// new marks, and a new state signature gets [`ExploreConfig::energy_state_settled`].
    /// Above the slowest benchmark median (commit-retry-accepts-free-row, 614), so that no
    /// kill figure moves. Measured (10,000 runs): settling after 640 runs gave smoke 69,915
    /// and swarm 176,171 signatures (2.00× a sweep's, too close), after 1,000 61,562 and
    /// 177,612.
    pub settle_after_runs: u64,
    /// Children granted to a new state signature once settled. Measured (10,000 runs,
    /// settled from the start, no sometimes-share): 1 gave smoke 61,739 / swarm 173,228
    /// signatures, 2 gave 63,983 / 184,755, 4 gave 55,875 / 176,738.
    pub energy_state_settled: u32,
    /// Children a point earns, once settled, for each child that reached at least as many
    /// new marks as the mean child so far (within the per-mark budget).
    pub bonus_settled: u32,
    /// Children a point earns, before settling, for each child that reached a new mark.
    /// Measured: for state points it hardly ever pays before settling (a replay makes the
    /// point common after its first batch), 4 and 8 gave the same signatures.
    pub bonus: u32,
    /// A point whose last this many children reached nothing new is barren.
    pub barren_after: u32,
    /// Most children of one point, bonuses included (the per-mark budget), as a multiple
    /// of its initial energy.
    pub children_max_factor: u32,
    /// Most branch points kept with energy; the oldest state points go first.
    pub frontier_max: usize,
    /// Stop after the generation in which the first failure was found.
    pub stop_at_first_failure: bool,
    /// The strategy fresh runs schedule with (the scenario's, or the command line's).
    pub strategy: StrategyConfig,
    /// The share of children, in percent, that switch strategy at their branch point: the
    /// prefix replays under the parent's strategy, and from the branch point on the child
    /// schedules with the other one ([`StrategyConfig::switched_at`]: the random walk turns
    /// to PCT, PCT to the random walk). A lineage switches once; its switch is part of the
    /// strategy every descendant replays and every reproducer records. Off by default:
    /// measured at 25% over 21 starts, `commit-retry-accepts-free-row` went from 614 to 528
    /// runs but `queued-copy-acked` from 227 to 308 (pull-workers), the old mutants stayed
    /// put, and signatures in 10,000 runs moved +2% (smoke) and −4% (swarm).
    pub switch_percent: u32,
    /// The share of children, in percent (decided by the child's seed), whose fresh draws
    /// past the branch point make rare chances [`ExploreConfig::boost`] times likelier
    /// ([`crate::Entropy::boosted`]) until the schedule settles: a child of a run that
    /// reached one rare event is likelier to meet the next. The tape replays a boosted
    /// child with no word of it. See the module doc for the measurements.
    pub boost_percent: u32,
    /// How much likelier a boosted child's rare chances are (up to one half each; 1: no
    /// boost).
    pub boost: u32,
    /// Runs made before any child is boosted: the first runs find what a sweep finds, and
    /// a boosted child there costs the bugs that want a quiet run (measured: boosted from
    /// run 0, snapshot-across-await took 131 runs; from run 96, 94, as unboosted).
    pub boost_after_runs: u64,
    /// The boosted share once the schedule settles (growing state coverage): measured, all
    /// boosted left swarm at 174,504 signatures in 10,000 runs, none 196,918 (smoke 116,102
    /// and 91,261), half 193,251 (smoke 108,903).
    pub boost_percent_settled: u32,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            runs: 1_000,
            start: 0,
            generation: 8,
            fresh_per_generation: 1,
            fresh_decay_runs: 64,
            energy_sometimes: 16,
            energy_state: 2,
            sometimes_rehits: 4,
            sometimes_share_percent: 25,
            sometimes_share_after_runs: 0,
            settle_after_runs: 1_000,
            energy_state_settled: 2,
            bonus_settled: 2,
            bonus: 4,
            barren_after: 12,
            children_max_factor: 4,
            frontier_max: 16_384,
            stop_at_first_failure: false,
            strategy: StrategyConfig::Random,
            switch_percent: 0,
            boost_percent: 100,
            boost: 8,
            boost_after_runs: 96,
            boost_percent_settled: 50,
        }
    }
}

/// One planned run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Its place in the exploration's order, from 0.
    pub index: u64,
    /// Its seed: a fresh run's seed, or the child seed drawn after the prefix.
    pub seed: u64,
    /// Where its entropy comes from: a seed, or a branch of an earlier run.
    pub entropy: EntropyMode,
    /// What it schedules with: the fresh runs' strategy, or its parent's (as of the branch
    /// point), possibly switched at the branch point ([`ExploreConfig::switch_percent`]).
    pub strategy: StrategyConfig,
    /// The branch point it grows from, if it is a child (an index into the points).
    pub parent: Option<usize>,
}

/// What the explorer needs to know of a run.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// The marks it reached, first hits in order.
    pub marks: Vec<Mark>,
    /// Its whole tape (the prefix of a branch point is cut from it).
    pub tape: Tape,
    /// True if it failed (a violation, hang, budget overrun or crash).
    pub failed: bool,
}

/// A branch point, as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointStats {
    /// What reached it first.
    pub kind: MarkKind,
    /// Its tape position.
    pub position: usize,
    /// Children run from it.
    pub children: u32,
    /// Children that earned it a bonus: reached a new mark (once settled, at least as many
    /// new marks as the mean child).
    pub productive: u32,
}

/// What an exploration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExploreStats {
    /// Runs made.
    pub runs: u64,
    /// Of which fresh (seeded) runs.
    pub fresh_runs: u64,
    /// Of which children that switched strategy (at their own branch point or an
    /// ancestor's; [`ExploreConfig::switch_percent`]).
    pub switched_runs: u64,
    /// Of which children whose rare chances were boosted past their branch point
    /// ([`ExploreConfig::boost_percent`]).
    pub boosted_runs: u64,
    /// Generations processed.
    pub generations: u64,
    /// Distinct bitmap slots reached by any run.
    pub marks_reached: u64,
    /// Of which first hits of sometimes-properties.
    pub sometimes_reached: u64,
    /// Every branch point, in the order made.
    pub points: Vec<PointStats>,
    /// The 1-based place of the first failing run in exploration order, if any failed.
    pub first_failure: Option<u64>,
}

impl ExploreStats {
    /// Branch points with at least one child.
    pub fn branched_points(&self) -> usize {
        self.points.iter().filter(|p| p.children > 0).count()
    }
}

/// The seed of child `index` of the run of seed `parent` branched at tape `position`.
pub fn child_seed(parent: u64, position: usize, index: u32) -> u64 {
    let mut x = parent ^ (position as u64).rotate_left(32) ^ u64::from(index).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2 {
        x ^= x >> 30;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 27;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
    }
    x
}

struct Point {
    /// The parent's tape, shared by its points; dropped when the point is spent.
    tape: Option<Arc<Tape>>,
    position: usize,
    seed: u64,
    /// The parent's strategy, as its prefix up to `position` replays it.
    strategy: StrategyConfig,
    slot: u32,
    energy: u32,
    /// The per-mark budget: children in all, bonuses included.
    children_max: u32,
    barren_streak: u32,
    stats: PointStats,
}

/// Explores: plans runs generation by generation, runs each generation's runs with
/// `run` on `jobs` threads, and hands every run's payload to `visit` in exploration order.
/// `stop` is asked between generations. Deterministic for a config, whatever `jobs`.
pub fn explore<T: Send>(
    config: &ExploreConfig,
    jobs: usize,
    run: &(dyn Fn(&RunSpec) -> (RunSummary, T) + Sync),
    visit: &mut dyn FnMut(&RunSpec, &RunSummary, T),
    stop: &dyn Fn() -> bool,
) -> ExploreStats {
    assert!(config.generation >= 1 && config.fresh_per_generation >= 1, "a generation runs at least one fresh run");
    let mut seen = vec![0u64; MAP_SLOTS / 64];
    // Runs that hit each slot: a point is as rare as its slot.
    let mut hits = vec![0u32; MAP_SLOTS];
    let mut points: Vec<Point> = Vec::new();
    // The points of each sometimes-property reached: a later hit may add one (see
    // `sometimes_rehits`). A BTreeMap: no random hasher in a deterministic explorer.
    let mut sometimes_points: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut stats = ExploreStats::default();
    let mut next_fresh = config.start;
    // New marks reached by children, and children: the mean a bonus is judged against.
    let (mut child_marks, mut child_runs) = (0u64, 0u64);
    while stats.runs < config.runs && !stop() {
        let size = (config.generation as u64).min(config.runs - stats.runs) as usize;
        let specs = plan(config, size, &mut points, &sometimes_points, &hits, &mut next_fresh, stats.runs);
        let results = run_all(&specs, jobs, run);
        let settled = config.settle_after_runs != 0 && stats.runs >= config.settle_after_runs;
        for (spec, (summary, payload)) in specs.iter().zip(results) {
            stats.runs += 1;
            if spec.parent.is_none() {
                stats.fresh_runs += 1;
            } else if spec.strategy.switch().is_some() {
                stats.switched_runs += 1;
            }
            if matches!(spec.entropy, EntropyMode::Branch { boost, .. } if boost > 1) {
                stats.boosted_runs += 1;
            }
            if summary.failed && stats.first_failure.is_none() {
                stats.first_failure = Some(spec.index + 1);
            }
            let mut tape: Option<Arc<Tape>> = None;
            let mut new_marks = 0u64;
            // A child replays its parent's tape up to the branch, so it reaches every mark its
            // parent reached there again, at the same position: those are the parent's hits,
            // not another run's way to the mark. Counted, they made a point look common after
            // its first child (so a bonus never paid), and a child of a spent sometimes-point
            // became a later-hit point with its parent's very prefix.
            let replayed = match &spec.entropy {
                EntropyMode::Branch { prefix, .. } => prefix.0.len(),
                _ => 0,
            };
            for mark in &summary.marks {
                let (word, bit) = (mark.slot as usize / 64, 1u64 << (mark.slot % 64));
                if settled && spec.parent.is_some() && mark.position <= replayed && seen[word] & bit != 0 {
                    continue;
                }
                hits[mark.slot as usize] = hits[mark.slot as usize].saturating_add(1);
                if seen[word] & bit != 0 {
                    // A rehit of a sometimes-property whose points are all spent may
                    // become one more point of it.
                    let rehit = mark.kind == MarkKind::Sometimes
                        && !summary.failed
                        && sometimes_points.get(&mark.slot).is_some_and(|mine| {
                            mine.len() <= config.sometimes_rehits as usize
                                && mine.iter().all(|&i| points[i].energy == 0)
                        });
                    if !rehit {
                        continue;
                    }
                } else {
                    seen[word] |= bit;
                    new_marks += 1;
                    stats.marks_reached += 1;
                    if mark.kind == MarkKind::Sometimes {
                        stats.sometimes_reached += 1;
                    }
                }
                // A failing run is not grown: its find is already in.
                if summary.failed {
                    continue;
                }
                if mark.kind == MarkKind::Sometimes {
                    sometimes_points.entry(mark.slot).or_default().push(points.len());
                }
                let tape = tape.get_or_insert_with(|| Arc::new(summary.tape.clone())).clone();
                let energy = match mark.kind {
                    MarkKind::Sometimes => config.energy_sometimes,
                    MarkKind::State if settled => config.energy_state_settled,
                    MarkKind::State => config.energy_state,
                };
                let position = mark.position.min(summary.tape.len());
                points.push(Point {
                    tape: Some(tape),
                    position,
                    seed: spec.seed,
                    strategy: spec.strategy.as_of(u32::try_from(position).unwrap_or(u32::MAX)),
                    slot: mark.slot,
                    energy,
                    children_max: energy * config.children_max_factor,
                    barren_streak: 0,
                    stats: PointStats { kind: mark.kind, position: mark.position, children: 0, productive: 0 },
                });
            }
            if let Some(parent) = spec.parent {
                let p = &mut points[parent];
                // Nearly every child reaches some new state signature, so "reached something
                // new" tells no point from another; a child earns its parent more only if it
                // reached at least as many new marks as the mean child so far.
                child_marks += new_marks;
                child_runs += 1;
                let (earns, bonus) = if settled {
                    (new_marks > 0 && new_marks * child_runs >= child_marks, config.bonus_settled)
                } else {
                    (new_marks > 0, config.bonus)
                };
                if earns {
                    p.stats.productive += 1;
                    // The bonus, within the per-mark budget.
                    let left = p.children_max.saturating_sub(p.stats.children + p.energy);
                    p.energy += bonus.min(left);
                    p.barren_streak = 0;
                } else {
                    p.barren_streak += 1;
                    if p.barren_streak >= config.barren_after {
                        // Barren: what it had left goes back to the fresh runs.
                        p.energy = 0;
                    }
                }
            }
            visit(spec, &summary, payload);
        }
        stats.generations += 1;
        // No child of this generation is in flight any more: spent points let go of their tape.
        for p in points.iter_mut().filter(|p| p.energy == 0) {
            p.tape = None;
        }
        trim_frontier(&mut points, config.frontier_max);
        if config.stop_at_first_failure && stats.first_failure.is_some() {
            break;
        }
    }
    stats.points = points.into_iter().map(|p| p.stats).collect();
    stats
}

/// Plans one generation of `size` runs: at least [`fresh_share`] fresh runs; of the
/// children, up to [`ExploreConfig::sometimes_share`] go round-robin to sometimes-properties
/// (the least-served property first, then the rarest), and the rest to the points with
/// energy, rarest mark first, earliest, then newest.
fn plan(
    config: &ExploreConfig,
    size: usize,
    points: &mut [Point],
    sometimes_points: &BTreeMap<u32, Vec<usize>>,
    hits: &[u32],
    next_fresh: &mut u64,
    first_index: u64,
) -> Vec<RunSpec> {
    let children_max = size.saturating_sub(fresh_share(config, first_index).min(size));
    let mut children = Vec::with_capacity(children_max);
    // The reserved share: a sometimes-property reached by many runs is still one of a few
    // dozen rare events, and ranked by hits alone it queued behind thousands of state
    // signatures hit once, so its children never ran.
    let reserved = sometimes_quota(config, children_max, first_index);
    let mut served: BTreeMap<u32, u32> = sometimes_points
        .iter()
        .map(|(&slot, mine)| (slot, mine.iter().map(|&i| points[i].stats.children).sum()))
        .collect();
    while children.len() < reserved {
        let next = sometimes_points
            .iter()
            .filter_map(|(slot, mine)| mine.iter().find(|&&i| points[i].energy > 0).map(|&i| (slot, i)))
            .min_by_key(|&(slot, i)| (served[slot], hits[*slot as usize], points[i].position, i));
        let Some((&slot, i)) = next else { break };
        *served.get_mut(&slot).expect("every property with points is counted") += 1;
        children.push(child_of(config, &mut points[i], i, first_index));
    }
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| points[i].energy > 0).collect();
    order.sort_by_key(|&i| (hits[points[i].slot as usize], points[i].position, std::cmp::Reverse(i)));
    'fill: for &i in &order {
        while points[i].energy > 0 {
            if children.len() >= children_max {
                break 'fill;
            }
            children.push(child_of(config, &mut points[i], i, first_index));
        }
    }
    // Fresh runs first: a generation runs at once, and its order only says which find
    // counts as first; fresh seeds in front keep a sweep's order where the children add nothing.
    let mut specs = Vec::with_capacity(size);
    while specs.len() + children.len() < size {
        specs.push(RunSpec {
            index: 0,
            seed: *next_fresh,
            entropy: EntropyMode::Seed(*next_fresh),
            strategy: config.strategy,
            parent: None,
        });
        *next_fresh = next_fresh.wrapping_add(1);
    }
    specs.extend(children);
    for (k, spec) in specs.iter_mut().enumerate() {
        spec.index = first_index + k as u64;
    }
    specs
}

/// The next child of point `p` (index `i`), paid from its energy.
fn child_of(config: &ExploreConfig, p: &mut Point, i: usize, made: u64) -> RunSpec {
    p.energy -= 1;
    let index = p.stats.children;
    p.stats.children += 1;
    let seed = child_seed(p.seed, p.position, index);
    let tape = p.tape.as_ref().expect("a point with energy keeps its tape");
    RunSpec {
        index: 0,
        seed,
        entropy: EntropyMode::Branch {
            prefix: Tape(tape.0[..p.position].to_vec()),
            seed,
            boost: child_boost(config, made, seed),
        },
        strategy: child_strategy(config, p.strategy, p.position, seed),
        parent: Some(i),
    }
}

/// How much likelier rare chances are for the child of seed `seed` past its branch point:
/// [`ExploreConfig::boost`] for a share of the children decided by the seed
/// ([`ExploreConfig::boost_percent`]), 1 for the others.
fn child_boost(config: &ExploreConfig, made: u64, seed: u64) -> u32 {
    let settled = config.settle_after_runs != 0 && made >= config.settle_after_runs;
    let share = if settled { config.boost_percent_settled } else { config.boost_percent };
    if made >= config.boost_after_runs && (seed >> 24) % 100 < u64::from(share) {
        config.boost.max(1)
    } else {
        1
    }
}

/// The strategy of the child of seed `seed` branched at tape `position` from a parent
/// that replays its prefix with `parent`: the parent's, or — for a share of the children,
/// decided by the child's seed — switched to the other strategy at the branch point.
fn child_strategy(config: &ExploreConfig, parent: StrategyConfig, position: usize, seed: u64) -> StrategyConfig {
    let switches = parent.switch().is_none() && (seed >> 40) % 100 < u64::from(config.switch_percent);
    match u32::try_from(position) {
        Ok(at) if switches => parent.switched_at(at),
        _ => parent,
    }
}

/// Fresh runs in a generation planned after `made` runs: a share that starts at the whole
/// generation and falls with the runs made (see [`ExploreConfig::fresh_decay_runs`]).
pub fn fresh_share(config: &ExploreConfig, made: u64) -> usize {
    let g = config.generation as u64;
    let d = config.fresh_decay_runs;
    let decayed = if d == 0 { 0 } else { (g * d).div_ceil(d + made) };
    (decayed as usize).max(config.fresh_per_generation).min(config.generation)
}

/// Children reserved for sometimes-properties in a generation of `children` children
/// planned after `made` runs: [`ExploreConfig::sometimes_share_percent`] of them, rounded
/// up, from [`ExploreConfig::sometimes_share_after_runs`] until the schedule settles
/// ([`ExploreConfig::settle_after_runs`]); none before or after.
pub fn sometimes_quota(config: &ExploreConfig, children: usize, made: u64) -> usize {
    let settled = config.settle_after_runs != 0 && made >= config.settle_after_runs;
    if made < config.sometimes_share_after_runs || settled {
        return 0;
    }
    (children * config.sometimes_share_percent as usize).div_ceil(100)
}

/// Keeps at most `max` points with energy: the oldest state points lose theirs first.
fn trim_frontier(points: &mut [Point], max: usize) {
    let live = points.iter().filter(|p| p.energy > 0).count();
    let mut excess = live.saturating_sub(max);
    for p in points.iter_mut() {
        if excess == 0 {
            break;
        }
        if p.energy > 0 && p.stats.kind == MarkKind::State {
            p.energy = 0;
            p.tape = None;
            excess -= 1;
        }
    }
}

/// Runs `specs` on `jobs` threads; results in spec order.
fn run_all<T: Send>(
    specs: &[RunSpec],
    jobs: usize,
    run: &(dyn Fn(&RunSpec) -> (RunSummary, T) + Sync),
) -> Vec<(RunSummary, T)> {
    if jobs <= 1 || specs.len() <= 1 {
        return specs.iter().map(run).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<(RunSummary, T)>>> = Mutex::new((0..specs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(specs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = specs.get(i) else { return };
                let result = run(spec);
                slots.lock().expect("no worker panics while holding the lock")[i] = Some(result);
            });
        }
    });
    slots.into_inner().expect("workers are done").into_iter().map(|r| r.expect("every run ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of the fake program: every run hits sometimes-mark 1 at position 2, and
    /// state marks of its own seed's slot at position 1.
    fn fake(spec: &RunSpec) -> (RunSummary, ()) {
        let marks = vec![
            Mark { slot: (spec.seed % 1_000) as u32 + 10, position: 1, kind: MarkKind::State },
            Mark { slot: 1, position: 2, kind: MarkKind::Sometimes },
        ];
        (RunSummary { marks, tape: Tape(vec![0; 4]), failed: false }, ())
    }

    #[test]
    fn generations_are_counted_as_they_are_processed() {
        let config = ExploreConfig { runs: 64, generation: 8, ..ExploreConfig::default() };
        let (stats, specs) = explored(&config);
        assert_eq!(specs.len(), 64);
        assert_eq!(stats.generations, 8);
        // Every run hits the one sometimes-mark: reached once, by the first run.
        assert_eq!(stats.sometimes_reached, 1);
    }

    #[test]
    fn once_settled_a_child_that_reached_nothing_new_earns_its_parent_nothing() {
        // Every run hits the same two marks: only the first run finds anything.
        let same = |_: &RunSpec| {
            let marks = vec![
                Mark { slot: 10, position: 1, kind: MarkKind::State },
                Mark { slot: 1, position: 2, kind: MarkKind::Sometimes },
            ];
            (RunSummary { marks, tape: Tape(vec![0; 4]), failed: false }, ())
        };
        let config = ExploreConfig { runs: 64, settle_after_runs: 1, ..ExploreConfig::default() };
        let stats = explore(&config, 1, &same, &mut |_, _, _| {}, &|| false);
        assert!(stats.points.iter().any(|p| p.children > 0));
        assert!(stats.points.iter().all(|p| p.productive == 0), "{:?}", stats.points);
    }

    #[test]
    fn no_point_gets_more_children_than_its_budget() {
        let config = ExploreConfig { runs: 600, fresh_decay_runs: 0, ..ExploreConfig::default() };
        let (stats, _) = explored(&config);
        for p in &stats.points {
            let energy = match p.kind {
                MarkKind::Sometimes => config.energy_sometimes,
                MarkKind::State => config.energy_state,
            };
            assert!(p.children <= energy * config.children_max_factor, "{p:?}");
        }
    }

    #[test]
    fn children_are_boosted_at_the_settled_share_only_once_settled() {
        let config = ExploreConfig {
            boost: 8,
            boost_after_runs: 0,
            boost_percent: 0,
            boost_percent_settled: 100,
            settle_after_runs: 0,
            ..ExploreConfig::default()
        };
        let seeds = (0..200u64).map(|s| s << 24);
        assert!(seeds.clone().all(|seed| child_boost(&config, 1_000, seed) == 1), "never settled: no boost");
        let settling = ExploreConfig { settle_after_runs: 500, ..config };
        assert!(seeds.clone().all(|seed| child_boost(&settling, 499, seed) == 1));
        assert!(seeds.clone().all(|seed| child_boost(&settling, 500, seed) == 8));
    }

    #[test]
    fn child_seeds_are_pinned() {
        // A child's seed decides which run it is: the same exploration explores the same
        // runs only while this mix stays the same, so a change to it must be a choice.
        assert_eq!(child_seed(0, 0, 0), 0);
        assert_eq!(child_seed(1, 2, 3), 18_030_861_449_257_866_420);
        assert_eq!(child_seed(0xdead_beef, 1000, 7), 6_224_038_444_364_132_018);
    }

    #[test]
    fn branched_points_count_the_points_with_children() {
        let point = |children| PointStats { kind: MarkKind::State, position: 0, children, productive: 0 };
        let stats = ExploreStats { points: vec![point(0), point(2), point(1), point(0)], ..ExploreStats::default() };
        assert_eq!(stats.branched_points(), 2);
    }

    fn explored(config: &ExploreConfig) -> (ExploreStats, Vec<RunSpec>) {
        let mut specs = Vec::new();
        let stats = explore(config, 1, &fake, &mut |spec, _, _| specs.push(spec.clone()), &|| false);
        (stats, specs)
    }

    #[test]
    fn a_sometimes_property_gets_its_share_of_children_though_state_points_are_rarer() {
        let config = ExploreConfig {
            runs: 64,
            fresh_decay_runs: 0,
            sometimes_share_percent: 50,
            sometimes_share_after_runs: 0,
            ..ExploreConfig::default()
        };
        let (stats, specs) = explored(&config);
        // Every run of the first generation hit the sometimes-mark, each state mark once:
        // ranked by hits alone, the state points would take every child.
        let sometimes = stats.points.iter().position(|p| p.kind == MarkKind::Sometimes).unwrap();
        let second: Vec<_> = specs[8..16].iter().filter_map(|s| s.parent).collect();
        assert_eq!(second.len(), 7);
        // Half of 7, rounded up.
        assert_eq!(second.iter().filter(|&&p| p == sometimes).count(), 4, "children of {second:?}");
        for none in [
            ExploreConfig { sometimes_share_percent: 0, ..config.clone() },
            ExploreConfig { sometimes_share_after_runs: 9, ..config },
        ] {
            let (_, specs) = explored(&none);
            assert!(specs[8..16].iter().all(|s| s.parent != Some(sometimes)));
        }
    }

    #[test]
    fn a_full_frontier_takes_energy_from_its_oldest_state_points_only_as_many_as_it_must() {
        let point = |kind, energy| Point {
            tape: Some(Arc::new(Tape(vec![0; 4]))),
            position: 1,
            seed: 0,
            strategy: StrategyConfig::Random,
            slot: 0,
            energy,
            children_max: 8,
            barren_streak: 0,
            stats: PointStats { kind, position: 1, children: 0, productive: 0 },
        };
        let (state, sometimes) = (MarkKind::State, MarkKind::Sometimes);
        let mut points = vec![point(state, 2), point(sometimes, 2), point(state, 2), point(state, 0), point(state, 2)];
        // Four points with energy, two allowed: the two oldest state points give theirs up.
        trim_frontier(&mut points, 2);
        assert_eq!(points.iter().map(|p| p.energy).collect::<Vec<_>>(), vec![0, 2, 0, 0, 2]);
        assert_eq!(points.iter().map(|p| p.tape.is_some()).collect::<Vec<_>>(), vec![false, true, false, true, true]);
    }

    #[test]
    fn a_spent_state_point_is_no_share_of_what_a_full_frontier_gives_up() {
        let point = |energy| Point {
            tape: (energy > 0).then(|| Arc::new(Tape(vec![0; 4]))),
            position: 1,
            seed: 0,
            strategy: StrategyConfig::Random,
            slot: 0,
            energy,
            children_max: 8,
            barren_streak: 0,
            stats: PointStats { kind: MarkKind::State, position: 1, children: 0, productive: 0 },
        };
        // Two points with energy, one allowed: the oldest of them gives its energy up; the
        // older point, spent already, gives nothing.
        let mut points = vec![point(0), point(2), point(2)];
        trim_frontier(&mut points, 1);
        assert_eq!(points.iter().map(|p| p.energy).collect::<Vec<_>>(), vec![0, 0, 2]);
    }

    #[test]
    fn the_reserved_share_is_dealt_out_in_turn_among_the_sometimes_properties() {
        // Every run hits two sometimes-marks (slots 1 and 2) besides its own state mark.
        let two = |spec: &RunSpec| {
            let marks = vec![
                Mark { slot: (spec.seed % 1_000) as u32 + 10, position: 1, kind: MarkKind::State },
                Mark { slot: 1, position: 2, kind: MarkKind::Sometimes },
                Mark { slot: 2, position: 3, kind: MarkKind::Sometimes },
            ];
            (RunSummary { marks, tape: Tape(vec![0; 4]), failed: false }, ())
        };
        let config = ExploreConfig {
            runs: 16,
            fresh_decay_runs: 0,
            sometimes_share_percent: 100,
            sometimes_share_after_runs: 0,
            energy_sometimes: 16,
            ..ExploreConfig::default()
        };
        let mut specs = Vec::new();
        let stats = explore(&config, 1, &two, &mut |spec, _, _| specs.push(spec.clone()), &|| false);
        let second: Vec<usize> = specs[8..16].iter().filter_map(|s| s.parent).collect();
        let per_property: Vec<usize> = (stats.points.iter().enumerate())
            .filter(|(_, p)| p.kind == MarkKind::Sometimes)
            .map(|(i, _)| second.iter().filter(|&&p| p == i).count())
            .collect();
        assert_eq!(per_property.len(), 2, "{:?}", stats.points);
        // Seven children, taken in turn: four and three, not all seven from the first.
        assert_eq!(per_property.iter().sum::<usize>(), 7, "children of {second:?}");
        assert!(per_property.iter().all(|&n| n >= 3), "children per property {per_property:?}");
    }

    #[test]
    fn a_share_of_children_switch_strategy_at_their_branch_point_and_their_descendants_keep_it() {
        let config = ExploreConfig { runs: 400, fresh_decay_runs: 0, switch_percent: 50, ..ExploreConfig::default() };
        let (_, specs) = explored(&config);
        let fresh: Vec<_> = specs.iter().filter(|s| s.parent.is_none()).collect();
        assert!(fresh.iter().all(|s| s.strategy == StrategyConfig::Random), "fresh runs schedule as a sweep's");
        let children: Vec<_> = specs.iter().filter(|s| s.parent.is_some()).collect();
        let switched = children.iter().filter(|s| s.strategy.switch().is_some()).count();
        // Half of the children of unswitched lineages switch, and a switched lineage's
        // children all keep it: more than half in all, not every one.
        assert!(switched * 2 > children.len() && switched < children.len(), "{switched} of {}", children.len());
        for child in &children {
            let EntropyMode::Branch { prefix, .. } = &child.entropy else { panic!("a child branches") };
            if let Some((at, then)) = child.strategy.switch() {
                // The fake program's marks lie within its first draws, so every switch is made
                // at the child's own branch point or inherited from within its prefix.
                assert!(at as usize <= prefix.len() && then == StrategyConfig::PCT_DEFAULT, "{child:?}");
            }
        }
        let none = ExploreConfig { switch_percent: 0, ..config };
        let (_, specs) = explored(&none);
        assert!(specs.iter().all(|s| s.strategy == StrategyConfig::Random));
    }

    #[test]
    fn a_share_of_children_are_boosted_once_the_runs_made_reach_the_threshold_and_fresh_runs_never_are() {
        let config = ExploreConfig {
            runs: 400,
            fresh_decay_runs: 0,
            boost_percent: 50,
            boost: 8,
            boost_after_runs: 96,
            ..ExploreConfig::default()
        };
        let boost_of = |s: &RunSpec| match s.entropy {
            EntropyMode::Branch { boost, .. } => boost,
            _ => 1,
        };
        let (stats, specs) = explored(&config);
        assert!(specs.iter().filter(|s| s.parent.is_none()).all(|s| boost_of(s) == 1), "fresh runs draw as asked");
        assert!(specs[..96].iter().all(|s| boost_of(s) == 1), "no child is boosted before 96 runs");
        let later: Vec<_> = specs[96..].iter().filter(|s| s.parent.is_some()).collect();
        let boosted = later.iter().filter(|s| boost_of(s) == 8).count();
        assert!(later.iter().all(|s| [1, 8].contains(&boost_of(s))));
        assert!(boosted * 10 > later.len() * 4 && boosted * 10 < later.len() * 6, "{boosted} of {}", later.len());
        assert_eq!(stats.boosted_runs, boosted as u64);
        let none = ExploreConfig { boost_percent: 0, ..config };
        let (stats, specs) = explored(&none);
        assert!(specs.iter().all(|s| boost_of(s) == 1) && stats.boosted_runs == 0);
    }

    #[test]
    fn a_later_hit_of_a_spent_sometimes_mark_becomes_a_point_up_to_the_rehits() {
        // Never settled: the share serves the property's points as they come.
        let config =
            ExploreConfig { runs: 2_000, fresh_decay_runs: 0, settle_after_runs: 0, ..ExploreConfig::default() };
        let (stats, _) = explored(&config);
        let sometimes: Vec<_> = stats.points.iter().filter(|p| p.kind == MarkKind::Sometimes).collect();
        assert_eq!(sometimes.len(), 1 + config.sometimes_rehits as usize);
        assert!(sometimes.iter().all(|p| p.children > 0));
        let none = ExploreConfig { sometimes_rehits: 0, ..config };
        let (stats, _) = explored(&none);
        assert_eq!(stats.points.iter().filter(|p| p.kind == MarkKind::Sometimes).count(), 1);
    }

    #[test]
    fn the_fresh_share_starts_as_a_sweep_halves_after_the_decay_runs_and_settles_at_the_floor() {
        let config = ExploreConfig::default();
        assert_eq!(fresh_share(&config, 0), config.generation);
        assert_eq!(fresh_share(&config, config.fresh_decay_runs), config.generation / 2);
        assert_eq!(fresh_share(&config, 1_000_000), config.fresh_per_generation);
        let fixed = ExploreConfig { fresh_decay_runs: 0, fresh_per_generation: 3, ..config };
        assert_eq!(fresh_share(&fixed, 0), 3);
    }

    /// A fake program for bonuses: fresh run `s` reaches a state mark at position 1 and
    /// draws `s % 2` first; a child whose replayed prefix starts with 0 (a rich lineage)
    /// reaches three new marks, one whose prefix starts with 1 (a poor one) reaches one.
    fn rich_and_poor(spec: &RunSpec) -> (RunSummary, ()) {
        let state = |slot: u64, position| Mark { slot: (slot % 500_000) as u32 + 10, position, kind: MarkKind::State };
        let (marks, first) = match &spec.entropy {
            EntropyMode::Branch { prefix, .. } => {
                let new = if prefix.0[0] == 0 { 3 } else { 1 };
                ((0..new).map(|k| state(spec.seed.wrapping_add(k), 6)).collect(), prefix.0[0])
            }
            _ => (vec![state(spec.seed, 1)], (spec.seed % 2) as u32),
        };
        (RunSummary { marks, tape: Tape(vec![first; 8]), failed: false }, ())
    }

    #[test]
    fn a_child_that_reaches_more_new_marks_than_the_mean_child_earns_its_parent_more_children() {
        let config = ExploreConfig { runs: 600, settle_after_runs: 1, ..ExploreConfig::default() };
        // Each point's lineage, from its children's prefixes.
        let mut rich = BTreeMap::new();
        let stats = explore(
            &config,
            1,
            &rich_and_poor,
            &mut |spec, _, _| {
                if let (Some(parent), EntropyMode::Branch { prefix, .. }) = (spec.parent, &spec.entropy) {
                    rich.insert(parent, prefix.0[0] == 0);
                }
            },
            &|| false,
        );
        let served = |lineage: bool| -> Vec<&PointStats> {
            rich.iter().filter(|&(_, &r)| r == lineage).map(|(&i, _)| &stats.points[i]).collect()
        };
        // Every child reaches something new, but a poor lineage's children reach less than
        // the mean child: they earn nothing (but the very first child, which has no mean to
        // fall short of), and no point of theirs grows past its energy.
        let poor = served(false);
        assert!(poor.len() > 10);
        assert!(poor.iter().filter(|p| p.productive > 0).count() <= 1, "{poor:?}");
        assert!(poor.iter().all(|p| p.children <= config.energy_state_settled), "{poor:?}");
        // A rich lineage's children reach more: their points earn more children.
        let rich = served(true);
        assert!(rich.iter().any(|p| p.productive > 0 && p.children > config.energy_state_settled), "{rich:?}");
    }

    #[test]
    fn a_childs_marks_within_its_replayed_prefix_count_as_no_later_hit() {
        // Only the first fresh run reaches the sometimes-mark on its own; every child
        // replays it (position 2, inside its prefix). A replay is the parent's hit, not
        // another way there, so the mark never gets a second point.
        let replaying = |spec: &RunSpec| {
            let reached = spec.parent.is_some() || spec.seed == 0;
            let marks = if reached { vec![Mark { slot: 1, position: 2, kind: MarkKind::Sometimes }] } else { vec![] };
            (RunSummary { marks, tape: Tape(vec![0; 4]), failed: false }, ())
        };
        let config = ExploreConfig { runs: 2_000, settle_after_runs: 1, ..ExploreConfig::default() };
        let stats = explore(&config, 1, &replaying, &mut |_, _, _| {}, &|| false);
        let sometimes: Vec<_> = stats.points.iter().filter(|p| p.kind == MarkKind::Sometimes).collect();
        assert_eq!(sometimes.len(), 1, "{sometimes:?}");
        assert!(sometimes[0].children > 0);
        // Before the schedule settles, a replay counted as a hit, and the children of the
        // spent point became points of it with the same prefix.
        let unsettled = ExploreConfig { settle_after_runs: 0, ..config };
        let stats = explore(&unsettled, 1, &replaying, &mut |_, _, _| {}, &|| false);
        assert!(stats.points.iter().filter(|p| p.kind == MarkKind::Sometimes).count() > 1);
    }

    #[test]
    fn an_exploration_makes_exactly_its_runs_though_they_are_no_whole_number_of_generations() {
        let config = ExploreConfig { runs: 10, generation: 8, ..ExploreConfig::default() };
        let (stats, specs) = explored(&config);
        assert_eq!((stats.runs, specs.len(), stats.generations), (10, 10, 2));
    }

    #[test]
    fn the_stats_count_the_fresh_and_the_switched_runs_made() {
        let config = ExploreConfig { runs: 400, fresh_decay_runs: 0, switch_percent: 50, ..ExploreConfig::default() };
        let (stats, specs) = explored(&config);
        let fresh = specs.iter().filter(|s| s.parent.is_none()).count() as u64;
        let switched = specs.iter().filter(|s| s.parent.is_some() && s.strategy.switch().is_some()).count() as u64;
        assert!(fresh > 0 && switched > 0);
        assert_eq!((stats.fresh_runs, stats.switched_runs), (fresh, switched));
    }

    #[test]
    fn a_later_hit_of_a_sometimes_mark_is_no_point_while_its_first_point_has_energy() {
        // One generation: every run hits the sometimes-mark, and the first run's point has
        // all its energy left.
        let config = ExploreConfig { runs: 8, ..ExploreConfig::default() };
        let (stats, _) = explored(&config);
        assert_eq!(stats.points.iter().filter(|p| p.kind == MarkKind::Sometimes).count(), 1);
    }

    #[test]
    fn a_new_state_point_gets_the_settled_energy_once_settled_and_the_first_energy_before() {
        // No bonus and no sometimes-children: a point has exactly its energy in children.
        let config = ExploreConfig {
            runs: 200,
            fresh_decay_runs: 0,
            energy_sometimes: 0,
            energy_state: 2,
            energy_state_settled: 5,
            bonus: 0,
            bonus_settled: 0,
            settle_after_runs: 1,
            ..ExploreConfig::default()
        };
        let children = |config: &ExploreConfig| -> Vec<u32> {
            let (stats, _) = explored(config);
            stats.points.iter().filter(|p| p.kind == MarkKind::State).map(|p| p.children).collect()
        };
        let settled = children(&config);
        assert!(settled.contains(&5) && settled.iter().all(|&c| c <= 5), "{settled:?}");
        let never = children(&ExploreConfig { settle_after_runs: 0, ..config });
        assert!(never.contains(&2) && never.iter().all(|&c| c <= 2), "{never:?}");
    }

    /// A fake program with one branch point: only fresh run 0 reaches a mark; each child
    /// reaches `new` marks no run reached before, and fails, so that it is no point itself.
    fn one_point(new: u64) -> impl Fn(&RunSpec) -> (RunSummary, ()) + Sync {
        move |spec| {
            let state = |slot: u64, position| Mark { slot: slot as u32, position, kind: MarkKind::State };
            let marks = match spec.parent {
                None if spec.seed == 0 => vec![state(10, 1)],
                None => vec![],
                Some(_) => (0..new).map(|k| state(1_000 + spec.seed.wrapping_add(k) % 500_000, 5)).collect(),
            };
            (RunSummary { marks, tape: Tape(vec![0; 8]), failed: spec.parent.is_some() }, ())
        }
    }

    /// The one point of [`one_point`] explored under `config`.
    fn the_point(config: &ExploreConfig, new: u64) -> PointStats {
        let stats = explore(config, 1, &one_point(new), &mut |_, _, _| {}, &|| false);
        assert_eq!(stats.points.len(), 1, "{:?}", stats.points);
        stats.points[0].clone()
    }

    #[test]
    fn a_point_whose_every_child_reaches_something_new_grows_to_its_whole_budget_and_no_further() {
        let config = ExploreConfig { runs: 200, fresh_decay_runs: 0, ..ExploreConfig::default() };
        let point = the_point(&config, 1);
        assert_eq!(point.children, config.energy_state * config.children_max_factor);
        assert_eq!(point.productive, point.children);
    }

    #[test]
    fn before_settling_a_child_that_reaches_nothing_new_earns_its_parent_nothing() {
        let config = ExploreConfig { runs: 200, fresh_decay_runs: 0, ..ExploreConfig::default() };
        let point = the_point(&config, 0);
        assert_eq!((point.children, point.productive), (config.energy_state, 0));
    }

    #[test]
    fn a_point_whose_last_children_found_nothing_new_gives_up_its_energy() {
        // Seven children a generation; barren after the third, at the end of that generation.
        let config = ExploreConfig {
            runs: 200,
            fresh_decay_runs: 0,
            energy_state: 20,
            barren_after: 3,
            ..ExploreConfig::default()
        };
        let point = the_point(&config, 0);
        assert_eq!(point.children, 7);
    }

    #[test]
    fn a_share_of_one_percent_boosts_and_switches_about_one_child_in_a_hundred() {
        let config = ExploreConfig {
            boost_after_runs: 0,
            boost_percent: 1,
            switch_percent: 1,
            settle_after_runs: 0,
            ..ExploreConfig::default()
        };
        let seeds: Vec<u64> = (0..20_000).map(|k| child_seed(0, 5, k)).collect();
        let boosted = seeds.iter().filter(|&&seed| child_boost(&config, 0, seed) > 1).count();
        let switched =
            seeds.iter().filter(|&&seed| child_strategy(&config, StrategyConfig::Random, 5, seed).switch().is_some());
        // 200 of each expected: a percentage read from too few bits of the seed comes out coarser.
        assert!((140..=260).contains(&boosted), "{boosted} of 20,000 boosted");
        assert!((140..=260).contains(&switched.count()), "switched");
    }

    #[test]
    fn the_sometimes_share_is_reserved_until_the_schedule_settles_and_not_after() {
        let config = ExploreConfig::default();
        let settle = config.settle_after_runs;
        // 25% of 7 children, rounded up.
        assert_eq!(sometimes_quota(&config, 7, 0), 2);
        assert_eq!(sometimes_quota(&config, 7, settle - 1), 2);
        assert_eq!(sometimes_quota(&config, 7, settle), 0);
        let held = ExploreConfig { sometimes_share_after_runs: 9, ..config.clone() };
        assert_eq!(sometimes_quota(&held, 7, 8), 0);
        assert_eq!(sometimes_quota(&held, 7, 9), 2);
        let never = ExploreConfig { settle_after_runs: 0, ..config };
        assert_eq!(sometimes_quota(&never, 7, 1_000_000), 2);
    }
}
