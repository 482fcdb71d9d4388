//! The fingerprint's fold of [`ModelEvent`], written by hand: the bytes postcard would write
//! for the event (its variant's index, then its fields in declaration order, each as
//! postcard encodes its type), pushed straight into the fingerprint's [`WordFolder`].
//!
//! Why: every event of every run is fingerprinted, and the derived `Serialize` path was
//! about 5% of a smoke sweep: one large function over all variants, an error test per
//! field, and a call per id and per option. This fold does the same pushes inline.
//!
//! The bytes must be postcard's exactly (every recorded fingerprint depends on them), so:
//! the match below names every variant and every field (no `..`), and a new variant or
//! field does not compile until it is folded here; and this file's tests compare the fold
//! with postcard's encoding on random events of every variant (drawn through the derived
//! `Deserialize`, so a new variant or field is drawn without touching the tests), which
//! catches a wrong index, a field out of order or a field folded as the wrong type.

use sutra_sim_core::{FoldPostcard, WordFolder};

use crate::event::{
    AdminStatus, CallFault, Component, Exit, LaneAction, ModelEvent, Reaction, StoreCall, TriggerRef, WriteKind,
};
use crate::faults::kind::FaultKind;
use crate::ids::{Code, ExecId, InstanceId, MessageId, OwnerId, ProcessId, ResumePath};

/// The ids: newtypes, which postcard encodes as their one field.
macro_rules! fold_as_inner {
    ($($id:ty),+) => {$(
        impl FoldPostcard for $id {
            #[inline(always)]
            fn fold_postcard(&self, out: &mut WordFolder) {
                self.0.fold_postcard(out);
            }
        }
    )+};
}
fold_as_inner!(InstanceId, ProcessId, ExecId, MessageId, OwnerId);

/// Enums of unit variants: the variant's index, a varint of one byte (each has fewer than
/// 128 variants and no explicit discriminant, so `as u8` is the position serde numbers).
macro_rules! fold_as_index {
    ($($kind:ty),+) => {$(
        impl FoldPostcard for $kind {
            #[inline(always)]
            fn fold_postcard(&self, out: &mut WordFolder) {
                out.byte(*self as u8);
            }
        }
    )+};
}
fold_as_index!(ResumePath, Code, Exit, StoreCall, CallFault, WriteKind, AdminStatus, Component, FaultKind);

impl FoldPostcard for Reaction {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        match self {
            Reaction::Requeued => out.byte(0),
            Reaction::Deferred { attempt, backoff_ns } => {
                out.byte(1);
                attempt.fold_postcard(out);
                backoff_ns.fold_postcard(out);
            }
            Reaction::Conflict409 => out.byte(2),
        }
    }
}

impl FoldPostcard for TriggerRef {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        match self {
            TriggerRef::Message(message) => {
                out.byte(0);
                message.fold_postcard(out);
            }
            TriggerRef::TimerRow { expects } => {
                out.byte(1);
                expects.fold_postcard(out);
            }
        }
    }
}

impl FoldPostcard for LaneAction {
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        match self {
            LaneAction::Submitted(item) => {
                out.byte(0);
                item.fold_postcard(out);
            }
            LaneAction::TurnStarted(item) => {
                out.byte(1);
                item.fold_postcard(out);
            }
            LaneAction::TurnEnded(item) => {
                out.byte(2);
                item.fold_postcard(out);
            }
            LaneAction::ReentrantRefused => out.byte(3),
            LaneAction::ClosedRefused => out.byte(4),
        }
    }
}

/// One arm per variant: its index (its position in `ModelEvent`'s declaration, as serde
/// numbers it; below 128, so one byte), then its fields in declaration order.
macro_rules! fold_variants {
    ($event:expr, $out:ident; $($index:literal $variant:ident { $($field:ident),* },)+) => {
        match $event {
            $(ModelEvent::$variant { $($field),* } => {
                $out.byte($index);
                $($field.fold_postcard($out);)*
            })+
        }
    };
}

