//! Device fingerprints: the first part of every cache key.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Identifies a device precisely enough that a tuned config is never applied to another one.
///
/// It combines the runtime name, the device name, the compute capability (or adapter
/// details), the driver version and the flint version. A cache copied to another GPU, or
/// read by another flint release, therefore misses instead of applying a foreign config.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "FingerprintParts", into = "FingerprintParts")]
pub struct DeviceFingerprint {
    parts: FingerprintParts,
    raw: [u8; 16],
    digest: String,
}

/// The serialised form of a [`DeviceFingerprint`]; the digest is derived, never stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FingerprintParts {
    runtime: String,
    device: String,
    compute: String,
    driver: String,
    flint: String,
}

impl DeviceFingerprint {
    /// A fingerprint for this flint release.
    ///
    /// `runtime` is the CubeCL runtime (`cuda`, `wgpu<wgsl>`, ...), `device` the adapter or
    /// GPU name, `compute` the compute capability or adapter details, `driver` the driver
    /// version.
    pub fn new(
        runtime: impl Into<String>,
        device: impl Into<String>,
        compute: impl Into<String>,
        driver: impl Into<String>,
    ) -> Self {
        Self::from(FingerprintParts {
            runtime: runtime.into(),
            device: device.into(),
            compute: compute.into(),
            driver: driver.into(),
            flint: env!("CARGO_PKG_VERSION").to_string(),
        })
    }

    /// The runtime name.
    pub fn runtime(&self) -> &str {
        &self.parts.runtime
    }

    /// The device name.
    pub fn device(&self) -> &str {
        &self.parts.device
    }

    /// The compute capability or adapter details.
    pub fn compute(&self) -> &str {
        &self.parts.compute
    }

    /// The driver version.
    pub fn driver(&self) -> &str {
        &self.parts.driver
    }

    /// The flint version the fingerprint was made by.
    pub fn flint_version(&self) -> &str {
        &self.parts.flint
    }

    /// The digest's 16 bytes (the hex digest, undecoded).
    pub fn raw(&self) -> [u8; 16] {
        self.raw
    }

    /// A short, stable hex digest of every part; safe to use as a file name.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

impl From<FingerprintParts> for DeviceFingerprint {
    fn from(parts: FingerprintParts) -> Self {
        let mut hasher = Sha256::new();
        for part in [
            &parts.runtime,
            &parts.device,
            &parts.compute,
            &parts.driver,
            &parts.flint,
        ] {
            // Length-prefix each part so that ("ab", "c") and ("a", "bc") differ.
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        let hash = hasher.finalize();
        let mut raw = [0u8; 16];
        raw.copy_from_slice(&hash[..16]);
        Self {
            parts,
            raw,
            digest: hex16(&raw),
        }
    }
}

impl From<DeviceFingerprint> for FingerprintParts {
    fn from(fp: DeviceFingerprint) -> Self {
        fp.parts
    }
}

impl std::fmt::Display for DeviceFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / {} / driver {} / flint {}",
            self.parts.runtime,
            self.parts.device,
            self.parts.compute,
            self.parts.driver,
            self.parts.flint
        )
    }
}

/// The first 16 bytes of a digest as lowercase hex (128 bits: collisions are not a concern).
pub(crate) fn hex16(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_stable_and_part_sensitive() {
        let a = DeviceFingerprint::new("cuda", "NVIDIA H100", "sm_90", "12.4");
        let b = DeviceFingerprint::new("cuda", "NVIDIA H100", "sm_90", "12.4");
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.digest().len(), 32);
        let other = DeviceFingerprint::new("cuda", "NVIDIA A100", "sm_80", "12.4");
        assert_ne!(a.digest(), other.digest());
        let shifted = DeviceFingerprint::new("cud", "aNVIDIA H100", "sm_90", "12.4");
        assert_ne!(a.digest(), shifted.digest());
    }

    #[test]
    fn round_trips_through_yaml() {
        let a = DeviceFingerprint::new("wgpu<wgsl>", "llvmpipe", "cpu", "mesa 22.3");
        let text = serde_yaml::to_string(&a).unwrap();
        let back: DeviceFingerprint = serde_yaml::from_str(&text).unwrap();
        assert_eq!(a, back);
        assert_eq!(a.digest(), back.digest());
    }
}
