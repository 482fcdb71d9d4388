//! Virtual time. The simulated world never reads a wall clock: every instant is a
//! [`SimTime`] (nanoseconds since the start of the run) and every span a
//! [`std::time::Duration`], which is plain data. Durations in scenario files are strings
//! such as `"30s"` or `"250ms"`, parsed here so that every crate agrees on the syntax.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// An instant of simulated time, in nanoseconds since the run began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);

    /// Nanoseconds since the start of the run.
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the start of the run (truncated).
    pub fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }

    /// This instant moved forward by `d`, saturating at the end of representable time.
    /// (A method, not `std::ops::Add`: it saturates where `+` would be expected to overflow.)
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(duration_nanos(d)))
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0 / 1_000_000;
        let us = (self.0 / 1_000) % 1_000;
        write!(f, "{ms}.{us:03}ms")
    }
}

/// A duration as whole nanoseconds, saturating at `u64::MAX` (about 584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Why a duration string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError(pub String);

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration such as `"30s"`, `"250ms"`, `"1.5s"`, `"2m"`, `"500us"`, `"10ns"`, `"1h"`.
///
/// A number and a unit are both required; negative values, missing units, unknown units
/// and values past `u64` nanoseconds are errors that say what was wrong.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(DurationError("empty duration; write a number and a unit, like \"250ms\"".into()));
    }
    if s.starts_with('-') {
        return Err(DurationError(format!("negative duration {text:?}; durations are zero or more")));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| DurationError(format!("duration {text:?} has no unit; use ns, us, ms, s, m or h")))?;
    let (number, unit) = s.split_at(split);
    let unit_nanos: u128 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other => {
            return Err(DurationError(format!(
                "duration {text:?} has unknown unit {other:?}; use ns, us, ms, s, m or h"
            )))
        }
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return Err(DurationError(format!("duration {text:?} has no number")));
    }
    if frac.contains('.') || frac.len() > 9 {
        return Err(DurationError(format!("duration {text:?} is not a plain decimal number")));
    }
    let whole_value: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| DurationError(format!("duration {text:?} is not a number")))?
    };
    let mut nanos =
        whole_value.checked_mul(unit_nanos).ok_or_else(|| DurationError(format!("duration {text:?} is too large")))?;
    if !frac.is_empty() {
        let digits: u128 = frac.parse().map_err(|_| DurationError(format!("duration {text:?} is not a number")))?;
        let scale = 10u128.pow(frac.len() as u32);
        nanos += digits * unit_nanos / scale;
    }
    let nanos = u64::try_from(nanos).map_err(|_| DurationError(format!("duration {text:?} is too large")))?;
    Ok(Duration::from_nanos(nanos))
}

/// Formats a duration in the shortest exact form [`parse_duration`] reads back.
pub fn format_duration(d: Duration) -> String {
    let n = duration_nanos(d);
    const UNITS: [(u64, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    if n == 0 {
        return "0ms".into();
    }
    for (size, unit) in UNITS {
        if n % size == 0 {
            return format!("{}{unit}", n / size);
        }
    }
    unreachable!("every whole number of nanoseconds is divisible by one")
}

/// Serde adapter for `Duration` fields written as strings like `"30s"` in scenario files.
pub mod serde_duration {
    use super::*;
    use serde::{Deserializer, Serializer};

    /// Writes the duration in the shortest exact form.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    /// Reads a duration string, rejecting bad ones with the reason.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_field_reads_its_string_and_refuses_a_bad_one() {
        use serde::de::value::{Error, StrDeserializer};
        let read = |text: &str| serde_duration::deserialize(StrDeserializer::<Error>::new(text));
        assert_eq!(read("1500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(read("30s").unwrap(), Duration::from_secs(30));
        assert!(read("thirty").unwrap_err().to_string().contains("thirty"));
    }

    #[test]
    fn an_instant_prints_as_milliseconds_with_three_decimals_of_microseconds() {
        assert_eq!(SimTime(1_234_567).to_string(), "1.234ms");
        assert_eq!(SimTime(2_500_000_999).to_string(), "2500.000ms");
    }

    #[test]
    fn an_instant_plus_a_duration_is_later_by_it_and_saturates() {
        assert_eq!(SimTime(5).add(Duration::from_nanos(7)), SimTime(12));
        assert_eq!(SimTime(u64::MAX - 1).add(Duration::from_secs(1)), SimTime(u64::MAX));
    }

    #[test]
    fn an_instant_reads_back_in_nanoseconds_and_milliseconds() {
        assert_eq!(SimTime(2_500_000).as_nanos(), 2_500_000);
        assert_eq!(SimTime(2_500_000).as_millis(), 2);
    }

    #[test]
    fn parses_the_units_a_scenario_uses() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("0ms").unwrap(), Duration::ZERO);
    }

    #[test]
    fn refuses_negative_unitless_and_unknown() {
        assert!(parse_duration("-1s").unwrap_err().0.contains("negative"));
        assert!(parse_duration("30").unwrap_err().0.contains("no unit"));
        assert!(parse_duration("3 parsecs").unwrap_err().0.contains("unknown unit"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1.2.3s").unwrap_err().0.contains("not a plain decimal"));
        assert!(parse_duration("1.0000000001s").unwrap_err().0.contains("not a plain decimal"), "finer than 1 ns");
        assert_eq!(parse_duration("1.000000001s"), Ok(Duration::from_nanos(1_000_000_001)));
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    proptest::proptest! {
        #[test]
        fn format_then_parse_is_identity(n in 0u64..u64::MAX / 4) {
            let d = Duration::from_nanos(n);
            proptest::prop_assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }

        #[test]
        fn parser_never_panics(s in "\\PC{0,12}") {
            let _ = parse_duration(&s);
        }
    }
}
