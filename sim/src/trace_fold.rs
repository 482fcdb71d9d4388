//! Folds an event kind into the fingerprint straight from its fields, producing postcard's
//! bytes (varints, zigzag, length prefixes, variant indexes) and handing them to
//! [`Fingerprint`] eight at a time as they come, instead of encoding the event into a buffer
//! with postcard's serializer and folding the buffer afterwards. Two ways in: a `serde`
//! serializer ([`fold_postcard`], for any `Serialize` kind), and [`FoldPostcard`], a fold
//! written by hand for a kind on the hot path, which pushes the same bytes without serde's
//! calls and error checks per field.
//!
//! Why: every event of every run is fingerprinted, and encoding it byte by byte into a
//! buffer (a bound check and a store per byte, then a second pass to read it back) was
//! about 7% of a smoke sweep; through serde, the fold was still about 5% (a call per id and
//! per option, an error test per field, one large function per kind). The bytes folded are
//! postcard's exactly — the fingerprint of every recorded run must not change — so this
//! file's tests compare both ways with postcard's own encoding on values of every shape
//! serde has and on every primitive [`FoldPostcard`] covers, and a kind that folds itself by
//! hand must compare its own fold with postcard's on every variant.

use std::fmt::{self, Display, Write as _};

use serde::ser::{self, Serialize};

use crate::trace::Fingerprint;

/// Folds `value`'s postcard encoding into `fingerprint`: whole words as they fill, then the
/// tail (its bytes little-endian, their count in the top byte), as [`Fingerprint::write`]
/// does with the encoded buffer.
pub(crate) fn fold_postcard<T: Serialize + ?Sized>(fingerprint: &mut Fingerprint, value: &T) {
    fold_words(fingerprint, |folder| folder.serde(value));
}

/// Folds the bytes that `push` pushes into `fingerprint`, as [`fold_postcard`] folds a
/// value's: whole words as they fill, then the tail.
#[inline(always)]
pub(crate) fn fold_words(fingerprint: &mut Fingerprint, push: impl FnOnce(&mut WordFolder)) {
    let mut folder = WordFolder { fingerprint: *fingerprint, word: 0, filled: 0 };
    push(&mut folder);
    *fingerprint = folder.finish();
}

/// A value whose postcard encoding is written by hand: `fold_postcard` pushes exactly the
/// bytes `postcard::to_allocvec` would write for it, field by field in declaration order,
/// with the primitives' own impls below (a varint per `u16`/`u32`/`u64`, a byte per `bool`,
/// a tag byte before an option's value, a varint length before a sequence's elements, a
/// varint variant index before an enum variant's fields). An impl must be tested against
/// postcard; the fingerprint of every recorded run depends on it.
pub trait FoldPostcard {
    /// Pushes the value's postcard bytes.
    fn fold_postcard(&self, out: &mut WordFolder);
}

/// The bytes not yet folded: up to seven, packed little-endian in `word`. Handed to an
/// [`EventKind::fold_fingerprint`](crate::EventKind::fold_fingerprint), which pushes the
/// kind's postcard bytes into it.
pub struct WordFolder {
    /// The fingerprint so far, held here (not behind a reference) so that it can stay in a
    /// register while a kind pushes its fields.
    fingerprint: Fingerprint,
    /// Invariant: only the low `8 * filled` bits may be set.
    word: u64,
    /// Invariant: below 8.
    filled: u32,
}

impl WordFolder {
    /// Appends `len` bytes (1 to 8) packed little-endian in `bytes` (higher bytes zero).
    #[inline(always)]
    fn push_packed(&mut self, bytes: u64, len: u32) {
        debug_assert!((1..=8).contains(&len) && (len == 8 || bytes >> (8 * len) == 0));
        let shift = 8 * self.filled;
        self.word |= bytes << shift;
        let total = self.filled + len;
        if total >= 8 {
            self.fingerprint.fold(self.word);
            // The bytes that did not fit in the folded word (none if `shift` is 0).
            self.word = if total > 8 { bytes >> (64 - shift) } else { 0 };
            self.filled = total - 8;
        } else {
            self.filled = total;
        }
    }

