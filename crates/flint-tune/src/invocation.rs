//! Invocations: what an op is asked to do, abstractly (shapes, dtypes, params).

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::DeviceFingerprint;

/// One value of an abstract signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SigValue {
    /// A flag, e.g. `causal`.
    Bool(bool),
    /// A size or count.
    Int(i64),
    /// A real parameter, e.g. a softcap.
    Float(f64),
    /// A name, e.g. a dtype.
    Str(String),
    /// A shape.
    Dims(Vec<u64>),
}

impl fmt::Display for SigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            // `{:?}` prints the shortest text that round-trips, so it is canonical.
            Self::Float(x) => write!(f, "{x:?}"),
            Self::Str(s) => write!(f, "{s:?}"),
            Self::Dims(d) => write!(f, "{d:?}"),
        }
    }
}

impl From<bool> for SigValue {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}
impl From<i64> for SigValue {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}
impl From<usize> for SigValue {
    fn from(v: usize) -> Self {
        Self::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<u32> for SigValue {
    fn from(v: u32) -> Self {
        Self::Int(i64::from(v))
    }
}
impl From<f64> for SigValue {
    fn from(v: f64) -> Self {
        Self::Float(v)
    }
}
impl From<&str> for SigValue {
    fn from(v: &str) -> Self {
        Self::Str(v.to_string())
    }
}
impl From<String> for SigValue {
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}
impl From<Vec<u64>> for SigValue {
    fn from(v: Vec<u64>) -> Self {
        Self::Dims(v)
    }
}
impl From<&[usize]> for SigValue {
    fn from(v: &[usize]) -> Self {
        Self::Dims(v.iter().map(|&d| d as u64).collect())
    }
}

/// The abstract signature of a call: named values in a canonical (sorted) order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Signature(BTreeMap<Cow<'static, str>, SigValue>);

impl Signature {
    /// An empty signature.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces `name`.
    pub fn with(mut self, name: impl Into<Cow<'static, str>>, value: impl Into<SigValue>) -> Self {
        self.0.insert(name.into(), value.into());
        self
    }

    /// The value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&SigValue> {
        self.0.get(name)
    }

    /// Whether `name` is present and the boolean `true` (an absent feature is off).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some(SigValue::Bool(true)))
    }

    /// The integer value of `name`, if present and an integer.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(SigValue::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// The non-negative integer `name` as a size, or an error naming it.
    ///
    /// # Errors
    /// When `name` is absent, not an integer, or negative.
    pub fn size(&self, name: &str) -> Result<usize, String> {
        self.int(name)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| format!("the invocation has no valid `{name}`"))
    }

    /// Replaces the integer `name` by the next power of two at or above it, so that nearby
    /// sizes share one call key (and one tuned config). Non-integers are left alone.
    pub fn bucket_pow2(mut self, name: &str) -> Self {
        if let Some(SigValue::Int(v)) = self.0.get_mut(name) {
            *v = bucket_pow2(*v);
        }
        self
    }

    /// Iterates over `(name, value)` in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &SigValue)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The canonical text: `name=value` pairs in sorted order, separated by `;`.
    pub fn canonical(&self) -> String {
        let mut out = String::new();
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            // Writing into a String cannot fail.
            let _ = write!(out, "{k}={v}");
        }
        out
    }
}

impl std::str::FromStr for Signature {
    type Err = String;

    /// Parses [`Signature::canonical`] text back (used to re-check cached and imported
    /// entries, which store the canonical signature of their key).
    fn from_str(text: &str) -> Result<Self, String> {
        let mut sig = Signature::new();
        for item in split_top_level(text)? {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not name=value"))?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("`{name}` is not a signature name"));
            }
            sig = sig.with(name.to_string(), parse_value(value)?);
        }
        Ok(sig)
    }
}

/// Splits canonical text at the `;` that are outside quotes and brackets.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let (mut items, mut start, mut depth, mut quoted, mut escaped) =
        (vec![], 0, 0i32, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth -= 1,
            ';' if !quoted && depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted || depth != 0 {
        return Err("unbalanced quotes or brackets".to_string());
    }
    if !text.is_empty() {
        items.push(&text[start..]);
    }
    Ok(items)
}

/// One value as [`SigValue`]'s `Display` writes it.
fn parse_value(text: &str) -> Result<SigValue, String> {
    match text {
        "true" => return Ok(SigValue::Bool(true)),
        "false" => return Ok(SigValue::Bool(false)),
        _ => {}
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        return unescape(inner).map(SigValue::Str);
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return inner
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse::<u64>().map_err(|_| format!("bad dimension `{d}`")))
            .collect::<Result<Vec<_>, _>>()
            .map(SigValue::Dims);
    }
    if let Ok(i) = text.parse::<i64>() {
        return Ok(SigValue::Int(i));
    }
    text.parse::<f64>()
        .map(SigValue::Float)
        .map_err(|_| format!("`{text}` is not a signature value"))
}

