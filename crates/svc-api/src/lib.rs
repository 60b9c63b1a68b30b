//! The Rust SDK for the svc REST API.
//!
//! A [`Client`] talks to both hosts of the service: the application host (projects, page
//! settings, the HTTP proxy) and the data host (records, SQL, users, teams, resources, actions,
//! workflows, sessions). Each operation group is a method on the client returning a small handle, and
//! each sits behind a Cargo feature of the same name, all on by default:
//!
//! | Feature | Handle | Operations |
//! | --- | --- | --- |
//! | `pages` | [`Client::pages`] | list, create, get, update, delete page settings, published or draft |
//! | `projects` | [`Client::projects`] | get a project |
//! | `records` | [`Client::records`] | list (one page, all, a stream across pages), get, create, update, delete, aggregate, group; bulk creates and keyed upserts with bounded concurrency |
//! | `sql` | [`Client::sql`] | one read-only query with named parameters; rows as your own types or JSON maps |
//! | `users` | [`Client::users`] | list (one page, all, a stream), get, create, change team, delete |
//! | `teams` | [`Client::teams`] | list, get, rename |
//! | `resources` | [`Client::resources`] | reload a resource's structure, or the built-in tools resource's |
//! | `actions` | [`Client::action`] | run a resource's action with its inputs; the result as your own type or JSON |
//! | `workflows` | [`Client::workflow`] | run a project's workflow with its inputs; a failed run is an error ([`Error::Workflow`]) carrying the server's reason |
//! | `proxy` | [`Client::proxy`] | a request to another service through the HTTP proxy, with the session or service token; the upstream's status, headers and body |
//! | `account` | [`Client::account`] | login, authentication check, logout, register, password and email changes, headers |
//!
//! Reading one item is `get` everywhere (`retrieve`, the service documentation's word for
//! records, users and teams, is kept as an alias).
//!
//! `default-transport` (on by default) brings the pooled hyper + rustls transport; without it,
//! give the builder your own [`Transport`](svc_transport::Transport).
//!
//! ```no_run
//! # async fn run() -> Result<(), svc_api::Error> {
//! let client = svc_api::Client::builder()
//!     .project("acme")
//!     .api_key("svc_key_...")
//!     .app_base_url("https://app.example.com/api")
//!     .build()?;
//! let pages = client.pages().list().await?;
//! println!("{} pages", pages.len());
//! # Ok(()) }
//! ```
//!
//! Errors are one type, [`Error`], which says whether the request was sent, carries the status
//! and the raw body of error answers, and never prints credentials. Idempotent requests are
//! retried on connection failures, `429`, `502`, `503` and `504` ([`RetryPolicy`]); creates,
//! updates, actions and workflow runs only when they certainly were not sent. Each handle takes
//! per-call options over the client's settings: a timeout, a retry policy, an idempotency
//! override and extra headers (`CallOptions`, through the handle's `options` method).
//!
//! More features: `tower` (tower middleware around the transport, `transport::tower`), and
//! `chrono`, `time`, `jiff` and `rust_decimal` (those crates' types as record fields and filter
//! values, `model::interop`).
//!
//! # Guides
//!
//! [Quickstart](https://github.com/svc-rs/svc-rs/blob/main/docs/quickstart.md) ·
//! [Pagination](https://github.com/svc-rs/svc-rs/blob/main/docs/pagination.md) ·
//! [Authentication](https://github.com/svc-rs/svc-rs/blob/main/docs/auth.md) ·
//! [SQL](https://github.com/svc-rs/svc-rs/blob/main/docs/sql.md) ·
//! [Proxy](https://github.com/svc-rs/svc-rs/blob/main/docs/proxy.md) ·
//! [Custom transports, proxies and certificates](https://github.com/svc-rs/svc-rs/blob/main/docs/custom-transport.md) ·
//! [The emulator](https://github.com/svc-rs/svc-rs/blob/main/docs/emulator.md) ·
//! [Client behaviour](https://github.com/svc-rs/svc-rs/blob/main/docs/client-behaviour.md) ·
//! [Wire contract](https://github.com/svc-rs/svc-rs/blob/main/docs/contract.md) ·
//! [Changelog](https://github.com/svc-rs/svc-rs/blob/main/CHANGELOG.md)
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod error;
// The request machinery: only operation groups send anything.
#[cfg(feature = "_sends")]
mod prepared;
// Kept by every call, made by the groups that name a resource or a project.
#[cfg(feature = "_sends")]
#[cfg_attr(not(feature = "full"), allow(dead_code))]
mod name;
// Per-call options, which only handles that send take.
#[cfg(feature = "_sends")]
mod options;
#[cfg(feature = "_sends")]
mod request;
mod retry;
// Credentials that depend on the session: only groups whose calls may carry one.
#[cfg(feature = "_session")]
mod session;
mod sleep;
// The `{"data": {...}}` body that actions and workflow runs share.
#[cfg(any(feature = "actions", feature = "workflows"))]
mod inputs;
// The operation and attempt spans.
#[cfg(feature = "_sends")]
mod spans;
// Building URLs. Its items are used by different groups (`Url::encoded_segment`: all but
// `proxy` and `account`; `Url::slash`: `pages`, `projects`, `proxy`; `Url::query`: `records`,
// `users`, `teams`; `Client::app_project_url`: `pages`) and are not gated one by one yet, so
// builds without `full` allow their dead code here, in this module only. The build with every
// group, which CI lints with `-D warnings`, still reports any.
#[cfg(feature = "_sends")]
#[cfg_attr(not(feature = "full"), allow(dead_code))]
mod url;

