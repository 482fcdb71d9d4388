//! The one entropy source of a run, and its tape.
//!
//! Every nondeterministic decision in the simulated world — which ready task runs, how long
//! a message takes, whether a fault fires, how big the workload is — is a draw
//! [`Entropy::choose`]`(n)` returning a value in `[0, n)`. A run either draws from
//! ChaCha8 seeded by the run's seed ([`Entropy::random`]) or reads a recorded tape
//! ([`Entropy::replay`]). Either way every draw with `n > 1` is recorded, so any run can be
//! turned into a tape and replayed bit for bit, and a shrinker can edit the tape.
//!
//! Conventions the whole project relies on:
//! - **0 is the simplest choice** (no fault, shortest delay, first ready task in FIFO
//!   order, smallest workload), so a tape shrunk toward zeros is a simpler run;
//! - draws past the end of a replayed tape return 0, so a truncated tape still runs;
//! - a replayed value `v >= n` is read as `v % n`, so an edited tape always stays legal;
//! - forced choices (`n == 1`) are not recorded and draw nothing.
//!
//! Subsystems draw from their own [`Stream`]: in random mode each stream is a separate
//! ChaCha8 stream of the same seed, so adding a draw in one subsystem does not reshuffle
//! the values another subsystem sees. The tape interleaves all streams in draw order.

use base64::Engine as _;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// A sub-stream of the entropy source, one per subsystem. Valid streams are
/// `0..Stream::COUNT`; drawing from another panics, rather than silently sharing a
/// generator with a valid one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stream(pub u8);

impl Stream {
    /// Scheduling decisions of the executor's strategy.
    pub const SCHEDULE: Stream = Stream(0);
    /// The default stream for model code that names none.
    pub const MODEL: Stream = Stream(1);
    /// Number of distinct streams a run may use.
    pub const COUNT: usize = 16;
}

/// Upper bound on the length of a recorded tape; a run drawing more is a runaway.
pub const TAPE_LEN_MAX: usize = 1 << 26;

/// Draws a fresh tape has room for before it first grows: a smoke seed draws a few
/// thousand, and growing there one doubling at a time cost a sweep an allocation, a copy
/// and a free ten times a seed (0.3% of its instructions).
const TAPE_RESERVE: usize = 4096;

/// A recorded sequence of draws: the complete nondeterminism of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Tape(pub Vec<u32>);

impl Tape {
    /// Number of recorded draws.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if nothing was drawn.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Compact binary form: postcard (varints, so zeros cost one byte).
    pub fn to_bytes(&self) -> Vec<u8> {
        postcard::to_stdvec(&self.0).expect("a Vec<u32> always serialises")
    }

    /// Reads the binary form written by [`Tape::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Tape, TapeError> {
        Tape::from_bytes_at_most(bytes, TAPE_LEN_MAX)
    }

    /// [`Tape::from_bytes`] with the limit as a parameter, so a test can reach it.
    fn from_bytes_at_most(bytes: &[u8], limit: usize) -> Result<Tape, TapeError> {
        let draws: Vec<u32> =
            postcard::from_bytes(bytes).map_err(|e| TapeError(format!("tape is not valid postcard: {e}")))?;
        if draws.len() > limit {
            return Err(TapeError(format!("tape has {} draws, more than the limit {limit}", draws.len())));
        }
        Ok(Tape(draws))
    }

    /// The binary form as standard base64, for text files.
    pub fn to_base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.to_bytes())
    }

    /// Reads the text form written by [`Tape::to_base64`].
    pub fn from_base64(text: &str) -> Result<Tape, TapeError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map_err(|e| TapeError(format!("tape is not valid base64: {e}")))?;
        Tape::from_bytes(&bytes)
    }
}

/// A tape that could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapeError(pub String);

impl std::fmt::Display for TapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TapeError {}

// One per run, never moved on the hot path: the size of the random variant is the point.
// A tag byte of its own (`repr(u8)`): every draw tests the variant first, and without one
// the test compared sixteen bytes of a niche in the generators.
#[allow(clippy::large_enum_variant)]
#[repr(u8)]
enum Source {
    /// Each stream's generator is created at its first draw.
    Random {
        seed: u64,
        /// Inline, not boxed: every draw reads its generator, and a pointer to chase
        /// first would sit on the path of every scheduling pick.
        streams: [Option<ChaCha8Rng>; Stream::COUNT],
        /// Rare chances are this many times likelier (1: as asked; see [`Entropy::boosted`]).
        boost: u32,
    },
    Replay {
        input: Vec<u32>,
        position: usize,
        /// For a branch: past the end of `input`, draw afresh from ChaCha8 of this seed
        /// (with this boost) instead of answering 0.
        then: Option<(u64, u32)>,
    },
}

