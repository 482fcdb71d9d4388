//! Books that several checkers keep alike, kept once per run in the view
//! ([`crate::view::ModelView::ledger`]) and booked once per event, by whichever of their
//! readers the judge calls first; the others read what it booked.
//!
//! Why: every reader keeping its own copy pays for the same books once per reader on every
//! event (`prefetch-window` and `sometimes-prefetch-window-full` each kept every
//! consumer's unsettled deliveries: a tree entry per delivered message, twice), and copies
//! drift apart when one reader forgets an event the other reads (the property did not read
//! `relay-dead-lettered`, so after a dead-letter its window was fuller than the checker's).
//!
//! Once per event: an event is booked by the first reader that asks about it; another
//! reader asking about the same sequence number finds it booked and gets the same answer.
//! In a simulation sequence numbers are unique, but `check` merges history files whose
//! numbers may repeat, so a reader asking again about the sequence number it booked last
//! is at a new event and books it. That is sound only if every reader of a book reads all
//! the event tags the book needs ([`PREFETCH_READS`]), so that each sees every event of the
//! book, in the same order: a reader that stops listening (a coverage property once
//! reached) then leaves the books to the others.
//!
//! The books are the checkers' own, made from the events they judge, never the model's
//! state: keeping them in the view changes where they live, not what a verdict rests on.
//!
//! To share a book: put it here with its reader enum's variants, have every reader ask
//! the ledger with the event (its sequence number) and read the book's tags.

use std::cell::RefCell;

use sutra_sim_core::Event;

use crate::checkers::prefetch_window::PrefetchBooks;
use crate::event::{tag, ModelEvent};
use crate::ids::{MessageId, ProcessId};

/// The checkers that read a shared book, so that the ledger can tell a second reader of an
/// event from the first reader at the next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// `prefetch-window`.
    PrefetchWindow,
    /// `sometimes-prefetch-window-full`.
    PrefetchWindowFull,
}

/// The event tags the prefetch books are made from: each of their readers reads them all.
pub const PREFETCH_READS: &[u8] =
    &[tag::RELAY_DELIVERED, tag::RELAY_ACKED, tag::RELAY_REQUEUED, tag::RELAY_RECLAIMED, tag::RELAY_DEAD_LETTERED];

/// What a delivery did to the prefetch books: the consumer, the message and how many
/// deliveries the consumer now holds unsettled (at least).
pub type Delivery = (ProcessId, MessageId, u32);

/// The shared books of one run.
#[derive(Default)]
pub struct Ledger {
    prefetch: RefCell<Shared<PrefetchBooks, Option<Delivery>>>,
}

impl Ledger {
    /// Books `event` into the prefetch windows unless another reader booked it; the
    /// delivery it was, if it was one.
    pub fn prefetch(&self, reader: Reader, event: &Event<ModelEvent>) -> Option<Delivery> {
        self.prefetch.borrow_mut().book(reader, event.seq, |books| books.observe(&event.kind))
    }
}

/// One shared book, the event it last booked and by whom, and what booking it answered.
#[derive(Default)]
struct Shared<B, A> {
    books: B,
    /// The sequence number of the last event booked, and the reader that booked it.
    last: Option<(u64, Reader)>,
    /// What booking the last event answered, for the readers after the first.
    answer: A,
}

impl<B, A: Copy> Shared<B, A> {
    /// Books the event numbered `seq` with `apply`, unless another reader booked it already;
    /// the answer of its booking either way.
    fn book(&mut self, reader: Reader, seq: u64, apply: impl FnOnce(&mut B) -> A) -> A {
        let booked_by_another = self.last.is_some_and(|(s, r)| s == seq && r != reader);
        if !booked_by_another {
            self.answer = apply(&mut self.books);
            self.last = Some((seq, reader));
        }
        self.answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts bookings; answers the count.
    fn count(books: &mut u32) -> u32 {
        *books += 1;
        *books
    }

    #[test]
    fn each_event_is_booked_once_whoever_asks_first() {
        let mut shared = Shared::<u32, u32>::default();
        assert_eq!(shared.book(Reader::PrefetchWindow, 0, count), 1);
        assert_eq!(shared.book(Reader::PrefetchWindowFull, 0, count), 1, "the second reader reads the booking");
        assert_eq!(shared.book(Reader::PrefetchWindowFull, 1, count), 2, "either may book first");
        assert_eq!(shared.book(Reader::PrefetchWindow, 1, count), 2);
    }

    #[test]
    fn a_reader_left_alone_books_every_event() {
        let mut shared = Shared::<u32, u32>::default();
        shared.book(Reader::PrefetchWindowFull, 0, count);
        shared.book(Reader::PrefetchWindow, 0, count);
        // The property stopped listening: the checker books the rest alone.
        assert_eq!(shared.book(Reader::PrefetchWindow, 1, count), 2);
        assert_eq!(shared.book(Reader::PrefetchWindow, 2, count), 3);
    }

    #[test]
    fn a_repeated_sequence_number_is_a_new_event_for_the_reader_that_booked_the_last() {
        // `check` merges files whose sequence numbers repeat: the same reader asking about
        // the same number again is at the next event.
        let mut shared = Shared::<u32, u32>::default();
        assert_eq!(shared.book(Reader::PrefetchWindow, 7, count), 1);
        assert_eq!(shared.book(Reader::PrefetchWindow, 7, count), 2);
        assert_eq!(shared.book(Reader::PrefetchWindowFull, 7, count), 2);
    }
}
