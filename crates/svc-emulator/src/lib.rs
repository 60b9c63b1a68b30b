//! A local, stateful emulator of the svc REST API, for tests and offline development.
//!
//! Like Azurite for Azure Storage, it is a faithful stand-in, not a mock: it keeps state (in
//! memory or in a SQLite file), listens on loopback, and answers the same paths, status codes and
//! JSON shapes as the real service (see the crate README for its fidelity contract). One listener
//! serves both hosts: the data host at the root (`api_base_url`) and the application host under
//! `/api` (`app_base_url`).
//!
//! Start one in a test, talk to it over real HTTP, and drop it:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig};
//!
//! let emulator = Emulator::start(
//!     EmulatorConfig::default().projects(ProjectsConfig::new(vec![
//!         ProjectConfig::new("shop").environments(["prod", "staging"]).api_key("svc_key_test"),
//!     ])),
//! )
//! .await?;
//! assert_eq!(emulator.project().as_str(), "shop");
//! assert_eq!(emulator.environment().as_str(), "prod");
//! assert_eq!(emulator.api_key(), "svc_key_test");
//! // GET {app_base_url}/projects/shop/prod/view_settings/ with `Authorization: Bearer svc_key_test`
//! // now answers `[]`.
//! let url = format!("{}/projects/shop/prod/view_settings/", emulator.app_base_url());
//! # let _ = url;
//! emulator.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Or run the binary, which prints one JSON line ([`StartupInfo`]) when ready:
//!
//! ```text
//! $ svc-emulator --data ./emulator.sqlite
//! {"api_base_url":"http://127.0.0.1:40123","app_base_url":"http://127.0.0.1:40123/api",...}
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Layers, lowest first, over svc-engine (the engine's rules) and svc-emulator-core (the
// `Backend` trait, the flows, the shared SQL). `util`, `config` and `storage` import neither axum nor
// `http`; `http` is the router, app state, errors, extractors and credential checks; the slices
// (one per operation group, named like svc-api's modules) never import each other; `runtime`
// starts the server. Only `cli` imports clap.
mod catalog;
mod config;
mod demo;
mod http;
mod runtime;
mod sessions;
mod snapshot;
mod storage;
mod ui;
mod util;
// The databases, each a crate implementing `svc_emulator_core::backend::Backend`
// (svc-emulator-sqlite, and behind their features svc-emulator-postgres and
// svc-emulator-mysql): only `catalog::open` names them.

// Slices: one per operation group.
mod account;
mod actions;
mod fixture;
mod pages;
mod projects;
mod proxy;
mod records;
mod resources;
mod sql;
mod teams;
mod users;

#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;

pub use config::EmulatorConfig;
pub use config::actions::{ActionConfig, WorkflowConfig, WorkflowStep};
pub use config::fixtures::{FixtureError, Fixtures, FixturesOnRows};
pub use config::lifetimes::TokenLifetimes;
pub use config::limits::{IDLE_TIMEOUT, Limits};
pub use config::projects::{ConfigError, ProjectConfig, ProjectsConfig, ResourceConfig};
pub use config::proxy::ProxyConfig;
pub use config::stubs::{MAX_STUB_DELAY, STUB_SHAPE, StubConfig, StubRequest, StubResponse};
pub use demo::demo_seed_sql;
pub use http::journal::{
    BodyContent, CapturedBody, RecordedRequest, RequestMatcher, RequestSource, Times,
    UnmetExpectation,
};
pub use http::stubs::{StubBuilder, StubError, StubId, StubInfo};
pub use runtime::EmulatorError;
pub use runtime::faults::{FaultCounts, Faults};
pub use runtime::handle::{Emulator, StartupInfo};
pub use snapshot::files::{
    EXPORT_FORMAT, ImportOnRows, ProjectExport, ResourceExport, check_export_dir, write_export,
};
pub use snapshot::{SnapshotError, SnapshotInfo};
pub use storage::StoreRows;
pub use storage::tools::SEEDED_TEAMS;
pub use svc_engine::types::{FieldInfo, FilterFamily, ModelInfo};
