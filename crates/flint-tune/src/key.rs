//! Call keys: which invocations share one tuned config.

use std::fmt;
use std::hash::{Hash, Hasher};

use sha2::{Digest, Sha256};

use crate::Signature;
use crate::fingerprint::hex16;

/// A stable key over an op id, its version and a canonical (usually bucketed) signature.
///
/// Equality and hashing use the sha256 digest only; the canonical text is kept for people
/// reading the cache and the logs.
#[derive(Clone, Debug)]
pub struct CallKey {
    raw: [u8; 16],
    digest: String,
    canonical: String,
}

impl CallKey {
    /// The key of `signature` for version `version` of op `op`.
    pub fn new(op: &str, version: u32, signature: &Signature) -> Self {
        Self::from_canonical(op, version, signature.canonical())
    }

    /// The key whose signature has the canonical text `canonical` (as stored in a cache
    /// entry), without parsing it.
    pub fn from_canonical(op: &str, version: u32, canonical: impl Into<String>) -> Self {
        let canonical = canonical.into();
        let mut hasher = Sha256::new();
        hasher.update(op.as_bytes());
        hasher.update([0]);
        hasher.update(version.to_le_bytes());
        hasher.update(canonical.as_bytes());
        let hash = hasher.finalize();
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&hash[..16]);
        Self {
            raw,
            digest: hex16(&raw),
            canonical,
        }
    }

    /// The digest's 16 bytes (the hex digest, undecoded).
    pub fn raw(&self) -> [u8; 16] {
        self.raw
    }

    /// The hex digest (32 characters).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The canonical signature text the digest was computed from.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }
}

impl PartialEq for CallKey {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for CallKey {}

impl Hash for CallKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({})",
            &self.digest[..12.min(self.digest.len())],
            self.canonical
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig() -> Signature {
        Signature::new().with("len", 1024usize).with("dtype", "f32")
    }

    #[test]
    fn key_is_a_pinned_value() {
        // Pinned so that an accidental change of the hashing scheme (which would orphan
        // every cache on disk) fails here.
        let key = CallKey::new("scale", 1, &sig());
        assert_eq!(key.canonical(), "dtype=\"f32\";len=1024");
        assert_eq!(key.digest().len(), 32);
        assert_eq!(key, CallKey::new("scale", 1, &sig()));
        assert_eq!(key.digest(), PINNED_DIGEST);
    }

    // sha256(b"scale\0" + 1u32 LE + canonical), first 16 bytes, computed independently.
    const PINNED_DIGEST: &str = "899a1e6895aab3af4a98270419becc92";

    #[test]
    fn key_depends_on_op_version_and_signature() {
        let a = CallKey::new("scale", 1, &sig());
        assert_ne!(a, CallKey::new("scale", 2, &sig()));
        assert_ne!(a, CallKey::new("add", 1, &sig()));
        assert_ne!(a, CallKey::new("scale", 1, &sig().with("len", 2048usize)));
    }
}
