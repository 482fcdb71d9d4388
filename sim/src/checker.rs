//! The checker API: invariants as named plugins of one of three kinds.
//!
//! - **always** (safety): judged on every event; the first failure ends the run with a
//!   violation naming the checker;
//! - **eventually** (liveness): judged once at the end of the run, after the heal phase;
//! - **sometimes** (coverage): reports when the situation it describes occurred, so a
//!   sweep can count the seeds that reached it and flag one no seed reached — a vacuous
//!   green.
//!
//! A checker sees each event and a read-only view `V` of the model; it cannot change
//! either. Checkers are built by name from a [`Registry`], so a user adds an invariant by
//! registering a factory, without touching the simulator or the model.

use std::collections::BTreeMap;

use crate::trace::Event;

/// The three kinds of property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckerKind {
    /// Safety: must hold at every event.
    Always,
    /// Liveness: must hold at the end of the run.
    Eventually,
    /// Coverage: should happen in some seeds.
    Sometimes,
}

impl CheckerKind {
    /// `always`, `eventually` or `sometimes`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckerKind::Always => "always",
            CheckerKind::Eventually => "eventually",
            CheckerKind::Sometimes => "sometimes",
        }
    }
}

/// What a checker says about one event, or about the end of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing to report.
    Ok,
    /// The property is violated; the message says how (always and eventually checkers).
    Fail(String),
    /// The situation occurred (sometimes checkers).
    Reached,
}

/// A named invariant over events of kind `K` and a model view `V`.
pub trait Checker<K, V: ?Sized> {
    /// The registered name, kebab-case.
    fn name(&self) -> &str;
    /// The kind of property.
    fn kind(&self) -> CheckerKind;
    /// Called for every event, in order. Always-checkers return `Fail` on a violation;
    /// sometimes-checkers return `Reached` when their situation occurs, and are not called
    /// again in that run.
    fn on_event(&mut self, event: &Event<K>, view: &V) -> Check;
    /// Called once when the run ends without an earlier failure. Eventually-checkers judge
    /// here; the default has nothing to say.
    fn at_end(&mut self, _view: &V) -> Check {
        Check::Ok
    }
    /// The event tags ([`crate::EventKind::tag`]) this checker reads, as a bit mask; it is
    /// called for those events only. The default, every bit set, sees every event. Asked
    /// once per run.
    fn interest(&self) -> u64 {
        u64::MAX
    }
}

/// Builds a fresh checker for one run. Shared across sweep threads, so `Send + Sync`;
/// a closure may carry parameters (a bound, a threshold).
pub type CheckerFactory<K, V> = std::sync::Arc<dyn Fn() -> Box<dyn Checker<K, V>> + Send + Sync>;

/// A registered checker: its name, kind, a one-line description, the rules it asserts and
/// its factory.
pub struct CheckerSpec<K, V: ?Sized> {
    /// Registered name.
    pub name: &'static str,
    /// Kind of property.
    pub kind: CheckerKind,
    /// What it asserts, in one line.
    pub description: &'static str,
    /// Rule ids (R1–R19, L1–L12) it asserts.
    pub rules: &'static [&'static str],
    /// Builds an instance for one run.
    pub factory: CheckerFactory<K, V>,
}

impl<K, V: ?Sized> Clone for CheckerSpec<K, V> {
    fn clone(&self) -> Self {
        CheckerSpec {
            name: self.name,
            kind: self.kind,
            description: self.description,
            rules: self.rules,
            factory: self.factory.clone(),
        }
    }
}

/// Checkers by name, in name order.
pub struct Registry<K, V: ?Sized> {
    specs: BTreeMap<&'static str, CheckerSpec<K, V>>,
}

impl<K, V: ?Sized> Default for Registry<K, V> {
    fn default() -> Self {
        Registry { specs: BTreeMap::new() }
    }
}

