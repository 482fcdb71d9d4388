//! Readable logs of a simulated run, stamped with simulated time and node.
//!
//! A log record written by model or executor code through `tracing` is only useful in a
//! simulation if it says *when* in simulated time and *where* (which node) it happened:
//! wall-clock time means nothing there, and the thread is the same for every node. This
//! module provides a `tracing` subscriber that writes one line per record,
//!
//! ```text
//!       1.500000000s replica-1 DEBUG sutra_sim_core::executor: node killed node=replica-1 tasks=3
//! ```
//!
//! with the simulated time (nanosecond precision), the node of the task being polled
//! (`world` outside any task, `-` outside any world), the level, the target and the
//! fields. Records are filtered by `RUST_LOG`-style directives ([`LogFilter`]).
//!
//! Logging never changes a run: the subscriber only reads the world, never draws from its
//! entropy. And it costs nothing unless installed: without a subscriber, the `tracing`
//! macros stop at a check of the maximum level and format nothing.
//!
//! Use [`capture`] to get a run's log as text (tests), [`with_log`] to write it to any
//! writer while a closure runs (the CLI), or [`subscriber`] to install it some other way.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tracing::{Event, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields, MakeWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

use crate::executor;
use crate::time::SimTime;

/// Which records to keep, by target and level: `RUST_LOG`-style directives separated by
/// commas, each `target=level` (a target keeps its records at that level and more severe,
/// and so do targets below it) or a bare `level` for every other target. Levels are
/// `trace`, `debug`, `info`, `warn`, `error` and `off`. An empty filter keeps nothing.
///
/// For example `info,sutra_sim_core::executor=debug` keeps everything at `info` and more
/// severe, and the executor's node faults too.
#[derive(Clone, Debug)]
pub struct LogFilter(Targets);

/// A filter that could not be parsed: the text and the parser's complaint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidLogFilter {
    /// The filter as given.
    pub filter: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for InvalidLogFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid log filter {:?}: {}", self.filter, self.message)
    }
}

impl std::error::Error for InvalidLogFilter {}

impl FromStr for LogFilter {
    type Err = InvalidLogFilter;

    fn from_str(directives: &str) -> Result<LogFilter, InvalidLogFilter> {
        let targets = directives
            .parse::<Targets>()
            .map_err(|error| InvalidLogFilter { filter: directives.to_string(), message: error.to_string() })?;
        Ok(LogFilter(targets))
    }
}

/// Runs `f` with the simulated-run subscriber as this thread's default, and returns what
/// `f` returned and the log text it produced.
pub fn capture<R>(filter: &LogFilter, f: impl FnOnce() -> R) -> (R, String) {
    let (result, bytes) = with_log(filter, Vec::new(), f);
    let text = String::from_utf8(bytes).expect("log lines are written from `str`s, so they are UTF-8");
    (result, text)
}

/// Runs `f` with the simulated-run subscriber, writing to `writer`, as this thread's
/// default; returns what `f` returned and the writer. Other threads are not affected, so
/// parallel sweeps can log each run on its own.
pub fn with_log<W: Write + Send + 'static, R>(filter: &LogFilter, writer: W, f: impl FnOnce() -> R) -> (R, W) {
    keep_a_second_dispatch_registered();
    let shared = Arc::new(Mutex::new(writer));
    let result = tracing::subscriber::with_default(subscriber(filter, SharedWriter(shared.clone())), f);
    // `with_default` dropped its subscriber, and with it the only other handle.
    let writer = Arc::try_unwrap(shared)
        .unwrap_or_else(|_| unreachable!("the subscriber is dropped when `with_default` returns"))
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    (result, writer)
}

/// Registers, once per process, a dispatch that is never installed anywhere.
///
/// `tracing` caches each call site's interest process-wide. While exactly one dispatch is
/// registered, tracing-core computes that interest from the default of *whichever thread
/// first reaches the call site* (tokio-rs/tracing#2874, #3611): a thread with no
/// subscriber — another test, another sweep worker — then caches "never" and the capture
/// on this thread silently loses records. With a second dispatch registered, interest is
/// computed over all registered dispatches, so the capture sees every record. It costs a
/// process that never logs nothing: this only runs when a log is asked for.
fn keep_a_second_dispatch_registered() {
    static SECOND: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
}

/// The simulated-run subscriber: records that pass `filter`, one line each, written to
/// the writers `make_writer` makes (for example `std::io::stderr`).
pub fn subscriber<M>(filter: &LogFilter, make_writer: M) -> impl Subscriber + Send + Sync + 'static
where
    M: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = tracing_subscriber::fmt::layer().event_format(SimStamp).with_writer(make_writer);
    tracing_subscriber::registry().with(lines).with(filter.0.clone())
}

