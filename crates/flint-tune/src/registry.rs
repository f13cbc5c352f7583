//! A light registry of named implementations of one op, chosen by priority and support.

use crate::Invocation;

/// Why an implementation cannot run an invocation.
pub type Refusal = Vec<String>;

/// The support check of an implementation.
type SupportFn = Box<dyn Fn(&Invocation) -> Result<(), Refusal> + Send + Sync>;

/// One named implementation of an op (e.g. the `accelerated` or `portable` variant).
pub struct Implementation<T> {
    name: &'static str,
    priority: i32,
    supports: SupportFn,
    payload: T,
}

impl<T> Implementation<T> {
    /// An implementation called `name`. Higher `priority` is tried first; `supports` returns
    /// the reasons it refuses an invocation; `payload` is what the caller runs (a launcher).
    pub fn new(
        name: &'static str,
        priority: i32,
        supports: impl Fn(&Invocation) -> Result<(), Refusal> + Send + Sync + 'static,
        payload: T,
    ) -> Self {
        Self {
            name,
            priority,
            supports: Box::new(supports),
            payload,
        }
    }

    /// The name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The priority.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Whether this implementation can run `inv`, and if not, why.
    pub fn supports(&self, inv: &Invocation) -> Result<(), Refusal> {
        (self.supports)(inv)
    }

    /// What the caller runs.
    pub fn payload(&self) -> &T {
        &self.payload
    }
}

/// No registered implementation accepts an invocation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no implementation of `{op}` can run this call: {}", describe(.refusals))]
pub struct Unsupported {
    /// The op id.
    pub op: String,
    /// Each implementation's name and reasons, highest priority first.
    pub refusals: Vec<(&'static str, Refusal)>,
}

fn describe(refusals: &[(&'static str, Refusal)]) -> String {
    if refusals.is_empty() {
        return "none is registered".to_string();
    }
    refusals
        .iter()
        .map(|(name, why)| format!("{name} refuses ({})", why.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The implementations of one op, in priority order.
pub struct Registry<T> {
    op: &'static str,
    impls: Vec<Implementation<T>>,
}

impl<T> Registry<T> {
    /// An empty registry for op `op`.
    pub fn new(op: &'static str) -> Self {
        Self {
            op,
            impls: Vec::new(),
        }
    }

    /// Adds an implementation, keeping the list sorted by descending priority (stable for
    /// equal priorities, so registration order breaks ties).
    pub fn register(mut self, implementation: Implementation<T>) -> Self {
        let at = self
            .impls
            .iter()
            .position(|i| i.priority < implementation.priority)
            .unwrap_or(self.impls.len());
        self.impls.insert(at, implementation);
        self
    }

    /// The implementations, highest priority first.
    pub fn implementations(&self) -> &[Implementation<T>] {
        &self.impls
    }

    /// The highest-priority implementation that supports `inv`, or every refusal.
    pub fn select(&self, inv: &Invocation) -> Result<&Implementation<T>, Unsupported> {
        let mut refusals = Vec::new();
        for implementation in &self.impls {
            match implementation.supports(inv) {
                Ok(()) => return Ok(implementation),
                Err(why) => refusals.push((implementation.name, why)),
            }
        }
        Err(Unsupported {
            op: self.op.to_string(),
            refusals,
        })
    }

    /// Looks an implementation up by name.
    pub fn get(&self, name: &str) -> Option<&Implementation<T>> {
        self.impls.iter().find(|i| i.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeviceFingerprint, Signature};

    fn inv(d: usize) -> Invocation {
        Invocation::new(
            "attention_fwd",
            Signature::new().with("head_dim", d),
            DeviceFingerprint::new("test", "dev", "-", "-"),
        )
    }

    fn registry() -> Registry<u8> {
        Registry::new("attention_fwd")
            .register(Implementation::new("portable", 0, |_| Ok(()), 0))
            .register(Implementation::new(
                "accelerated",
                10,
                |inv| match inv.signature().int("head_dim") {
                    Some(64) => Ok(()),
                    other => Err(vec![format!("head_dim {other:?} is not 64")]),
                },
                1,
            ))
    }

    #[test]
    fn highest_priority_supporting_impl_wins() {
        let r = registry();
        assert_eq!(r.implementations()[0].name(), "accelerated");
        assert_eq!(r.select(&inv(64)).unwrap().name(), "accelerated");
        assert_eq!(*r.select(&inv(96)).unwrap().payload(), 0);
    }

    #[test]
    fn refusals_are_reported_in_order() {
        let r = Registry::new("attention_fwd")
            .register(Implementation::new(
                "a",
                1,
                |_| Err(vec!["no cmma".into()]),
                (),
            ))
            .register(Implementation::new(
                "b",
                5,
                |_| Err(vec!["no planes".into()]),
                (),
            ));
        let err = r.select(&inv(64)).err().unwrap();
        assert_eq!(err.refusals[0].0, "b");
        assert_eq!(
            err.to_string(),
            "no implementation of `attention_fwd` can run this call: \
             b refuses (no planes); a refuses (no cmma)"
        );
        let empty: Registry<()> = Registry::new("x");
        let err = empty.select(&inv(1)).err().unwrap();
        assert!(err.to_string().contains("none is registered"));
    }
}
