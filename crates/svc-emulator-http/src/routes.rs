//! The emulator's own routes (`/_emulator/...`: health, the description, resets, snapshots,
//! the journal, stubs, the outbox), written once as svc-model's table writes the API's
//! ([`svc_model::routes`]). They sit at the listener's root, as the data host's routes do.
//! The router serves both tables, and a test checks both against `openapi.json`.

use svc_model::routes::Host::Data;
use svc_model::routes::Method::{Delete, Get, Post};
use svc_model::routes::Route;

macro_rules! routes {
    ($($(#[$doc:meta])* $name:ident = $id:literal, $method:ident $path:literal;)*) => {
        $(
            $(#[$doc])*
            pub const $name: Route = Route::new($id, $method, Data, $path);
        )*
        /// Every route of the emulator's own (the tests compare it with the router and
        /// `openapi.json`).
        pub const ALL: &[Route] = &[$($name),*];
    };
}

routes! {
    /// Whether the emulator is up.
    HEALTH = "health", Get "/_emulator/health";
    /// The OpenAPI description.
    OPENAPI = "openapi", Get "/_emulator/openapi.json";
    /// A project's data, back to its start.
    RESET = "reset", Post "/_emulator/projects/{project}/reset";
    /// A project's snapshots.
    LIST_SNAPSHOTS = "listSnapshots", Get "/_emulator/projects/{project}/snapshots";
    /// A new snapshot.
    SAVE_SNAPSHOT = "saveSnapshot", Post "/_emulator/projects/{project}/snapshots";
    /// A snapshot's data, restored.
    RESTORE_SNAPSHOT = "restoreSnapshot", Post "/_emulator/projects/{project}/snapshots/{name}/restore";
    /// A snapshot, forgotten.
    DELETE_SNAPSHOT = "deleteSnapshot", Delete "/_emulator/projects/{project}/snapshots/{name}";
    /// A project's data, exported.
    EXPORT_PROJECT = "exportProject", Get "/_emulator/projects/{project}/export";
    /// The emails the project's account routes sent.
    OUTBOX = "outbox", Get "/_emulator/projects/{project}/outbox";
    /// A service token for the project.
    SERVICE_TOKEN = "serviceToken", Post "/_emulator/projects/{project}/service_token";
    /// The project's counters.
    STATS = "stats", Get "/_emulator/projects/{project}/stats";
    /// The journal's requests.
    LIST_RECORDED_REQUESTS = "listRecordedRequests", Get "/_emulator/projects/{project}/requests";
    /// The journal, emptied.
    CLEAR_RECORDED_REQUESTS = "clearRecordedRequests", Delete "/_emulator/projects/{project}/requests";
    /// A check of the journal against an expectation.
    CHECK_RECORDED_REQUESTS = "checkRecordedRequests", Get "/_emulator/projects/{project}/requests/expect";
    /// The project's stubs.
    LIST_STUBS = "listStubs", Get "/_emulator/projects/{project}/stubs";
    /// A new stub.
    CREATE_STUB = "createStub", Post "/_emulator/projects/{project}/stubs";
    /// Every stub, removed.
    CLEAR_STUBS = "clearStubs", Delete "/_emulator/projects/{project}/stubs";
    /// A stub, removed.
    DELETE_STUB = "deleteStub", Delete "/_emulator/projects/{project}/stubs/{id}";
    /// A check of a stub's calls against an expectation.
    CHECK_STUB = "checkStub", Get "/_emulator/projects/{project}/stubs/{id}/expect";
}
