//! What every database the emulator serves resources from implements, and the flows written
//! once over it: the `Backend` trait, each operation's steps, the SQL all databases write alike.
//!
//! **An implementation crate of [svc-emulator](https://docs.rs/svc-emulator)**, published so
//! that each database can be a crate of its own. Its API follows the emulator's and may change
//! in any release: depend on `svc-emulator`, not on this crate.
//!
//! Layers, lowest first (each module imports only those before it):
//! - [`dialect`]: SQL text, pure: what every database writes the same way, over the engine's
//!   rules (`svc_engine`);
//! - [`flow`]: each operation's flow, written once over the traits a database implements;
//! - [`backend`]: the `Backend` trait the emulator holds each resource by, written once over
//!   a database's `Schedule` (where it runs each `Operation` and its flow), and what the
//!   database servers share (`pooled`, [`Awaited`](backend::Awaited));
//! - beside them, [`private`] (data files only their owner reads), [`location`] (a
//!   database's location without its password) and [`blocking`] (work on the blocking pool).
//!
//! No HTTP and no database driver: Cargo holds that, since this crate depends on neither. The
//! doc tests check that they cannot be named here:
//!
//! ```compile_fail
//! use axum::Router;
//! ```
//!
//! ```compile_fail
//! use rusqlite::Connection;
//! ```
//!
//! ```compile_fail
//! use svc_emulator::Emulator;
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod backend;
pub mod blocking;
pub mod dialect;
pub mod flow;
pub mod location;
pub mod private;
