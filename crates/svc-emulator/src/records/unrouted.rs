//! The methods a records path does not take, answered as the data engine answers them
//! (jet-bridge 1.12.13 on Tornado 5.1; docs/contract.md 5.1, "Methods").
//!
//! The engine's router (`jet_bridge/router.py`) gives each of its paths a handler on which the
//! view methods `get`, `post`, `put`, `patch` and `delete` all exist
//! (`jet_bridge/handlers/view.py`, `BaseViewHandler`): those the path maps run its action, the
//! others run the view set's `dispatch` with the method's own name, after the request is read
//! (a body that is not JSON: `400`) and the credentials checked (`before_dispatch`: `403`).
//! The view set has no `get`, `post` nor `delete` (`dispatch` raises `NotFound`: `404`), but
//! it has `put` and `patch` (`UpdateAPIViewMixin`), which run its update: without a record key
//! in the path it fails (`500`; an unknown model is `404` first), and under
//! `{pk}/get_siblings` it writes the record and then fails (`put` returns no answer). `HEAD`
//! is Tornado's own (`RequestHandler.head` raises its `405`, which the view's error page turns
//! into a `500`), and so is a method Tornado does not take (`TRACE`, `FOO`), whatever the
//! credentials. `OPTIONS` is `204` on every path (`BaseViewHandler.options`), which the CORS
//! layer answers before any route is matched (`svc_emulator_http::cors`).

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, head};
use svc_emulator_http::extract::{ModelAccess, RecordAccess};
use svc_emulator_http::{AppState, HttpError, route_with_optional_slash};
use svc_engine::EngineError;
use svc_engine::request::query_pairs;
use svc_model::routes;

/// Whether a path of the engine's has a record key (its router's `detail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// No key: the model's list and the view set's extra actions beside it.
    Model,
    /// `{pk}` and the extra actions of one record.
    Record,
}

/// One path of the engine's router below `models/{model}/`, with the methods it maps to an
/// action of the view set.
#[derive(Debug)]
struct EnginePath {
    /// The path below the model (`""` for the model's own).
    tail: &'static str,
    kind: Kind,
    /// The methods the path maps to an action.
    maps: &'static [&'static str],
    /// `HEAD` is answered here; the extra actions' routes (`super::extra`) route it to
    /// [`super::head_refused`] themselves.
    head: bool,
}

/// Every path the engine's router registers for the model view set (`register`: the extra
/// actions of no record under `''` and `get_records`, those of a record under `{pk}/`, then
/// the routes `''`, `get_records` and `{pk}/`, the first match winning).
const PATHS: &[EnginePath] = &[
    EnginePath {
        tail: "",
        kind: Kind::Model,
        maps: &["GET", "POST"],
        head: true,
    },
    EnginePath {
        tail: "get_records",
        kind: Kind::Model,
        maps: &["POST"],
        head: true,
    },
    EnginePath {
        tail: "aggregate",
        kind: Kind::Model,
        maps: &["GET"],
        head: true,
    },
    EnginePath {
        tail: "group",
        kind: Kind::Model,
        maps: &["GET"],
        head: true,
    },
    EnginePath {
        tail: "bulk_create",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "reorder",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "reset_order",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "get_records/aggregate",
        kind: Kind::Model,
        maps: &["GET"],
        head: true,
    },
    EnginePath {
        tail: "get_records/group",
        kind: Kind::Model,
        maps: &["GET"],
        head: true,
    },
    EnginePath {
        tail: "get_records/bulk_create",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "get_records/reorder",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "get_records/reset_order",
        kind: Kind::Model,
        maps: &["POST"],
        head: false,
    },
    EnginePath {
        tail: "{pk}",
        kind: Kind::Record,
        maps: &["GET", "PUT", "PATCH", "DELETE"],
        head: true,
    },
    EnginePath {
        tail: "{pk}/get_siblings",
        kind: Kind::Record,
        maps: &["GET"],
        head: false,
    },
];