    fn push_slice(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.push_packed(u64::from_le_bytes(chunk.try_into().expect("chunks of eight")), 8);
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let packed = tail.iter().rev().fold(0u64, |word, &b| (word << 8) | u64::from(b));
            self.push_packed(packed, tail.len() as u32);
        }
    }

    /// Postcard's varint (LEB128) of `v`. All of it inline: out of line, the folder's state
    /// went through memory at every call, and a kind's fold is inlined into the judge
    /// whole, so that the word being filled and the fingerprint stay in registers.
    #[inline(always)]
    fn push_varint(&mut self, v: u64) {
        if v < 0x80 {
            self.push_packed(v, 1);
        } else if v < 0x4000 {
            self.push_two_byte_varint(v);
        } else {
            self.push_long_varint(v);
        }
    }

    /// A varint of two bytes. Requires `0x80 <= v < 0x4000`.
    #[inline(always)]
    fn push_two_byte_varint(&mut self, v: u64) {
        debug_assert!((0x80..0x4000).contains(&v));
        self.push_packed((v & 0x7f) | 0x80 | ((v >> 7) << 8), 2);
    }

    /// A varint of three bytes or more (execution ids, durations): its seven-bit groups spread
    /// a byte apart and the continuation bits set in one go, where a loop per group cost a
    /// branch per byte. Values of 57 bits or more (nine or ten bytes) take eight bytes here
    /// and the rest (below 2^8) as a varint of one or two bytes.
    #[inline(always)]
    fn push_long_varint(&mut self, v: u64) {
        const CONTINUATION: u64 = 0x8080_8080_8080_8080;
        let groups = spread_seven_bit_groups(v);
        if v >> 56 == 0 {
            // Seven bits a byte, rounded up: (significant bits + 6) / 7, and at least 3 here.
            let len = (70 - v.leading_zeros()) / 7;
            let continued = CONTINUATION & ((1u64 << (8 * (len - 1))) - 1);
            self.push_packed(groups | continued, len);
        } else {
            self.push_packed(groups | CONTINUATION, 8);
            let high = v >> 56;
            if high < 0x80 {
                self.push_packed(high, 1);
            } else {
                self.push_two_byte_varint(high);
            }
        }
    }

    /// Postcard's varint of a 128-bit value, a byte at a time (no event has one on its
    /// hot path).
    fn push_varint_u128(&mut self, mut v: u128) {
        loop {
            let low = (v & 0x7f) as u64;
            v >>= 7;
            if v == 0 {
                return self.push_packed(low, 1);
            }
            self.push_packed(low | 0x80, 1);
        }
    }

    /// A `u8` (or a `bool`, or a field-less enum's variant index below 128): one byte.
    #[inline(always)]
    pub fn byte(&mut self, v: u8) {
        self.push_packed(u64::from(v), 1);
    }

    /// A `u16`, `u32`, `u64` or `usize`, or an enum's variant index: postcard's varint.
    #[inline(always)]
    pub fn varint(&mut self, v: u64) {
        self.push_varint(v);
    }

    /// An `i16`, `i32` or `i64`: zigzag, then varint (the same bytes at every width).
    #[inline(always)]
    pub fn zigzag(&mut self, v: i64) {
        self.push_varint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// Any `Serialize` value, through the serde serializer (for fields off the hot path).
    pub fn serde<T: Serialize + ?Sized>(&mut self, value: &T) {
        value.serialize(&mut *self).expect("event kinds always serialise");
    }

    /// The fingerprint with the tail folded in.
    #[inline(always)]
    fn finish(mut self) -> Fingerprint {
        if self.filled > 0 {
            self.fingerprint.fold(self.word | (u64::from(self.filled) << 56));
        }
        self.fingerprint
    }
}