/// The entropy source of one run: random or replayed, always recording.
pub struct Entropy {
    source: Source,
    /// Every draw with `n > 1`, as actually used (after `% n` on replay).
    recorded: Vec<u32>,
    /// Whether a boost above 1 can ever be in force (a boosted branch's): every chance of
    /// any other run skips looking for one, a test that sat on the bare executor's hot path.
    may_boost: bool,
}

impl Entropy {
    /// Draws from ChaCha8 seeded with `seed`, one ChaCha stream per [`Stream`].
    pub fn random(seed: u64) -> Entropy {
        Entropy {
            source: Source::Random { seed, streams: std::array::from_fn(|_| None), boost: 1 },
            recorded: Vec::with_capacity(TAPE_RESERVE),
            may_boost: false,
        }
    }

    /// Reads draws from `tape`; past its end every draw is 0.
    pub fn replay(tape: Tape) -> Entropy {
        let recorded = Vec::with_capacity(tape.0.len().clamp(TAPE_RESERVE, TAPE_LEN_MAX));
        Entropy { source: Source::Replay { input: tape.0, position: 0, then: None }, recorded, may_boost: false }
    }

    /// Reads draws from `prefix`, then draws afresh from ChaCha8 seeded with `seed`: a
    /// branch of the run that recorded `prefix`, which rebuilds that run's world up to the
    /// prefix's end and continues it with new entropy. The recorded tape is the prefix
    /// followed by the new draws, an ordinary tape that replays the branch alone.
    pub fn branch(prefix: Tape, seed: u64) -> Entropy {
        Entropy::boosted(prefix, seed, 1)
    }

    /// As [`Entropy::branch`], but past the prefix every *rare* chance
    /// ([`Entropy::chance_in`] below one half) comes true `boost` times as often, up to one
    /// half: a fault per tick of 1/20 becomes 1/5 under a boost of 4. What is recorded is
    /// still a value the unboosted draw maps to the same answer, so the tape replays the
    /// run exactly with no word of the boost — a boosted run is an ordinary run of the
    /// scenario, only a likelier one to hold several rare events. A `boost` of 1 is
    /// [`Entropy::branch`].
    pub fn boosted(prefix: Tape, seed: u64, boost: u32) -> Entropy {
        Entropy {
            recorded: Vec::with_capacity(prefix.0.len().clamp(TAPE_RESERVE, TAPE_LEN_MAX)),
            source: Source::Replay { input: prefix.0, position: 0, then: Some((seed, boost.max(1))) },
            may_boost: boost > 1,
        }
    }

    /// A value in `[0, n)` from the default model stream. `n` must be at least 1.
    #[inline]
    pub fn choose(&mut self, n: u32) -> u32 {
        self.choose_in(Stream::MODEL, n)
    }

    /// A value in `[0, n)` from `stream`. `n == 1` is forced: it returns 0 and records nothing.
    ///
    /// Every scheduling pick and most model steps draw, so a random run's draw is inlined
    /// into its callers (`inline` alone left it a call, 164,350 of them in a 100-seed smoke
    /// sweep); a replayed draw and opening a stream are out of line.
    #[inline(always)]
    pub fn choose_in(&mut self, stream: Stream, n: u32) -> u32 {
        assert!(n >= 1, "choose(0) has no valid answer");
        if n == 1 {
            return 0;
        }
        let Source::Random { seed, streams, .. } = &mut self.source else {
            return self.choose_replayed(stream, n);
        };
        assert!(usize::from(stream.0) < Stream::COUNT, "no entropy stream {}", stream.0);
        let slot = &mut streams[usize::from(stream.0)];
        let rng = match slot {
            Some(rng) => rng,
            None => open_stream(slot, *seed, stream),
        };
        // Multiply-shift: uniform enough for testing and branch-free.
        let value = ((u64::from(rng.next_u32()) * u64::from(n)) >> 32) as u32;
        self.record(value)
    }

    /// A draw in `[0, n)`, `n > 1`, read from the tape being replayed.
    #[inline(never)]
    fn choose_replayed(&mut self, stream: Stream, n: u32) -> u32 {
        let Source::Replay { input, position, then } = &mut self.source else { unreachable!("a replayed draw") };
        let value = match input.get(*position) {
            Some(&raw) => {
                *position += 1;
                raw % n
            }
            None => match *then {
                None => {
                    *position += 1;
                    0
                }
                Some((seed, boost)) => return self.spend_prefix_then_choose(seed, boost, stream, n),
            },
        };
        self.record(value)
    }