/// The view methods of the engine's handlers, in the order an `Allow` header lists them.
const VIEW_METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// Adds, on every path of [`PATHS`], the answer to every method the emulator routes nowhere
/// there, and to `HEAD` where [`EnginePath::head`] says so (axum would answer it with the `GET`
/// route's head). A path's routes merge with it whatever the order they are added in; none of
/// them may route `HEAD` where this does.
pub(super) fn routes(router: Router<AppState>) -> Router<AppState> {
    PATHS.iter().fold(router, |router, path| {
        let handler = move |State(state): State<AppState>, request: Request| async move {
            answer(&state, path, request).await
        };
        let method_router = if path.head {
            head(handler).fallback(handler)
        } else {
            MethodRouter::new().fallback(handler)
        };
        route_with_optional_slash(router, &full_path(path.tail), method_router)
    })
}

/// The path's template, as the router and svc-model's table write it.
fn full_path(tail: &str) -> String {
    let model = routes::LIST_RECORDS.path();
    if tail.is_empty() {
        model.to_owned()
    } else {
        format!("{model}/{tail}")
    }
}

/// The answer to a method `path` does not route, with `Allow` listing what it takes.
async fn answer(state: &AppState, path: &'static EnginePath, request: Request) -> Response {
    let method = request.method().clone();
    let answer = if method == Method::OPTIONS {
        // Answered before routing (`cors`); the engine's `options` if it ever gets here.
        Ok(StatusCode::NO_CONTENT.into_response())
    } else if VIEW_METHODS.contains(&method.as_str()) {
        view_method(state, path, request).await
    } else {
        Err(server_fails(state, &method))
    };
    let mut response = answer.unwrap_or_else(IntoResponse::into_response);
    // On every answer, as axum would add its own list (of the routes, `HEAD` among them).
    if let Ok(allow) = HeaderValue::from_str(&allowed(path)) {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}

/// The methods `path` answers: what the engine maps there and what svc-model's table serves.
fn allowed(path: &EnginePath) -> String {
    let full = full_path(path.tail);
    VIEW_METHODS
        .into_iter()
        .filter(|m| {
            path.maps.contains(m)
                || routes::ALL
                    .iter()
                    .any(|r| r.path() == full && r.method().as_str() == *m)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `GET`, `POST`, `PUT`, `PATCH` or `DELETE` where the emulator routes none: the engine's
/// view set's `dispatch` of the method's name, after the credential check. (The refusal of
/// `X-HTTP-Method-Override: OPTIONS` is in front of it, as of every records route.)
async fn view_method(
    state: &AppState,
    path: &'static EnginePath,
    request: Request,
) -> Result<Response, HttpError> {
    let method = request.method().clone();
    if path.maps.contains(&method.as_str()) {
        // An action of the engine's that the emulator does not serve: its departure
        // (docs/contract.md 5.1).
        return Err(HttpError::method_not_allowed().with_field(
            "non_field_errors",
            format!(
                "{method} .../models/{{model}}/{} is not served by the emulator.",
                path.tail
            ),
        ));
    }
    let (parts, body) = request.into_parts();
    match path.kind {
        Kind::Model => on_model(state, path, method, parts, body).await,
        Kind::Record => on_record(state, path, method, parts, body).await,
    }
}

fn is_update(method: &Method) -> bool {
    *method == Method::PUT || *method == Method::PATCH
}

/// A method a path of no record does not route: `PUT` and `PATCH` fail (the update runs
/// without a key), the others are no action of the view set (`404`).
async fn on_model(
    state: &AppState,
    path: &EnginePath,
    method: Method,
    mut parts: Parts,
    body: Body,
) -> Result<Response, HttpError> {
    let ModelAccess { db, model } = ModelAccess::from_request_parts(&mut parts, state).await?;
    // The engine reads the request before its views run: a JSON body that is not JSON is its
    // `400` whatever the route.
    super::read_engine_body(state, &parts.headers, body).await?;
    if !is_update(&method) {
        return Err(no_action(&method, path));
    }
    // The update looks the model up, then reads the request's filters as a list does (its
    // `get_object`), before it misses the key: a filter the engine refuses is its answer.
    if !db.has_model(&model) {
        return Err(db.reply(EngineError::ModelNotFound(model)));
    }
    let selection = super::selection(&query_pairs(parts.uri.query()), state.lenient());
    db.check_filters(model, selection).await?;
    let message = format!(
        "{method} on .../models/{{model}}/{} makes the data engine fail (500: its update runs \
         without a record key); update a record at .../models/{{model}}/{{pk}}.",
        path.tail
    );
    // [decision: stricter] `405`, marked; lenient mode answers the engine's `500`.
    if state.lenient() {
        return Err(EngineError::engine_fails(true, "non_field_errors", message).into());
    }
    Err(HttpError::method_not_allowed()
        .with_field("non_field_errors", message)
        .stricter())
}

/// A method a record's path does not route (`POST {pk}`, all but `GET` on `{pk}/get_siblings`):
/// `PUT` and `PATCH` run the record's update, which the engine answers with a failure after
/// writing; the others are no action of the view set (`404`).
async fn on_record(
    state: &AppState,
    path: &EnginePath,
    method: Method,
    mut parts: Parts,
    body: Body,
) -> Result<Response, HttpError> {
    let access = RecordAccess::from_request_parts(&mut parts, state).await?;
    let Parts { uri, headers, .. } = parts;
    if !is_update(&method) {
        super::read_engine_body(state, &headers, body).await?;
        return Err(no_action(&method, path));
    }
    let message = format!(
        "{method} on .../models/{{model}}/{{pk}}/{} makes the data engine update the record and \
         then fail (500); update it at .../models/{{model}}/{{pk}}.",
        path.tail.trim_start_matches("{pk}/")
    );
    if state.lenient() {
        // As the engine: written, then its failure.
        super::update(State(state.clone()), access, method, uri, headers, body).await?;
        return Err(EngineError::engine_fails(true, "non_field_errors", message).into());
    }
    // [decision: stricter] `405`, marked, where the update would find the record (the engine's
    // lookup, with the request's filters: its `404` otherwise); nothing is written.
    let RecordAccess { db, model, pk } = access;
    let pairs = query_pairs(uri.query());
    let known = db.has_model(&model);
    let selection = super::request_selection(state, known, &method, &headers, &pairs, body).await?;
    db.retrieve(model, pk, selection).await?;
    Err(HttpError::method_not_allowed()
        .with_field("non_field_errors", message)
        .stricter())
}

/// `GET`, `POST` or `DELETE` where the engine's view set has no such action (`404`).
fn no_action(method: &Method, path: &EnginePath) -> HttpError {
    HttpError::not_found(format!(
        "{method} is not answered on .../models/{{model}}/{}: the data engine's view set has \
         no such action there. It answers {}.",
        path.tail,
        path.maps.join(", ")
    ))
}

/// `HEAD`, or a method Tornado does not take: the engine's error page fails (`500`) whatever
/// the credentials. [decision: stricter] `405`, marked (in a header too: the answer to a
/// `HEAD` has no body); lenient mode answers the engine's `500`.
pub(super) fn server_fails(state: &AppState, method: &Method) -> HttpError {
    let message = if *method == Method::HEAD {
        "HEAD is not answered on records routes: the data engine fails (500) on it. Send GET."
            .to_owned()
    } else {
        format!(
            "{method} is not answered on records routes: the data engine fails (500) on a \
             method other than GET, POST, PUT, PATCH, DELETE and OPTIONS."
        )
    };
    if state.lenient() {
        return EngineError::engine_fails(true, "non_field_errors", message).into();
    }
    HttpError::method_not_allowed()
        .with_field("non_field_errors", message)
        .stricter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_the_engines_actions_and_the_tables_routes() {
        let find = |tail: &str| {
            PATHS
                .iter()
                .find(|p| p.tail == tail)
                .unwrap_or_else(|| panic!("{tail}"))
        };
        assert_eq!(allowed(find("")), "GET, POST");
        assert_eq!(allowed(find("aggregate")), "GET, POST");
        assert_eq!(allowed(find("get_records/aggregate")), "GET");
        assert_eq!(allowed(find("{pk}")), "GET, PUT, PATCH, DELETE");
    }

    #[test]
    fn every_records_route_of_the_table_is_a_path_of_the_engines() {
        let paths: Vec<String> = PATHS.iter().map(|p| full_path(p.tail)).collect();
        for route in routes::ALL {
            if route.path().contains("/{resource}/models/{model}")
                && !route.path().contains("__svc_app__")
            {
                assert!(paths.contains(&route.path().to_owned()), "{}", route.path());
            }
        }
    }
}