impl FoldPostcard for ModelEvent {
    /// Inlined into the judge whole (as is every push under it): the word being filled and
    /// the fingerprint stay in registers. Out of line, the folder went through memory, and
    /// a smoke sweep ran 0.8 M more instructions.
    #[inline(always)]
    fn fold_postcard(&self, out: &mut WordFolder) {
        fold_variants!(self, out;
        0 InstanceStarted { instance, steps },
        1 InstanceCompleted { instance },
        2 RelayPublished { instance, message, step },
        3 RelayDelivered { instance, message, process, redelivery, duplicate, delivery },
        4 RelayAcked { instance, message, delivery },
        5 RelayRequeued { instance, message, delay_ns, delivery },
        6 RelayReclaimed { instance, message, process, silent, delivery },
        7 TimerScheduled { instance, step, due_ns },
        8 TimerDeferred { instance, expects, attempt, due_ns, task },
        9 Dispatched { instance, exec, path, process, lane, misrouted },
        10 TaskParked { instance, step },
        11 TaskLocked { instance, worker },
        12 TaskCompleted { instance, worker },
        13 ClaimAttempt { instance, exec, owner, path },
        14 ClaimGranted { instance, exec, owner, process, path, previous, stale_age_ns, epoch, task },
        15 ClaimRefused { instance, exec, owner, path, holder, task, process, delivery },
        16 StoreRead { instance, exec, claim_owner, claim_epoch, owner, epoch, version, task },
        17 Refusal { instance, exec, path, code, reaction },
        18 Rehydrated { instance, exec, version },
        19 StepStarted { instance, exec, step, slow },
        20 StepEnded { instance, exec, error },
        21 CommitAccepted { instance, exec, owner, epoch, owner_before, current_epoch, trigger, based_on, version_before, version_after, task },
        22 CommitRejected { instance, exec, owner, epoch, holder, task },
        23 RowWritten { instance, write, by, writer, owner, version, epoch, parked },
        24 Released { instance, exec, owner, epoch, current_epoch, released, task },
        25 MigrationCommitted { instance, exec, owner, epoch, current_epoch, done, task },
        26 ExecutionEnded { instance, exec, exit },
        27 Swept { instance, owner, epoch, age_ns, by, lease_held, task },
        28 SweepSelected { by, stale, lease_held, task },
        29 SweepClearMissed { instance, by, epoch, task },
        30 LeaseAcquired { process, until_ns, renewal, task },
        31 MigrationRequested { instance, exec, process, to_lane },
        32 BindingChanged { process, instance, lane },
        33 SnapshotUsed { process, instance, used },
        34 Lane { process, component, action, task },
        35 CallStruck { instance, exec, call, fault, task },
        36 TaskAborted { replica, process, lane, task },
        37 ReplicaCrashed { replica, process },
        38 PullWorkerCrashed { worker },
        39 ReplicaRestarted { replica, process },
        40 ReplicaPaused { replica, process, for_ns },
        41 ReplicaResumed { replica, process },
        42 ClockSkewed { replica, offset_ms },
        43 TimeoutSkewed { process, asked_ns, took_ns },
        44 FaultInjected { fault, replica, detail_ns, task },
        45 SwarmSelected { enabled },
        46 Healed {},
        47 BounceMeter { relay, timer },
        48 ShutdownRequested { replica, process, drain_ns },
        49 ReplicaStopped { replica, process },
        50 AdminRequestEnded { process, task, instance, status, code },
        51 RelayDeadLettered { instance, message, delivery, code },
        52 RoleCallStruck { call, fault, for_instance, task },
        53 ClaimFenced { instance, exec, owner, number, seen, task },
        54 AdminRequestReceived { process, task, client, request, instance, to_lane, attempt },
        )
    }
}

#[cfg(test)]
mod tests {
    use serde::de::{
        self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, SeqAccess, VariantAccess, Visitor,
    };
    use serde::Deserialize;
    use sutra_sim_core::node::NodeId;
    use sutra_sim_core::trace::{Fingerprint, TraceHasher};
    use sutra_sim_core::SimTime;

    use super::*;

    /// The fingerprint of `event` folded by hand (`TraceHasher::add_kind`, as the judge folds it).
    fn by_hand(event: &ModelEvent) -> u64 {
        let mut hasher = TraceHasher::default();
        hasher.add_kind(SimTime(7), NodeId(3), event);
        hasher.value()
    }

    /// The fingerprint of `event` as postcard encodes it, the encoding folded as a buffer.
    fn via_postcard(event: &ModelEvent) -> u64 {
        let mut f = Fingerprint::default();
        f.write_u64(7);
        f.write_u64(3);
        f.write(&postcard::to_allocvec(event).expect("postcard encodes every event"));
        f.value()
    }

