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

// The slices, the web page and the runtime, over the emulator's layers below, each a crate of
// its own so that Cargo holds their order: svc-engine (the engine's rules), svc-emulator-core
// (the `Backend` trait, the flows, the shared SQL), the databases (svc-emulator-sqlite, and
// behind their features svc-emulator-postgres and svc-emulator-mysql, which only `databases`
// names), svc-emulator-state (settings, meta store, catalog, sessions, snapshots; no database
// crate: the catalog opens resources through `databases`) and svc-emulator-http (app state,
// errors, extractors, credentials, journal, stubs). The slices (one per operation group, named
// like svc-api's modules) never import each other; `runtime` starts the server. Only `cli`
// imports clap.
mod databases;
mod runtime;
mod ui;

// Slices: one per operation group, and the emulator's description.
mod account;
mod actions;
mod fixture;
mod openapi;
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

pub use runtime::EmulatorError;
pub use runtime::faults::{FaultCounts, Faults};
pub use runtime::handle::{Emulator, StartupInfo};
pub use svc_emulator_http::journal::{
    BodyContent, CapturedBody, RecordedRequest, RequestMatcher, RequestSource, Times,
    UnmetExpectation,
};
pub use svc_emulator_http::stubs::{StubBuilder, StubError, StubId, StubInfo};
pub use svc_emulator_state::config::EmulatorConfig;
pub use svc_emulator_state::config::actions::{ActionConfig, WorkflowConfig, WorkflowStep};
pub use svc_emulator_state::config::fixtures::{FixtureError, Fixtures, FixturesOnRows};
pub use svc_emulator_state::config::import::ImportOnRows;
pub use svc_emulator_state::config::lifetimes::TokenLifetimes;
pub use svc_emulator_state::config::limits::{IDLE_TIMEOUT, Limits, MAX_STUB_BYTES, MAX_STUBS};
pub use svc_emulator_state::config::projects::{
    ConfigError, ProjectConfig, ProjectsConfig, ResourceConfig,
};
pub use svc_emulator_state::config::proxy::ProxyConfig;
pub use svc_emulator_state::config::stubs::{
    MAX_STUB_DELAY, STUB_SHAPE, StubConfig, StubRequest, StubResponse,
};
pub use svc_emulator_state::demo::demo_seed_sql;
pub use svc_emulator_state::snapshot::files::{
    EXPORT_FORMAT, ProjectExport, ResourceExport, check_export_dir, export_dir_warning,
    write_export,
};
pub use svc_emulator_state::snapshot::{SnapshotError, SnapshotInfo};
pub use svc_emulator_state::storage::StoreRows;
pub use svc_emulator_state::storage::tools::SEEDED_TEAMS;
pub use svc_engine::types::{FieldInfo, FilterFamily, ModelInfo};