/// Formats one record as a line: simulated time, node, level, target, span path, fields.
struct SimStamp;

impl<S, N> FormatEvent<S, N> for SimStamp
where
    S: Subscriber + for<'span> LookupSpan<'span>,
    N: for<'fields> FormatFields<'fields> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        match executor::peek_stamp() {
            Some((time, node)) => write!(writer, "{:>16} {node} ", SimTimeText(time))?,
            None => write!(writer, "{:>16} - ", "-")?,
        }
        let metadata = event.metadata();
        write!(writer, "{:>5} {}: ", metadata.level(), metadata.target())?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                write!(writer, "{}", span.name())?;
                let extensions = span.extensions();
                match extensions.get::<FormattedFields<N>>() {
                    Some(fields) if !fields.is_empty() => write!(writer, "{{{fields}}}: ")?,
                    _ => write!(writer, ": ")?,
                }
            }
        }
        ctx.format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Simulated time as seconds with nanosecond precision: `12.345678901s`.
struct SimTimeText(SimTime);

impl fmt::Display for SimTimeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0 .0;
        f.pad(&format!("{}.{:09}s", nanos / 1_000_000_000, nanos % 1_000_000_000))
    }
}

/// A writer shared by the subscriber (which writes a record at a time under the lock) and
/// [`with_log`] (which takes it back at the end).
struct SharedWriter<W>(Arc<Mutex<W>>);

/// The locked writer, for one record.
struct Locked<'w, W>(MutexGuard<'w, W>);