/// The low 56 bits of `v` as eight seven-bit groups, group `k` in the low bits of byte `k`
/// (LEB128's layout without its continuation bits): halves, then quarters, then eighths
/// move apart, three mask-and-shift steps instead of one per group.
#[inline(always)]
fn spread_seven_bit_groups(v: u64) -> u64 {
    let x = v & 0x00FF_FFFF_FFFF_FFFF;
    let x = (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x00FF_FFFF_F000_0000) << 4);
    let x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x0FFF_C000_0FFF_C000) << 2);
    (x & 0x007F_007F_007F_007F) | ((x & 0x3F80_3F80_3F80_3F80) << 1)
}

/// Unsigned integers: postcard's varint.
macro_rules! fold_as_varint {
    ($($t:ty),+) => {$(
        impl FoldPostcard for $t {
            #[inline(always)]
            fn fold_postcard(&self, out: &mut WordFolder) {
                out.varint(*self as u64);
            }
        }
    )+};
}
fold_as_varint!(u16, u32, u64, usize);

/// Signed integers wider than a byte: zigzag varint.
macro_rules! fold_as_zigzag {
    ($($t:ty),+) => {$(
        impl FoldPostcard for $t {
            #[inline(always)]
            fn fold_postcard(&self, out: &mut WordFolder) {
                out.zigzag(i64::from(*self));
            }
        }
    )+};
}
fold_as_zigzag!(i16, i32, i64);

impl FoldPostcard for u8 {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        out.byte(*self);
    }
}

impl FoldPostcard for bool {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        out.byte(u8::from(*self));
    }
}

/// A tag byte (0 for none, 1 for some), then the value.
impl<T: FoldPostcard> FoldPostcard for Option<T> {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        match self {
            None => out.byte(0),
            Some(v) => {
                out.byte(1);
                v.fold_postcard(out);
            }
        }
    }
}

/// The length as a varint, then the elements.
impl<T: FoldPostcard> FoldPostcard for [T] {
    fn fold_postcard(&self, out: &mut WordFolder) {
        out.varint(self.len() as u64);
        for v in self {
            v.fold_postcard(out);
        }
    }
}

impl<T: FoldPostcard> FoldPostcard for Vec<T> {
    #[inline]
    fn fold_postcard(&self, out: &mut WordFolder) {
        self.as_slice().fold_postcard(out);
    }
}

impl FoldPostcard for crate::CellId {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        self.0.fold_postcard(out);
    }
}

impl FoldPostcard for crate::SnapshotUse {
    #[inline]
    fn fold_postcard(&self, out: &mut WordFolder) {
        let crate::SnapshotUse { cell, read_version, current_version, settled } = self;
        cell.fold_postcard(out);
        read_version.fold_postcard(out);
        current_version.fold_postcard(out);
        settled.fold_postcard(out);
    }
}

/// A value postcard could not encode either (a sequence of unknown length, a custom
/// error of a `Serialize` impl). A byte, not a message: every field's `?` tests it, and a
/// small error keeps those tests in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldError {
    /// A sequence or map that did not say its length (postcard cannot encode it).
    UnknownLength,
    /// A `Serialize` impl reported an error, or a `Display` impl failed.
    Refused,
}

impl Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FoldError::UnknownLength => "a sequence or map of unknown length (postcard cannot encode it)",
            FoldError::Refused => "a Serialize or Display impl refused the value",
        })
    }
}

impl std::error::Error for FoldError {}

impl ser::Error for FoldError {
    fn custom<T: Display>(_msg: T) -> Self {
        FoldError::Refused
    }
}

type Result<T = ()> = std::result::Result<T, FoldError>;