    /// Appends a draw to the tape and returns it.
    #[inline(always)]
    fn record(&mut self, value: u32) -> u32 {
        assert!(self.recorded.len() < TAPE_LEN_MAX, "entropy tape exceeded {TAPE_LEN_MAX} draws");
        self.recorded.push(value);
        value
    }

    /// A branch's prefix is spent: from here on it is a random run of `seed`, and this is its
    /// first draw. Out of line, so that `choose_in` stays small and not recursive.
    #[cold]
    #[inline(never)]
    fn spend_prefix_then_choose(&mut self, seed: u64, boost: u32, stream: Stream, n: u32) -> u32 {
        self.source = Source::Random { seed, streams: std::array::from_fn(|_| None), boost };
        self.choose_in(stream, n)
    }

    /// True with probability `numerator / denominator`; `false` is the simpler answer (draw 0).
    #[inline]
    pub fn chance_in(&mut self, stream: Stream, numerator: u32, denominator: u32) -> bool {
        // Only a chance strictly between 0 and one half is boosted; the exact draw checks
        // the odds and answers the rest.
        if self.may_boost && numerator > 0 && u64::from(numerator) * 2 < u64::from(denominator) && self.boost() > 1 {
            return self.boosted_chance(stream, numerator, denominator);
        }
        self.chance_in_exact(stream, numerator, denominator)
    }

    /// As [`Entropy::chance_in`], but never boosted: for a rare chance whose rarity the
    /// model relies on (a store outage per tick, whose windows would chain past the client's
    /// retry horizon if they came several times as often).
    ///
    /// Inlined like the draw it makes: with the draw inside it, `inline` alone left it a
    /// call (78,724 in a 100-seed smoke sweep).
    #[inline(always)]
    pub fn chance_in_exact(&mut self, stream: Stream, numerator: u32, denominator: u32) -> bool {
        assert!(numerator <= denominator && denominator > 0, "chance {numerator}/{denominator} is not a probability");
        if numerator == 0 {
            return false;
        }
        if numerator == denominator {
            return true;
        }
        // Values [0, denominator - numerator) mean "no"; 0 is the simplest answer.
        self.choose_in(stream, denominator) >= denominator - numerator
    }

    /// The boost of rare chances now in force: 1 for plain runs and while a prefix replays.
    #[inline]
    fn boost(&self) -> u32 {
        match &self.source {
            Source::Random { boost, .. } => *boost,
            Source::Replay { input, position, then: Some((_, boost)) } if *position >= input.len() => *boost,
            Source::Replay { .. } => 1,
        }
    }

    /// A rare chance under a boost: decided with odds `min(boost · numerator, denominator / 2)`
    /// in `denominator` (never below the odds asked), then recorded as a value drawn
    /// uniformly from the side of the answer — one that [`Entropy::chance_in`] maps to
    /// the same answer on replay. The decision's own draw is not recorded.
    #[cold]
    #[inline(never)]
    fn boosted_chance(&mut self, stream: Stream, numerator: u32, denominator: u32) -> bool {
        if let Source::Replay { then: Some((seed, boost)), .. } = self.source {
            self.source = Source::Random { seed, streams: std::array::from_fn(|_| None), boost };
        }
        let Source::Random { seed, streams, boost } = &mut self.source else { unreachable!("boosts are random") };
        assert!(usize::from(stream.0) < Stream::COUNT, "no entropy stream {}", stream.0);
        let slot = &mut streams[usize::from(stream.0)];
        let rng = match slot {
            Some(rng) => rng,
            None => open_stream(slot, *seed, stream),
        };
        let below = |rng: &mut ChaCha8Rng, n: u32| ((u64::from(rng.next_u32()) * u64::from(n)) >> 32) as u32;
        let odds = u64::from(numerator).saturating_mul(u64::from(*boost)).min(u64::from(denominator / 2));
        let yes = u64::from(below(rng, denominator)) < odds.max(u64::from(numerator));
        let no_values = denominator - numerator;
        let value = if yes { no_values + below(rng, numerator) } else { below(rng, no_values) };
        assert!(self.recorded.len() < TAPE_LEN_MAX, "entropy tape exceeded {TAPE_LEN_MAX} draws");
        self.recorded.push(value);
        yes
    }

    /// Number of draws recorded so far.
    pub fn draws(&self) -> usize {
        self.recorded.len()
    }

    /// The tape of this run so far: replaying it reproduces the run exactly.
    pub fn tape(&self) -> Tape {
        Tape(self.recorded.clone())
    }