    /// The fingerprint of `event` through its derived `Serialize` (`TraceHasher::add`).
    fn via_serde(event: &ModelEvent) -> u64 {
        let mut hasher = TraceHasher::default();
        hasher.add(SimTime(7), NodeId(3), event);
        hasher.value()
    }

    fn same(event: &ModelEvent) {
        let expected = via_postcard(event);
        assert_eq!(by_hand(event), expected, "the hand-written fold differs from postcard's on {event:?}");
        assert_eq!(via_serde(event), expected, "the serde fold differs from postcard's on {event:?}");
    }

    /// A deserializer that makes up its values: every integer of a random width (so every
    /// varint length comes up), every `bool` and option either way, every enum a random
    /// variant (the outermost one, `variant`, if given), every sequence of a few elements.
    /// Fed to a type's derived `Deserialize`, it draws a random value of that type, with no
    /// list of the type's variants or fields to keep up to date.
    struct Random {
        state: u64,
        /// The variant the next enum takes, then random ones.
        variant: Option<u32>,
        /// How many variants the first enum drawn had.
        variants_seen: Option<usize>,
    }

    impl Random {
        fn next(&mut self) -> u64 {
            // splitmix64.
            self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// A value of at most `bits` bits, its width drawn first: 0, 1 and `bits` bits
        /// and every width between are as likely.
        fn of_width(&mut self, bits: u32) -> u64 {
            let width = (self.next() % u64::from(bits + 1)) as u32;
            match width {
                0 => 0,
                64 => self.next(),
                w => self.next() & ((1u64 << w) - 1),
            }
        }

        fn signed(&mut self, bits: u32) -> i64 {
            let magnitude = self.of_width(bits - 1) as i64;
            if self.next() & 1 == 0 {
                magnitude
            } else {
                -magnitude - 1
            }
        }
    }

    #[derive(Debug)]
    struct Refused(String);

    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }

    impl std::error::Error for Refused {}

    impl de::Error for Refused {
        fn custom<T: std::fmt::Display>(msg: T) -> Self {
            Refused(msg.to_string())
        }
    }

    type Drawn<T> = Result<T, Refused>;