impl<W: Write> Write for Locked<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<'w, W: Write + 'w> MakeWriter<'w> for SharedWriter<W> {
    type Writer = Locked<'w, W>;

    fn make_writer(&'w self) -> Self::Writer {
        Locked(self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::executor::{add_node, kill, pause, restart, resume, sleep, spawn_on};
    use crate::run::{simulate, RunConfig};
    use crate::trace::{EventKind, Tracer};

    #[derive(Clone, Debug, serde::Serialize)]
    struct NoEvents;

    impl EventKind for NoEvents {
        fn name(&self) -> &'static str {
            "none"
        }
    }

    /// A world with one replica whose task logs at 1.5 s; the world pauses the replica at
    /// 1 s, resumes it at 1.2 s, kills it at 2 s and restarts it at 3 s.
    fn tiny_run() -> crate::run::Outcome<NoEvents> {
        simulate(&RunConfig::seeded(7), Vec::new(), |_: &Tracer<NoEvents>| {
            let replica = add_node("replica-1", None);
            spawn_on(replica, "worker", async {
                sleep(Duration::from_millis(1_500)).await;
                tracing::info!(target: "model", step = 3, "step committed");
                sleep(Duration::from_secs(60)).await;
            });
            spawn_on(crate::node::NodeId::WORLD, "killer", async move {
                sleep(Duration::from_secs(1)).await;
                pause(replica);
                sleep(Duration::from_millis(200)).await;
                resume(replica);
                sleep(Duration::from_millis(800)).await;
                kill(replica);
                sleep(Duration::from_secs(1)).await;
                restart(replica);
            });
        })
    }

    /// A writer that keeps what it is given and counts its flushes.
    #[derive(Default)]
    struct Counting {
        bytes: Vec<u8>,
        flushes: usize,
    }

    impl Write for Counting {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.bytes.extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }

    #[test]
    fn a_records_writer_writes_and_flushes_through_to_the_shared_one() {
        // A layer that flushes after a record (or a user's own subscriber) must reach the
        // file under the lock, not stop at the lock's guard.
        let shared = SharedWriter(Arc::new(Mutex::new(Counting::default())));
        let mut record = shared.make_writer();
        record.write_all(b"step committed\n").expect("writes");
        record.flush().expect("flushes");
        drop(record);
        let inner = shared.0.lock().expect("not poisoned");
        assert_eq!((inner.bytes.as_slice(), inner.flushes), (&b"step committed\n"[..], 1));
    }

    fn filter(text: &str) -> LogFilter {
        text.parse().expect("a valid filter")
    }

    #[test]
    fn log_lines_carry_simulated_time_and_node() {
        let (outcome, log) = capture(&filter("trace"), tiny_run);
        assert_eq!(outcome.verdict, crate::verdict::Verdict::Pass);
        let lines: Vec<&str> = log.lines().collect();
        let step = lines.iter().find(|l| l.contains("step committed")).expect("the model's record");
        assert_eq!(
            step.split_whitespace().take(4).collect::<Vec<_>>(),
            ["1.500000000s", "replica-1", "INFO", "model:"]
        );
        assert!(step.ends_with("step committed step=3"), "{step}");
        let killed = lines.iter().find(|l| l.contains("node killed")).expect("the kill record");
        assert!(killed.trim_start().starts_with("2.000000000s world DEBUG sutra_sim_core::executor:"), "{killed}");
        assert!(killed.contains("node=replica-1") && killed.contains("tasks=1"), "{killed}");
        let spawned = lines.iter().filter(|l| l.contains("task spawned")).count();
        assert_eq!(spawned, 2, "{log}");
        assert!(lines.iter().any(|l| l.contains("task ended") && l.contains("task=killer")), "{log}");
    }

    #[test]
    fn every_node_fault_is_logged_at_debug_with_its_time() {
        let (_, faults) = capture(&filter("sutra_sim_core::executor=debug"), tiny_run);
        let records: Vec<(&str, &str)> = faults
            .lines()
            .map(|l| {
                let time = l.split_whitespace().next().expect("a time");
                let message = l.split(": ").nth(1).expect("a message").split(" node=").next().expect("a message");
                (time, message)
            })
            .collect();
        assert_eq!(
            records,
            [
                ("0.000000000s", "node added"),
                ("1.000000000s", "node paused"),
                ("1.200000000s", "node resumed"),
                ("2.000000000s", "node killed"),
                ("3.000000000s", "node restarted"),
            ],
            "{faults}"
        );
    }

    #[test]
    fn a_filter_narrows_the_log() {
        let (_, everything) = capture(&filter("trace"), tiny_run);
        let (_, faults) = capture(&filter("sutra_sim_core::executor=debug"), tiny_run);
        let (_, model) = capture(&filter("model=info"), tiny_run);
        assert!(faults.lines().count() < everything.lines().count());
        assert!(faults.lines().all(|l| l.contains(" DEBUG sutra_sim_core::executor: ")), "{faults}");
        assert!(faults.contains("node killed"));
        assert_eq!(model.lines().count(), 1, "{model}");
        assert!(model.contains("step committed"));
        let (_, nothing) = capture(&filter(""), tiny_run);
        assert_eq!(nothing, "");
    }

    #[test]
    fn logging_does_not_change_the_run() {
        let quiet = tiny_run();
        let (logged, _) = capture(&filter("trace"), tiny_run);
        assert_eq!(logged.fingerprint, quiet.fingerprint);
        assert_eq!(logged.tape, quiet.tape);
        assert_eq!(logged.polls, quiet.polls);
    }

    #[test]
    fn a_span_prints_its_fields_in_braces_and_nothing_when_it_has_none() {
        let ((), log) = capture(&filter("info"), || {
            let _outer = tracing::info_span!("sweep", seed = 4).entered();
            let _inner = tracing::info_span!("shrink").entered();
            tracing::info!(target: "cli", "done");
        });
        assert!(log.contains("sweep{seed=4}: shrink: done"), "{log}");
    }

    #[test]
    fn records_outside_a_world_are_stamped_with_dashes() {
        let ((), log) = capture(&filter("info"), || tracing::info!(target: "cli", "starting"));
        assert_eq!(log.split_whitespace().collect::<Vec<_>>(), ["-", "-", "INFO", "cli:", "starting"]);
    }

    #[test]
    fn a_malformed_filter_is_an_error_naming_it() {
        let error = "model=loud".parse::<LogFilter>().expect_err("not a level");
        assert_eq!(error.filter, "model=loud");
        assert!(error.to_string().starts_with("invalid log filter \"model=loud\": "), "{error}");
    }

    #[test]
    fn simulated_time_prints_seconds_to_the_nanosecond() {
        assert_eq!(SimTimeText(SimTime(12_345_678_901)).to_string(), "12.345678901s");
        assert_eq!(SimTimeText(SimTime::ZERO).to_string(), "0.000000000s");
    }

    #[test]
    fn a_call_site_first_reached_by_a_thread_without_a_subscriber_still_reaches_a_capture() {
        fn site() {
            tracing::info!(target: "sutra_sim_core::log::first_reached_elsewhere", "reached");
        }
        let filter: LogFilter = "info".parse().unwrap();
        let ((), text) = capture(&filter, || {
            // The call site registers from a thread with no subscriber, then fires here.
            std::thread::spawn(site).join().unwrap();
            site();
        });
        assert!(text.contains("reached"), "the capture lost the record: {text:?}");
    }
}