impl ser::Serializer for &mut WordFolder {
    type Ok = ();
    type Error = FoldError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn is_human_readable(&self) -> bool {
        false
    }
    #[inline(always)]
    fn serialize_bool(self, v: bool) -> Result {
        self.push_packed(u64::from(v), 1);
        Ok(())
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result {
        self.push_packed(u64::from(v as u8), 1);
        Ok(())
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result {
        self.push_varint(u64::from(((v << 1) ^ (v >> 15)) as u16));
        Ok(())
    }
    #[inline(always)]
    fn serialize_i32(self, v: i32) -> Result {
        self.push_varint(u64::from(((v << 1) ^ (v >> 31)) as u32));
        Ok(())
    }
    #[inline(always)]
    fn serialize_i64(self, v: i64) -> Result {
        self.push_varint(((v << 1) ^ (v >> 63)) as u64);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result {
        self.push_varint_u128(((v << 1) ^ (v >> 127)) as u128);
        Ok(())
    }
    #[inline(always)]
    fn serialize_u8(self, v: u8) -> Result {
        self.push_packed(u64::from(v), 1);
        Ok(())
    }
    #[inline(always)]
    fn serialize_u16(self, v: u16) -> Result {
        self.push_varint(u64::from(v));
        Ok(())
    }
    #[inline(always)]
    fn serialize_u32(self, v: u32) -> Result {
        self.push_varint(u64::from(v));
        Ok(())
    }
    #[inline(always)]
    fn serialize_u64(self, v: u64) -> Result {
        self.push_varint(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result {
        self.push_varint_u128(v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.push_packed(u64::from(v.to_bits()), 4);
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result {
        self.push_packed(v.to_bits(), 8);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }
    #[inline(always)]
    fn serialize_str(self, v: &str) -> Result {
        self.serialize_bytes(v.as_bytes())
    }
    #[inline(always)]
    fn serialize_bytes(self, v: &[u8]) -> Result {
        self.push_varint(v.len() as u64);
        self.push_slice(v);
        Ok(())
    }
    #[inline(always)]
    fn serialize_none(self) -> Result {
        self.push_packed(0, 1);
        Ok(())
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        self.push_packed(1, 1);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result {
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        Ok(())
    }
    #[inline(always)]
    fn serialize_unit_variant(self, _name: &'static str, variant_index: u32, _variant: &'static str) -> Result {
        self.push_varint(u64::from(variant_index));
        Ok(())
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result {
        value.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result {
        self.push_varint(u64::from(variant_index));
        value.serialize(self)
    }
    #[inline(always)]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self> {
        self.push_varint(len.ok_or(FoldError::UnknownLength)? as u64);
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple(self, _len: usize) -> Result<Self> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        self.push_varint(u64::from(variant_index));
        Ok(self)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self> {
        self.push_varint(len.ok_or(FoldError::UnknownLength)? as u64);
        Ok(self)
    }
    #[inline(always)]
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        Ok(self)
    }
    #[inline(always)]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        self.push_varint(u64::from(variant_index));
        Ok(self)
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result {
        // Postcard writes the length, then the text: one pass to count, one to fold.
        struct Count(usize);
        impl fmt::Write for Count {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 += s.len();
                Ok(())
            }
        }
        struct Fold<'x>(&'x mut WordFolder);
        impl fmt::Write for Fold<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0.push_slice(s.as_bytes());
                Ok(())
            }
        }
        let mut count = Count(0);
        write!(count, "{value}").map_err(|_| FoldError::Refused)?;
        self.push_varint(count.0 as u64);
        write!(Fold(self), "{value}").map_err(|_| FoldError::Refused)
    }
}

/// Compound values: postcard writes their parts one after another, with no separators.
macro_rules! parts_in_order {
    ($trait:ident, $method:ident $(, $key:ident)?) => {
        impl ser::$trait for &mut WordFolder {
            type Ok = ();
            type Error = FoldError;
            #[inline(always)]
            fn $method<T: Serialize + ?Sized>(&mut self, $($key: &'static str,)? value: &T) -> Result {
                $(let _ = $key;)?
                value.serialize(&mut **self)
            }
            #[inline(always)]
            fn end(self) -> Result {
                Ok(())
            }
        }
    };
}

parts_in_order!(SerializeSeq, serialize_element);
parts_in_order!(SerializeTuple, serialize_element);
parts_in_order!(SerializeTupleStruct, serialize_field);
parts_in_order!(SerializeTupleVariant, serialize_field);
parts_in_order!(SerializeStruct, serialize_field, key);
parts_in_order!(SerializeStructVariant, serialize_field, key);

impl ser::SerializeMap for &mut WordFolder {
    type Ok = ();
    type Error = FoldError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::*;

    /// The fingerprint of postcard's encoding of `value`, folded as a buffer.
    fn via_postcard<T: Serialize + ?Sized>(value: &T) -> u64 {
        let mut f = Fingerprint::default();
        f.write(&postcard::to_allocvec(value).expect("postcard encodes it"));
        f.value()
    }

    fn folded<T: Serialize + ?Sized>(value: &T) -> u64 {
        let mut f = Fingerprint::default();
        fold_postcard(&mut f, value);
        f.value()
    }

    fn same<T: Serialize + std::fmt::Debug + ?Sized>(value: &T) {
        assert_eq!(folded(value), via_postcard(value), "{value:?}");
    }

    #[derive(Serialize, Debug)]
    struct Unit;

    #[derive(Serialize, Debug)]
    struct Id(u64);

    #[derive(Serialize, Debug)]
    enum Shape {
        Plain,
        Wrapped(u32),
        Pair(i64, Option<String>),
        Fields { a: u8, b: Vec<u16>, c: bool, d: (i32, char) },
        Nested(Box<Shape>),
    }

    #[derive(Serialize, Debug)]
    struct Record {
        id: Id,
        unit: Unit,
        shapes: Vec<Shape>,
        map: BTreeMap<u32, i16>,
        floats: (f32, f64),
        wide: (u128, i128),
        bytes: Vec<u8>,
        text: String,
        none: Option<u64>,
    }

    /// The fingerprint of `value` folded by its hand-written [`FoldPostcard`] impl.
    fn by_hand<T: FoldPostcard + ?Sized>(value: &T) -> u64 {
        let mut f = Fingerprint::default();
        fold_words(&mut f, |out| value.fold_postcard(out));
        f.value()
    }

    fn same_by_hand<T: FoldPostcard + Serialize + std::fmt::Debug + ?Sized>(value: &T) {
        assert_eq!(by_hand(value), via_postcard(value), "{value:?}");
    }

    /// Values at every varint length's edges: 0, 1, the top two, and 2^b - 1, 2^b, 2^b + 1.
    fn varint_edges() -> Vec<u64> {
        let mut edges = vec![0u64, 1, u64::MAX, u64::MAX - 1];
        for bits in 1..64 {
            edges.extend([(1u64 << bits) - 1, 1u64 << bits, (1u64 << bits) + 1]);
        }
        edges
    }

    #[test]
    fn the_hand_written_folds_of_primitives_push_postcards_bytes() {
        let edges = varint_edges();
        for &v in &edges {
            same_by_hand(&v);
            same_by_hand(&(v as u32));
            same_by_hand(&(v as u16));
            same_by_hand(&(v as u8));
            same_by_hand(&(v as usize));
            same_by_hand(&(v as i64));
            same_by_hand(&(v as i64).wrapping_neg());
            same_by_hand(&(v as i32));
            same_by_hand(&(v as i32).wrapping_neg());
            same_by_hand(&(v as i16));
            same_by_hand(&(v as i16).wrapping_neg());
            same_by_hand(&Some(v));
            same_by_hand(&Some(Some(v as u32)));
            same_by_hand(&crate::CellId(v));
            let used = crate::SnapshotUse {
                cell: crate::CellId(v),
                read_version: v / 3,
                current_version: v.rotate_left(17),
                settled: v % 2 == 0,
            };
            same_by_hand(&used);
        }
        same_by_hand(&true);
        same_by_hand(&false);
        same_by_hand(&None::<u64>);
        same_by_hand(&Vec::<u16>::new());
        same_by_hand(&edges);
        same_by_hand(&edges.iter().map(|&v| Some(v as u16)).collect::<Vec<_>>()[..]);
        // A run of pushes that splits words at every offset.
        for lead in 0..9usize {
            same_by_hand(&(0..lead).map(|i| i as u8).chain([200, 7]).collect::<Vec<u8>>());
        }
    }

    #[test]
    fn a_type_that_asks_whether_the_format_is_human_readable_folds_in_postcards_compact_form() {
        // Addresses serialise as text for a human-readable format and as bytes for postcard:
        // a field of such a type must fold as postcard encodes it.
        let v4 = std::net::Ipv4Addr::new(10, 0, 0, 7);
        same(&v4);
        same(&std::net::SocketAddr::from((v4, 5432)));
        same(&std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST));
    }

    #[test]
    fn a_fold_error_says_what_postcard_could_not_encode() {
        assert_eq!(
            FoldError::UnknownLength.to_string(),
            "a sequence or map of unknown length (postcard cannot encode it)"
        );
        assert_eq!(FoldError::Refused.to_string(), "a Serialize or Display impl refused the value");
    }

    #[test]
    fn integers_of_every_width_and_varint_length_fold_as_postcard_encodes_them() {
        for v in varint_edges() {
            same(&v);
            same(&(v as u32));
            same(&(v as u16));
            same(&(v as u8));
            same(&(v as i64));
            same(&(v as i64).wrapping_neg());
            same(&(v as i32));
            same(&(v as i16));
            same(&(v as i8));
            same(&(u128::from(v) << 64 | u128::from(v)));
            same(&-(i128::from(v)));
            same(&(v as usize, v as isize));
        }
    }

    #[test]
    fn mixed_bit_patterns_of_every_varint_length_fold_as_postcard_encodes_them() {
        // Every group of seven bits must land in its own byte, whatever its neighbours hold:
        // all-ones and single-bit values alone would hide a mask that leaks between groups.
        let mut x = 0x0123_4567_89AB_CDEFu64;
        for _ in 0..4_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            for bits in 1..=64 {
                let v = if bits == 64 { x } else { x & ((1u64 << bits) - 1) };
                same(&v);
                same(&(v, 0u8));
            }
        }
    }

    #[test]
    fn every_tail_length_and_split_of_a_word_folds_alike() {
        // A leading run of n bytes puts each later field at every offset within a word.
        for lead in 0..9usize {
            for len in [0usize, 1, 5, 7, 8, 9, 15, 16, 17, 127, 128, 300] {
                let prefix = vec![7u8; lead];
                let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
                same(&(prefix.clone(), payload.clone(), u64::MAX, 300u16, "tail"));
                let text: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
                same(&(prefix, text, 'é', '\u{1F600}'));
            }
        }
    }

    #[test]
    fn structs_enums_options_maps_and_floats_fold_as_postcard_encodes_them() {
        let record = Record {
            id: Id(1 << 40),
            unit: Unit,
            shapes: vec![
                Shape::Plain,
                Shape::Wrapped(u32::MAX),
                Shape::Pair(-5, Some("lane-3".into())),
                Shape::Pair(i64::MIN, None),
                Shape::Fields { a: 200, b: vec![0, 127, 128, u16::MAX], c: true, d: (-1, 'z') },
                Shape::Nested(Box::new(Shape::Fields { a: 0, b: vec![], c: false, d: (i32::MAX, '\0') })),
            ],
            map: (0..20).map(|k| (k * 1000, -(k as i16))).collect(),
            floats: (1.5, -0.0),
            wide: (u128::MAX, i128::MIN),
            bytes: (0..=255).collect(),
            text: "the quick brown fox".into(),
            none: None,
        };
        same(&record);
        same(&());
        same(&Unit);
    }

    #[test]
    fn a_value_postcard_refuses_is_refused_here_too() {
        struct Unsized;
        impl Serialize for Unsized {
            fn serialize<S: ser::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                use ser::SerializeSeq;
                s.serialize_seq(None)?.end()
            }
        }
        assert!(postcard::to_allocvec(&Unsized).is_err());
        let mut folder = WordFolder { fingerprint: Fingerprint::default(), word: 0, filled: 0 };
        assert!(Unsized.serialize(&mut folder).is_err());
    }

    #[test]
    fn displayed_strings_fold_with_their_length_first() {
        struct Shown;
        impl Serialize for Shown {
            fn serialize<S: ser::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(&format_args!("{}-{}", "replica", 12345))
            }
        }
        assert_eq!(folded(&Shown), via_postcard(&Shown));
    }
}