    /// The tape of this run so far, moved out: recording starts again from empty. For the
    /// end of a run, where copying a long tape would be waste.
    pub fn take_tape(&mut self) -> Tape {
        Tape(std::mem::take(&mut self.recorded))
    }

    /// For a replay: how many tape entries were read, and whether reading went past the end.
    pub fn replay_position(&self) -> Option<(usize, usize)> {
        match &self.source {
            Source::Replay { input, position, .. } => Some((*position, input.len())),
            Source::Random { .. } => None,
        }
    }
}

/// Creates `stream`'s generator at its first draw: ChaCha8 of the run's seed, on the
/// ChaCha stream numbered like ours.
#[cold]
#[inline(never)]
fn open_stream(slot: &mut Option<ChaCha8Rng>, seed: u64, stream: Stream) -> &mut ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(u64::from(stream.0));
    slot.insert(rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tape_at_the_limit_reads_back_and_one_past_it_is_refused() {
        let at = Tape(vec![1, 2, 3]);
        assert_eq!(Tape::from_bytes_at_most(&at.to_bytes(), 3), Ok(at.clone()));
        let past = Tape(vec![1, 2, 3, 4]);
        let refused = Tape::from_bytes_at_most(&past.to_bytes(), 3).unwrap_err();
        assert!(refused.0.contains("4 draws, more than the limit 3"), "{refused:?}");
        assert!(Tape::default().is_empty() && !at.is_empty());
    }

    fn draw_many(e: &mut Entropy) -> Vec<u32> {
        (0..200).map(|i| e.choose_in(Stream((i % 3) as u8), 7 + i)).collect()
    }

    #[test]
    fn same_seed_same_draws() {
        assert_eq!(draw_many(&mut Entropy::random(42)), draw_many(&mut Entropy::random(42)));
        assert_ne!(draw_many(&mut Entropy::random(42)), draw_many(&mut Entropy::random(43)));
    }

    #[test]
    fn replaying_the_tape_gives_the_same_draws() {
        let mut e = Entropy::random(9);
        let first = draw_many(&mut e);
        let mut r = Entropy::replay(e.tape());
        assert_eq!(draw_many(&mut r), first);
        assert_eq!(r.tape(), e.tape());
    }

    #[test]
    fn past_the_end_of_a_tape_draws_are_zero() {
        let mut r = Entropy::replay(Tape(vec![3]));
        assert_eq!(r.choose(10), 3);
        assert_eq!(r.choose(10), 0);
        assert_eq!(r.choose(10), 0);
    }

    #[test]
    fn forced_choices_are_not_recorded() {
        let mut e = Entropy::random(1);
        assert_eq!(e.choose(1), 0);
        assert_eq!(e.draws(), 0);
        e.choose(2);
        assert_eq!(e.draws(), 1);
    }

    #[test]
    fn a_new_draw_in_one_stream_does_not_reshuffle_another() {
        let mut a = Entropy::random(5);
        let mut b = Entropy::random(5);
        b.choose_in(Stream(7), 100);
        let xs: Vec<u32> = (0..20).map(|_| a.choose_in(Stream::MODEL, 1000)).collect();
        let ys: Vec<u32> = (0..20).map(|_| b.choose_in(Stream::MODEL, 1000)).collect();
        assert_eq!(xs, ys);
    }

    #[test]
    fn a_branch_replays_its_prefix_then_draws_from_its_own_seed() {
        let mut parent = Entropy::random(3);
        let drawn = draw_many(&mut parent);
        let prefix = Tape(parent.tape().0[..50].to_vec());
        let mut child = Entropy::branch(prefix.clone(), 77);
        let branched = draw_many(&mut child);
        assert_eq!(branched[..50], drawn[..50]);
        assert_ne!(branched[50..], drawn[50..]);
        // The same branch twice is the same run, and its tape replays it alone.
        assert_eq!(draw_many(&mut Entropy::branch(prefix, 77)), branched);
        assert_eq!(draw_many(&mut Entropy::replay(child.tape())), branched);
    }

    /// How many of `n` chances of `numerator / denominator` came true.
    fn hits(e: &mut Entropy, n: u32, numerator: u32, denominator: u32) -> u32 {
        (0..n).filter(|_| e.chance_in(Stream(4), numerator, denominator)).count() as u32
    }

    #[test]
    fn a_boosted_branch_makes_rare_chances_likelier_past_its_prefix_only_and_its_tape_replays_it() {
        let mut parent = Entropy::random(11);
        let drawn = draw_many(&mut parent);
        let prefix = Tape(parent.tape().0[..50].to_vec());
        let mut boosted = Entropy::boosted(prefix.clone(), 5, 8);
        // The prefix replays as it was: no boost while it does.
        assert_eq!(draw_many(&mut boosted)[..50], drawn[..50]);
        // 1/40 under a boost of 8 is 1/5: about 2,000 of 10,000, against about 250 plain.
        let rare = hits(&mut boosted, 10_000, 1, 40);
        assert!((1_800..2_200).contains(&rare), "{rare}");
        let plain = hits(&mut Entropy::branch(prefix.clone(), 5), 10_000, 1, 40);
        assert!((180..330).contains(&plain), "{plain}");
        // Capped at one half; a chance of one half or more is left as asked.
        let capped = hits(&mut boosted, 10_000, 1, 8);
        assert!((4_800..5_200).contains(&capped), "{capped}");
        let even = hits(&mut boosted, 10_000, 3, 4);
        assert!((7_300..7_700).contains(&even), "{even}");
        // Never boosted on request.
        let exact = (0..10_000).filter(|_| boosted.chance_in_exact(Stream(4), 1, 40)).count();
        assert!((180..330).contains(&exact), "{exact}");
        // The tape replays the whole boosted run, answer for answer, with no word of the boost.
        let mut again = Entropy::boosted(prefix.clone(), 5, 8);
        let mut replayed = Entropy::replay(boosted.tape());
        for e in [&mut again, &mut replayed] {
            assert_eq!(draw_many(e)[..50], drawn[..50]);
            assert_eq!(hits(e, 10_000, 1, 40), rare);
            assert_eq!(hits(e, 10_000, 1, 8), capped);
            assert_eq!(hits(e, 10_000, 3, 4), even);
            assert_eq!((0..10_000).filter(|_| e.chance_in_exact(Stream(4), 1, 40)).count(), exact);
        }
        assert_eq!(replayed.tape(), boosted.tape());
        // A boost of 1 is a plain branch.
        let (mut one, mut branch) = (Entropy::boosted(prefix.clone(), 5, 1), Entropy::branch(prefix, 5));
        assert_eq!(hits(&mut one, 1_000, 1, 40), hits(&mut branch, 1_000, 1, 40));
        assert_eq!(one.tape(), branch.tape());
    }

    /// The prefix of a boosted branch replays its parent's answers, chances included: a
    /// boost before the prefix is spent would drop the rest of it.
    #[test]
    fn a_boosted_branch_replays_the_chances_of_its_prefix_unboosted() {
        let ask = |e: &mut Entropy| -> Vec<u32> {
            (0..40)
                .map(|i| if i % 2 == 0 { u32::from(e.chance_in(Stream(4), 1, 10)) } else { e.choose(1_000) })
                .collect()
        };
        let mut parent = Entropy::random(8);
        let asked = ask(&mut parent);
        let prefix = Tape(parent.tape().0[..40].to_vec());
        for seed in 0..10 {
            let mut child = Entropy::boosted(prefix.clone(), seed, 8);
            assert_eq!(ask(&mut child), asked, "seed {seed}");
            assert_eq!(child.tape(), prefix, "seed {seed}");
        }
    }

    #[test]
    fn a_boost_takes_effect_at_the_first_chance_past_the_prefix() {
        // A branch whose first draw past the prefix is a chance: boosted from that very draw.
        let prefix = Tape(vec![1, 2, 3]);
        let runs = 2_000;
        let first = (0..runs)
            .filter(|&seed| {
                let mut e = Entropy::boosted(prefix.clone(), seed, 8);
                (0..3).for_each(|_| {
                    e.choose(10);
                });
                e.chance_in(Stream(4), 1, 40)
            })
            .count();
        assert!((300..500).contains(&first), "{first} of {runs}");
    }

    #[test]
    fn out_of_range_replayed_values_wrap() {
        let mut r = Entropy::replay(Tape(vec![17]));
        assert_eq!(r.choose(5), 2);
        assert_eq!(r.tape(), Tape(vec![2]));
    }

    #[test]
    fn tape_text_round_trip_and_bad_input() {
        let t = Tape(vec![0, 1, 300, u32::MAX]);
        assert_eq!(Tape::from_base64(&t.to_base64()).unwrap(), t);
        let refused = Tape::from_base64("!!!").unwrap_err();
        assert!(refused.to_string().starts_with("tape is not valid base64: "), "{refused}");
        let mut bytes = t.to_bytes();
        bytes.truncate(3);
        assert!(Tape::from_bytes(&bytes).is_err());
    }
}
