//! Credentials and configuration of the svc SDK.
//!
//! - [`Secret`]: a string that never prints.
//! - [`Credential`]: API keys (`Bearer`), resource tokens (raw) and session tokens (`JWT`), and
//!   how each is written into the `Authorization` header.
//! - [`EnvConfig`]: client settings from an explicit map of environment variables, with the
//!   JavaScript client's keys, precedence and draft parsing.
//!
//! ```
//! use svc_auth::{Credential, EnvConfig};
//! let cfg = EnvConfig::from_map(&std::collections::HashMap::from([("SVC_DRAFT", "yes")]));
//! assert_eq!(cfg.draft, Some(true));
//! let header = Credential::api_key("svc_key_1").header_value()?;
//! assert_eq!(header.to_str()?, "Bearer svc_key_1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod config;
mod credential;
mod secret;

pub use config::{EnvConfig, parse_draft};
pub use credential::{Credential, InvalidCredential};
pub use secret::Secret;

// Compile the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