impl<K, V: ?Sized> Clone for Registry<K, V> {
    fn clone(&self) -> Self {
        Registry { specs: self.specs.clone() }
    }
}

/// A checker name that is not registered, with the names that are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownChecker {
    /// The name asked for.
    pub name: String,
    /// Every registered name.
    pub known: Vec<String>,
}

impl std::fmt::Display for UnknownChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown checker {:?}; known checkers: {}", self.name, self.known.join(", "))
    }
}

impl std::error::Error for UnknownChecker {}

impl<K, V: ?Sized> Registry<K, V> {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a checker. Panics if the name is taken: two invariants must not share a name.
    pub fn register(&mut self, spec: CheckerSpec<K, V>) -> &mut Self {
        let name = spec.name;
        assert!(self.specs.insert(name, spec).is_none(), "checker {name:?} registered twice");
        self
    }

    /// Every registered checker, in name order.
    pub fn specs(&self) -> impl Iterator<Item = &CheckerSpec<K, V>> {
        self.specs.values()
    }

    /// The spec registered under `name`.
    pub fn get(&self, name: &str) -> Result<&CheckerSpec<K, V>, UnknownChecker> {
        self.specs.get(name).ok_or_else(|| UnknownChecker {
            name: name.to_string(),
            known: self.specs.keys().map(|k| k.to_string()).collect(),
        })
    }

    /// Fresh instances of the named checkers, in the order given (all if `names` is empty).
    pub fn build(&self, names: &[String]) -> Result<Vec<Box<dyn Checker<K, V>>>, UnknownChecker> {
        if names.is_empty() {
            return Ok(self.specs.values().map(|s| (s.factory)()).collect());
        }
        names.iter().map(|n| self.get(n).map(|s| (s.factory)())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Never;
    impl Checker<u32, ()> for Never {
        fn name(&self) -> &str {
            "never-seven"
        }
        fn kind(&self) -> CheckerKind {
            CheckerKind::Always
        }
        fn on_event(&mut self, event: &Event<u32>, _: &()) -> Check {
            if event.kind == 7 {
                Check::Fail("saw 7".into())
            } else {
                Check::Ok
            }
        }
    }

    fn never() -> Box<dyn Checker<u32, ()>> {
        Box::new(Never)
    }

    #[test]
    fn each_kind_has_the_name_scenarios_and_lists_use() {
        let names = [CheckerKind::Always, CheckerKind::Eventually, CheckerKind::Sometimes].map(CheckerKind::as_str);
        assert_eq!(names, ["always", "eventually", "sometimes"]);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let mut r: Registry<u32, ()> = Registry::new();
        r.register(CheckerSpec {
            name: "never-seven",
            kind: CheckerKind::Always,
            description: "",
            rules: &[],
            factory: std::sync::Arc::new(never),
        });
        let err = r.build(&["nope".into()]).err().unwrap();
        assert_eq!(err.known, vec!["never-seven".to_string()]);
        assert!(err.to_string().contains("never-seven"));
        assert_eq!(r.build(&[]).unwrap().len(), 1);
    }

    #[test]
    fn a_cloned_registry_holds_the_same_checkers() {
        let mut r: Registry<u32, ()> = Registry::new();
        r.register(CheckerSpec {
            name: "never-seven",
            kind: CheckerKind::Always,
            description: "",
            rules: &[],
            factory: std::sync::Arc::new(never),
        });
        let copy = r.clone();
        assert_eq!(copy.specs().map(|s| s.name).collect::<Vec<_>>(), vec!["never-seven"]);
        assert!(copy.get("never-seven").is_ok());
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn duplicate_names_are_refused() {
        let mut r: Registry<u32, ()> = Registry::new();
        let spec = CheckerSpec {
            name: "x",
            kind: CheckerKind::Always,
            description: "",
            rules: &[],
            factory: std::sync::Arc::new(never),
        };
        r.register(spec.clone());
        r.register(spec);
    }
}
