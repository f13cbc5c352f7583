//! Flint's op manifest: the contract of every op, checked against the code.
//!
//! `manifest/*.yaml` holds one entry per op: signature (inputs, outputs, params, dtypes,
//! shape rules), workloads, roofline formulas, tuning space and source paths. This crate
//! loads it ([`Manifest::load_dir`]), parses its expressions ([`Expr`]) and checks it
//! against the ops registered in code ([`validate`]).
//!
//! ```
//! use flint_manifest::Expr;
//! let rule = Expr::parse("H % Hkv == 0 && D in [64, 128]").unwrap();
//! let env = [("H", 32), ("Hkv", 8), ("D", 128)]
//!     .map(|(k, v)| (k.to_string(), flint_manifest::Val::Int(v)))
//!     .into();
//! assert_eq!(rule.eval(&env), Ok(flint_manifest::Val::Bool(true)));
//! ```
#![warn(missing_docs)]

mod expr;
mod load;
mod schema;
mod validate;

pub use expr::{Env, Expr, Val};
pub use load::{LoadError, LoadedEntry, MAX_MANIFEST_BYTES, Manifest};
pub use schema::{Entry, Param, ParamSpec, Roofline, Signature, Source, Workload, WorkloadValue};
pub use validate::{Finding, KNOWN_DTYPES, Level, env_of, validate};
