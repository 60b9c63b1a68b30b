//! Types of the svc REST API, with no I/O.
//!
//! `svc-model` is the vocabulary shared by the SDK ([`svc-api`](https://docs.rs/svc-api)) and the
//! local emulator ([`svc-emulator`](https://docs.rs/svc-emulator)): identifiers that always
//! encode into one path segment, the open JSON objects of the application host
//! ([`PageSettings`], [`Project`]), the data host's list envelope ([`ListPage`]), numbers that
//! the service sends as strings ([`Decimal`], [`number`]), and error bodies of any shape
//! ([`ErrorBody`]). It compiles without an async runtime or an HTTP stack, so a
//! project that only needs the types takes only this crate.
//!
//! ```
//! use svc_model::{PageUid, PageSettings};
//!
//! let uid = PageUid::new("orders/2026")?;
//! assert_eq!(uid.encoded(), "orders%2F2026"); // one path segment, whatever the text
//!
//! let page: PageSettings = serde_json::from_str(r#"{"uid": "orders/2026", "params": "{}"}"#)?;
//! assert_eq!(page.uid(), Some(uid.as_str()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod account;
pub mod connection;
pub mod error_body;
pub mod ident;
pub mod interop;
pub mod list;
pub mod number;
mod object;
pub mod page_settings;
pub mod project;
pub mod proxy;
pub mod records;
pub mod routes;
pub mod sql;
mod timestamp;
pub mod users;

pub use account::{AuthState, LoginRequest, LoginResponse, UserInfo};
pub use connection::ConnectionInfo;
pub use error_body::{ErrorBody, ErrorResponse};
pub use ident::{
    EnvironmentName, InvalidIdentifier, ModelName, PageUid, ProjectName, RecordPk, ResourceName,
};
pub use list::ListPage;
pub use number::{Decimal, InvalidNumber};
pub use page_settings::{PageSettings, UpdatePageSettings};
pub use project::{Project, ProjectEnvironment, ProjectResource};
pub use timestamp::{InvalidTimestamp, Timestamp};

// Compile the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
