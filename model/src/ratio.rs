//! Probabilities as a ratio type, never a bare float: `"1/50"` in a scenario file, drawn
//! exactly from the entropy source with 0 meaning "did not happen" (the simpler run).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sutra_sim_core::{executor, Stream};

/// A probability `numerator / denominator`, with `numerator <= denominator` and a
/// denominator of at least 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ratio {
    numerator: u32,
    denominator: u32,
}

impl Ratio {
    /// Never.
    pub const NEVER: Ratio = Ratio { numerator: 0, denominator: 1 };
    /// Always.
    pub const ALWAYS: Ratio = Ratio { numerator: 1, denominator: 1 };

    /// `numerator / denominator`; errors if it is not a probability.
    pub fn new(numerator: u32, denominator: u32) -> Result<Ratio, String> {
        if denominator == 0 {
            return Err(format!("ratio {numerator}/{denominator} has a zero denominator"));
        }
        if numerator > denominator {
            return Err(format!("ratio {numerator}/{denominator} is more than 1"));
        }
        Ok(Ratio { numerator, denominator })
    }

    /// Parses `"N/D"`, `"0"` or `"1"`.
    pub fn parse(text: &str) -> Result<Ratio, String> {
        let t = text.trim();
        match t {
            "0" => return Ok(Ratio::NEVER),
            "1" => return Ok(Ratio::ALWAYS),
            _ => {}
        }
        let (n, d) = t.split_once('/').ok_or_else(|| format!("ratio {text:?} is not of the form \"N/D\""))?;
        let n: u32 = n.trim().parse().map_err(|_| format!("ratio {text:?}: numerator is not a whole number"))?;
        let d: u32 = d.trim().parse().map_err(|_| format!("ratio {text:?}: denominator is not a whole number"))?;
        Ratio::new(n, d)
    }

    /// The numerator and the denominator.
    pub fn parts(self) -> (u32, u32) {
        (self.numerator, self.denominator)
    }

    /// True if the ratio is zero.
    pub fn is_never(self) -> bool {
        self.numerator == 0
    }

    /// Draws whether the event happens, from `stream`; "no" is the simpler answer.
    pub fn draw(self, stream: Stream) -> bool {
        executor::chance_in(stream, self.numerator, self.denominator)
    }

    /// As [`Ratio::draw`], but never boosted in an exploration's children: for a rare event
    /// whose rarity the model relies on.
    pub fn draw_exact(self, stream: Stream) -> bool {
        executor::chance_in_exact(stream, self.numerator, self.denominator)
    }

    /// The ratio scaled by `factor_permille / 1000` (swarm testing), rounded down.
    pub fn scaled(self, factor_permille: u32) -> Ratio {
        let n = u64::from(self.numerator) * u64::from(factor_permille);
        let d = u64::from(self.denominator) * 1000;
        let g = gcd(n, d).max(1);
        let (n, d) = (n / g, d / g);
        let (n, d) = if d > u64::from(u32::MAX) { (n * u64::from(u32::MAX) / d, u64::from(u32::MAX)) } else { (n, d) };
        Ratio { numerator: n.min(d) as u32, denominator: d as u32 }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

impl fmt::Debug for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ratio, D::Error> {
        let text = String::deserialize(d)?;
        Ratio::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Ratio::parse("1/50").unwrap().to_string(), "1/50");
        assert!(Ratio::parse("0").unwrap().is_never());
        assert!(Ratio::parse("3/2").is_err());
        assert!(Ratio::parse("1/0").is_err());
        assert!(Ratio::parse("0.5").is_err());
        assert!(Ratio::parse("-1/2").is_err());
    }

    #[test]
    fn scaling_keeps_it_a_probability() {
        assert_eq!(Ratio::parse("1/10").unwrap().scaled(500).to_string(), "1/20");
        assert!(Ratio::parse("1/10").unwrap().scaled(0).is_never());
    }
}
