//! Lists on the wire, shared by the records, users and teams slices: the URL their links start
//! from. How the query is read and the envelope written is the engine's
//! (`svc_engine::request`).

use axum::http::Uri;

use crate::AppState;

/// The absolute URL of a list without its query, for the `next` and `previous` links: the path
/// as the client wrote it, minus a trailing slash.
pub fn list_url(state: &AppState, uri: &Uri) -> String {
    format!(
        "{}{}",
        state.api_base_url(),
        uri.path().trim_end_matches('/')
    )
}
