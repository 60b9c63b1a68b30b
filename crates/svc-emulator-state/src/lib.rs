//! The state of [svc-emulator](https://docs.rs/svc-emulator): its settings, its meta store
//! (page settings, accounts, project state), the catalog of the resources it serves and the
//! database each is opened on, user sessions, and snapshots. No HTTP.
//!
//! **An implementation crate of svc-emulator**, published so that Cargo holds its layers: its
//! API follows the emulator's and may change in any release. Depend on `svc-emulator`, not on
//! this crate. The settings and snapshot types that svc-emulator re-exports (`EmulatorConfig`,
//! `ProjectConfig`, `StubResponse`, `SnapshotInfo`, ...) are svc-emulator's API, which its
//! semver check holds; the rest of this crate is not.
//!
//! Layers, lowest first (each module imports only those before it):
//! - [`util`] and [`demo`]: timestamps; the demo resource's seed;
//! - [`config`]: the emulator's settings, as users write them;
//! - [`storage`]: the meta store (SQLite) of page settings, accounts and project state;
//! - [`catalog`]: the resources served, each opened through [`catalog::Databases`] (which
//!   svc-emulator implements: it names the database crates, this crate does not);
//! - [`sessions`] and [`snapshot`]: user sessions; a project's state saved and put back.
//!
//! No HTTP stack and no database crate: Cargo holds that, since this crate depends on none. The
//! doc tests check that the HTTP layer, the emulator and a database cannot be named here:
//!
//! ```compile_fail
//! use axum::Router;
//! ```
//!
//! ```compile_fail
//! use svc_emulator_http::AppState;
//! ```
//!
//! ```compile_fail
//! use svc_emulator_sqlite::Resource;
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod catalog;
pub mod config;
pub mod demo;
pub mod sessions;
pub mod snapshot;
pub mod storage;
pub mod util;