/// Undoes `str`'s `Debug` escapes.
fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let c = match chars.next() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some('0') => '\0',
            Some(c @ ('\\' | '"' | '\'')) => c,
            Some('u') => {
                let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let hex = rest.strip_prefix('{').ok_or("bad \\u escape")?;
                u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or("bad \\u escape")?
            }
            _ => return Err("bad escape".to_string()),
        };
        out.push(c);
    }
    Ok(out)
}

/// The next power of two at or above `v` (values below 1 become 1; huge values saturate).
pub fn bucket_pow2(v: i64) -> i64 {
    if v <= 1 {
        return 1;
    }
    (v as u64)
        .checked_next_power_of_two()
        .and_then(|p| i64::try_from(p).ok())
        .unwrap_or(i64::MAX)
}

/// An explicit config given by the caller (the override tier), type-erased.
#[derive(Clone)]
pub struct OverrideConfig {
    value: Arc<dyn Any + Send + Sync>,
    debug: String,
}

impl OverrideConfig {
    /// Wraps a config.
    pub fn new<C: fmt::Debug + Send + Sync + 'static>(config: C) -> Self {
        let debug = format!("{config:?}");
        Self {
            value: Arc::new(config),
            debug,
        }
    }

    /// The config, if it has type `C`.
    pub fn get<C: 'static>(&self) -> Option<&C> {
        self.value.downcast_ref::<C>()
    }
}

impl fmt::Debug for OverrideConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug)
    }
}

/// One call of an op, abstractly: which op, its signature, the device and an optional
/// explicit config. Launchers build it from validated inputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Invocation {
    op: String,
    signature: Signature,
    fingerprint: DeviceFingerprint,
    #[serde(skip)]
    override_config: Option<OverrideConfig>,
}

impl Invocation {
    /// A call of `op` with `signature` on the device described by `fingerprint`.
    pub fn new(
        op: impl Into<String>,
        signature: Signature,
        fingerprint: DeviceFingerprint,
    ) -> Self {
        Self {
            op: op.into(),
            signature,
            fingerprint,
            override_config: None,
        }
    }

    /// Sets an explicit config: the override tier then answers, after validation.
    pub fn with_override<C: fmt::Debug + Send + Sync + 'static>(mut self, config: C) -> Self {
        self.override_config = Some(OverrideConfig::new(config));
        self
    }

    /// The op id.
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The abstract signature.
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The device.
    pub fn fingerprint(&self) -> &DeviceFingerprint {
        &self.fingerprint
    }

    /// The explicit config, if any.
    pub fn override_config(&self) -> Option<&OverrideConfig> {
        self.override_config.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_is_sorted_and_typed() {
        let s = Signature::new()
            .with("seq_q", 4096usize)
            .with("dtype", "bf16")
            .with("causal", true)
            .with("scale", 0.125);
        assert_eq!(
            s.canonical(),
            "causal=true;dtype=\"bf16\";scale=0.125;seq_q=4096"
        );
    }

    #[test]
    fn buckets_round_up_to_powers_of_two() {
        assert_eq!(bucket_pow2(0), 1);
        assert_eq!(bucket_pow2(1), 1);
        assert_eq!(bucket_pow2(3), 4);
        assert_eq!(bucket_pow2(4096), 4096);
        assert_eq!(bucket_pow2(4097), 8192);
        assert_eq!(bucket_pow2(i64::MAX), i64::MAX);
        let s = Signature::new().with("len", 1000usize).bucket_pow2("len");
        assert_eq!(s.int("len"), Some(1024));
    }

    #[test]
    fn flags_are_true_booleans_only() {
        let s = Signature::new()
            .with("on", true)
            .with("off", false)
            .with("one", 1usize)
            .with("word", "true");
        assert!(s.flag("on"));
        assert!(!s.flag("off"));
        assert!(!s.flag("one"));
        assert!(!s.flag("word"));
        assert!(!s.flag("absent"));
    }

    #[test]
    fn override_is_typed() {
        let o = OverrideConfig::new(7u32);
        assert_eq!(o.get::<u32>(), Some(&7));
        assert_eq!(o.get::<i32>(), None);
        assert_eq!(format!("{o:?}"), "7");
    }
}