    impl<'de> Deserializer<'de> for &mut Random {
        type Error = Refused;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Drawn<V::Value> {
            Err(Refused("a self-describing value: no event has one".into()))
        }
        fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_bool(self.next() & 1 == 1)
        }
        fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_u8(self.of_width(8) as u8)
        }
        fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_u16(self.of_width(16) as u16)
        }
        fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_u32(self.of_width(32) as u32)
        }
        fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_u64(self.of_width(64))
        }
        fn deserialize_i8<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_i8(self.signed(8) as i8)
        }
        fn deserialize_i16<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_i16(self.signed(16) as i16)
        }
        fn deserialize_i32<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_i32(self.signed(32) as i32)
        }
        fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_i64(self.signed(64))
        }
        fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            if self.next() & 1 == 0 {
                v.visit_none()
            } else {
                v.visit_some(self)
            }
        }
        fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            v.visit_unit()
        }
        fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> Drawn<V::Value> {
            v.visit_unit()
        }
        fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> Drawn<V::Value> {
            v.visit_newtype_struct(self)
        }
        fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Drawn<V::Value> {
            let len = (self.next() % 4) as usize;
            v.visit_seq(Parts { random: self, left: len })
        }
        fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Drawn<V::Value> {
            v.visit_seq(Parts { random: self, left: len })
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, v: V) -> Drawn<V::Value> {
            v.visit_seq(Parts { random: self, left: len })
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            v: V,
        ) -> Drawn<V::Value> {
            v.visit_seq(Parts { random: self, left: fields.len() })
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _: &'static str,
            variants: &'static [&'static str],
            v: V,
        ) -> Drawn<V::Value> {
            self.variants_seen.get_or_insert(variants.len());
            let index = match self.variant.take() {
                Some(index) => index,
                None => (self.next() % variants.len() as u64) as u32,
            };
            v.visit_enum(Variant { random: self, index })
        }

        serde::forward_to_deserialize_any! {
            i128 u128 f32 f64 char str string bytes byte_buf map identifier ignored_any
        }
    }

    /// The fields of a struct or variant, or the elements of a sequence: `left` more.
    struct Parts<'r> {
        random: &'r mut Random,
        left: usize,
    }

    impl<'de> SeqAccess<'de> for Parts<'_> {
        type Error = Refused;
        fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Drawn<Option<T::Value>> {
            if self.left == 0 {
                return Ok(None);
            }
            self.left -= 1;
            seed.deserialize(&mut *self.random).map(Some)
        }
        fn size_hint(&self) -> Option<usize> {
            Some(self.left)
        }
    }

    /// The variant an enum takes, by index (as postcard names it).
    struct Variant<'r> {
        random: &'r mut Random,
        index: u32,
    }

    impl<'de, 'r> EnumAccess<'de> for Variant<'r> {
        type Error = Refused;
        type Variant = Parts<'r>;
        fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Drawn<(T::Value, Parts<'r>)> {
            let index: de::value::U32Deserializer<Refused> = self.index.into_deserializer();
            Ok((seed.deserialize(index)?, Parts { random: self.random, left: 0 }))
        }
    }

    impl<'de> VariantAccess<'de> for Parts<'_> {
        type Error = Refused;
        fn unit_variant(self) -> Drawn<()> {
            Ok(())
        }
        fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Drawn<T::Value> {
            seed.deserialize(self.random)
        }
        fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Drawn<V::Value> {
            v.visit_seq(Parts { random: self.random, left: len })
        }
        fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], v: V) -> Drawn<V::Value> {
            v.visit_seq(Parts { random: self.random, left: fields.len() })
        }
    }

    /// A random event of variant `index` (its position in the declaration).
    fn random_event(random: &mut Random, index: u32) -> ModelEvent {
        random.variant = Some(index);
        let event = ModelEvent::deserialize(&mut *random).expect("every variant can be drawn");
        assert!(random.variant.is_none(), "the event itself took the variant");
        event
    }

    /// How many variants `ModelEvent` declares, as its derived `Deserialize` says.
    fn variant_count() -> u32 {
        let mut random = Random { state: 0, variant: Some(0), variants_seen: None };
        let _ = ModelEvent::deserialize(&mut random);
        random.variants_seen.expect("an event is an enum") as u32
    }

    #[test]
    fn random_events_of_every_variant_fold_by_hand_as_postcard_encodes_them() {
        let count = variant_count();
        assert_eq!(count, u32::from(crate::event::tag::COUNT), "one tag per variant");
        let mut random = Random { state: 0x5EED, variant: None, variants_seen: None };
        for index in 0..count {
            for _ in 0..400 {
                same(&random_event(&mut random, index));
            }
        }
    }

    #[test]
    fn the_random_events_take_the_variant_asked_for_and_vary_their_fields() {
        // The test above would pass vacuously if every draw were the same event.
        let mut random = Random { state: 1, variant: None, variants_seen: None };
        for index in 0..variant_count() {
            let drawn: Vec<ModelEvent> = (0..20).map(|_| random_event(&mut random, index)).collect();
            let encoded = postcard::to_allocvec(&drawn[0]).unwrap();
            assert_eq!(u32::from(encoded[0]), index, "{:?} is variant {index}", drawn[0]);
            let fieldless = encoded.len() == 1;
            assert!(fieldless || drawn.iter().any(|e| e != &drawn[0]), "variant {index} always drew {:?}", drawn[0]);
        }
    }

    #[test]
    fn every_example_event_folds_by_hand_as_postcard_encodes_it() {
        for tag in 0..crate::event::tag::COUNT {
            same(&ModelEvent::example(tag).expect("every tag has an example"));
        }
    }

    #[test]
    fn fields_at_the_edges_of_their_varint_lengths_fold_by_hand_as_postcard_encodes_them() {
        for v in [0u64, 1, 127, 128, 16_383, 16_384, u64::from(u32::MAX), u64::from(u32::MAX) + 1, 1 << 56, u64::MAX] {
            let v32 = v as u32;
            same(&ModelEvent::ClaimGranted {
                instance: InstanceId(v32),
                exec: ExecId(v32),
                owner: OwnerId(v),
                process: Some(ProcessId(v32)),
                path: ResumePath::PullCompletion,
                previous: Some(OwnerId(v)),
                stale_age_ns: Some(v),
                epoch: v,
                task: Some(v),
            });
            same(&ModelEvent::ClockSkewed { replica: v32, offset_ms: v as i64 });
            same(&ModelEvent::ClockSkewed { replica: v32, offset_ms: (v as i64).wrapping_neg() });
        }
    }
}
