//! The emulator's web page, `/_emulator/ui/`: its projects, records, request journal, snapshots,
//! page settings and actions in a browser (docs/ui.md).
//!
//! It sits in front of the router ([`Front`]): a request under [`PREFIX`] is the page's, any
//! other goes to the API as before. The page is one HTML file, a script and a style sheet that
//! ship in the crate (`assets/`); it reads and changes the emulator only through the API's own
//! routes, which [`relay`] calls with the project's API key, so the browser never holds a key,
//! every change goes through the same flows a client's would, and the journal records it.
//!
//! Who may use it ([`guard`]): the holder of this run's sign-in token (in the `ui_url` printed at
//! start), exchanged for an `HttpOnly`, `SameSite=Strict` session cookie; only under the host
//! names the emulator serves (against DNS rebinding); and a change only from the page's own
//! origin.

mod assets;
mod guard;
mod overview;
mod relay;

use std::sync::Arc;

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;

pub(crate) use guard::Guard;
pub(crate) use overview::FixturesLoaded;
use svc_emulator_http::AppState;
use svc_emulator_http::capture::Journaled;

/// Where the page lives.
pub(crate) const PREFIX: &str = "/_emulator/ui";

/// What the server runs each request through: the page under [`PREFIX`], the API elsewhere.
#[derive(Clone)]
pub(crate) struct Front {
    api: Journaled,
    ui: Arc<Ui>,
}

/// The page's state: who may sign in, the sessions, what it shows.
pub(crate) struct Ui {
    guard: Guard,
    state: AppState,
    fixtures: Vec<FixturesLoaded>,
}

impl Ui {
    /// The page of the emulator whose state is `state`.
    pub(crate) fn new(guard: Guard, state: AppState, fixtures: Vec<FixturesLoaded>) -> Self {
        Self {
            guard,
            state,
            fixtures,
        }
    }

    /// Answers a request for the page. Every answer but the page's static files is kept out
    /// of caches (`no-store`: the overview, the relay's records and journal, a sign-in, a
    /// refusal), and none is sniffed for another type than the one it says.
    async fn answer(&self, api: Journaled, request: Request<Incoming>) -> Response<Body> {
        let asset = request
            .uri()
            .path()
            .strip_prefix(PREFIX)
            .is_some_and(|rest| rest.starts_with("/assets/"));
        let mut response = self.respond(api, request).await;
        let headers = response.headers_mut();
        headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        if !asset {
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        response
    }

    async fn respond(&self, api: Journaled, request: Request<Incoming>) -> Response<Body> {
        let headers = request.headers();
        if let Err(refused) = self.guard.host(headers, request.uri()) {
            return refused.into_response();
        }
        let path = request.uri().path().to_owned();
        let rest = path
            .strip_prefix(PREFIX)
            .unwrap_or_default()
            .trim_start_matches('/');
        if let Some(file) = rest.strip_prefix("assets/") {
            return assets::file(request.method(), file);
        }
        // A sign-in opens a page: the page's API takes its own queries as they are.
        let page = !rest.starts_with("api/");
        let read = matches!(*request.method(), Method::GET | Method::HEAD);
        if page
            && read
            && let Some(signed_in) = self.guard.sign_in(request.uri())
        {
            return signed_in;
        }
        if let Err(refused) = self.guard.session(headers, !page) {
            return refused.into_response();
        }
        if !read && let Err(refused) = self.guard.origin(headers, request.uri()) {
            return refused.into_response();
        }
        match rest.strip_prefix("api/") {
            Some("overview") => overview::answer(&self.state, &self.fixtures),
            Some(target) => match target.strip_prefix("relay/") {
                Some(target) => relay::call(&self.state, api, request, target.to_owned()).await,
                None => guard::json_error(StatusCode::NOT_FOUND, "No such route of the page."),
            },
            None => assets::page(request.method()),
        }
    }
}

impl Front {
    /// `api`, with the page `ui` in front of it.
    pub(crate) fn new(api: Journaled, ui: Arc<Ui>) -> Self {
        Self { api, ui }
    }

    /// Answers `request`: the page's, or the API's.
    pub(crate) async fn serve(self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path();
        if path != PREFIX && !path.starts_with("/_emulator/ui/") {
            return self.api.serve(request).await;
        }
        let Self { api, ui } = self;
        ui.answer(api, request).await
    }
}