#[cfg(feature = "account")]
mod account;
#[cfg(feature = "actions")]
mod actions;
#[cfg(feature = "pages")]
mod pages;
#[cfg(feature = "projects")]
mod projects;
// Users and teams are records of the built-in tools resource: they reuse the records machinery.
#[cfg(feature = "proxy")]
mod proxy;
#[cfg(any(feature = "records", feature = "users", feature = "teams"))]
mod records;
#[cfg(feature = "resources")]
mod resources;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "teams")]
mod teams;
#[cfg(feature = "users")]
mod users;
#[cfg(feature = "workflows")]
mod workflows;

pub use client::{Client, ClientBuilder};
pub use error::{ApiError, DecodeError, Error, InvalidInput, Result, Sent, WorkflowError};
#[cfg(feature = "_sends")]
pub use options::CallOptions;
pub use retry::RetryPolicy;
pub use sleep::{Sleep, TokioSleep};

#[cfg(feature = "account")]
pub use account::{Account, AuthStatus};
#[cfg(feature = "actions")]
pub use actions::Action;
#[cfg(feature = "pages")]
pub use pages::Pages;
#[cfg(feature = "projects")]
pub use projects::Projects;
#[cfg(feature = "proxy")]
pub use proxy::{Proxy, ProxyRequestBuilder, ProxyResponse};
#[cfg(any(feature = "records", feature = "users", feature = "teams"))]
pub use records::RecordStream;
#[cfg(feature = "records")]
pub use records::{Bulk, Existing, Outcome, RawRecord, Record, RecordText, Records, Written};
#[cfg(feature = "resources")]
pub use resources::Resources;
#[cfg(feature = "sql")]
pub use sql::{MAX_SQL_LIMIT, Sql, SqlQuery};
#[cfg(feature = "teams")]
pub use teams::Teams;
#[cfg(feature = "users")]
pub use users::Users;
#[cfg(feature = "workflows")]
pub use workflows::{Workflow, WorkflowResponse};

// Compile the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Re-exports of the crates this one stands on, so one dependency is enough.
pub use svc_auth as auth;
pub use svc_model as model;
pub use svc_transport as transport;

// The vocabulary of this crate's signatures, re-exported so that code using them needs no
// dependency of its own (and cannot pick a version that does not match).
/// Body bytes ([`bytes::Bytes`]), as custom transports and raw answers carry them.
pub use bytes;
/// HTTP types ([`http::Method`], [`http::HeaderMap`], [`http::StatusCode`], ...), as the proxy,
/// custom transports and errors use them.
pub use http;
/// JSON values ([`serde_json::Value`], the [`serde_json::json!`] macro): records are JSON
/// objects ([`Record`]).
pub use serde_json;

/// What most programs use, in one import: `use svc_api::prelude::*;`.
///
/// The client and its errors, the records query builder, and the stream traits that give
/// [`RecordStream`] its `next`, `try_next` and `try_collect`.
///
/// ```no_run
/// use svc_api::prelude::*;
///
/// # async fn run(client: Client) -> Result<()> {
/// let mut orders = client.records("shop", "orders").stream(ListQuery::new().order_by("id"))?;
/// while let Some(order) = orders.try_next().await? {
///     println!("{}", order["id"]);
/// }
/// # Ok(()) }
/// ```
pub mod prelude {
    #[cfg(any(feature = "records", feature = "users", feature = "teams"))]
    pub use crate::RecordStream;
    pub use crate::{Client, ClientBuilder, Error, Result};
    #[cfg(feature = "records")]
    pub use crate::{Record, Records};
    pub use futures_util::{StreamExt as _, TryStreamExt as _};
    pub use svc_model::records::{ListQuery, Lookup};
}
