//! The emulator-only request journal routes, authorized by the project's API key:
//! `GET /_emulator/projects/{project}/requests` lists the project's entries (filtered by the
//! query; the clients' only unless `source=ui` or `source=any`), `DELETE` clears them; `GET /_emulator/projects/{project}/requests/expect` checks an
//! expectation over them (the same filters, and `at_least`, `at_most` or `exactly`), answering
//! the near misses when it is not met. The journal itself is `svc_emulator_http::journal`.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Serialize;
use svc_model::Timestamp;

use super::ProjectPath;
use svc_emulator_http::journal::{
    Journal, Listed, RecordedRequest, RequestMatcher, RequestSource, Scope, StubId, Times, verify,
};
use svc_emulator_http::{AppState, HttpError, auth, routes, serve};
use svc_engine::request::query_pairs;

/// The routes.
pub(super) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_RECORDED_REQUESTS, list);
    let router = serve(router, &routes::CLEAR_RECORDED_REQUESTS, clear);
    serve(router, &routes::CHECK_RECORDED_REQUESTS, expect)
}

/// The query parameters the list reads.
const PARAMETERS: &str =
    "path, path_prefix, resource, model, since, method, status, source, stub, bodies";

/// The query parameters of an expectation's count, beside the filters.
pub(super) const TIMES: [&str; 3] = ["at_least", "at_most", "exactly"];

/// What the list's query asks for.
#[derive(Debug)]
struct Filters {
    matcher: RequestMatcher,
    bodies: bool,
}

fn filters(query: Option<&str>) -> Result<Filters, HttpError> {
    filters_of(query_pairs(query))
}

fn filters_of(pairs: Vec<(String, String)>) -> Result<Filters, HttpError> {
    let mut matcher = RequestMatcher::any();
    let mut bodies = false;
    for (name, value) in pairs {
        matcher = match name.as_str() {
            "path" => matcher.path(value),
            "path_prefix" => matcher.path_prefix(value),
            "resource" => matcher.resource(value),
            "model" => matcher.model(value),
            "since" => {
                let since = Timestamp::parse_rfc3339(&value)
                    .map_err(|e| HttpError::invalid_field("since", format!("{e}.")))?;
                matcher.since(since)
            }
            "method" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphabetic()) => {
                matcher.method(value)
            }
            "method" => {
                return Err(HttpError::invalid_field(
                    "method",
                    "A method is letters only, e.g. POST.",
                ));
            }
            "status" => matcher.status_range(status(&value)?),
            "source" => match value.as_str() {
                "client" => matcher.source(RequestSource::Client),
                "ui" => matcher.source(RequestSource::Ui),
                "any" => matcher.any_source(),
                _ => {
                    return Err(HttpError::invalid_field(
                        "source",
                        "One of client (the default), ui (the web page's requests) or any.",
                    ));
                }
            },
            "stub" => match value.parse::<u64>() {
                Ok(id) => matcher.answered_by(StubId(id)),
                Err(_) => {
                    return Err(HttpError::invalid_field(
                        "stub",
                        "A stub's number, e.g. 1 (GET /_emulator/projects/{project}/stubs lists them).",
                    ));
                }
            },
            "bodies" => {
                bodies = match value.as_str() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => {
                        return Err(HttpError::invalid_field("bodies", "Must be true or false."));
                    }
                };
                matcher
            }
            other => {
                return Err(HttpError::invalid(format!(
                    "Unknown query parameter {other:?}; the journal reads {PARAMETERS}."
                )));
            }
        };
    }
    Ok(Filters { matcher, bodies })
}

/// A status filter: a code (`201`) or a class (`4xx`).
fn status(value: &str) -> Result<std::ops::RangeInclusive<u16>, HttpError> {
    let invalid = || {
        HttpError::invalid_field(
            "status",
            "A status code from 100 to 599 (e.g. 201) or a class (e.g. 4xx).",
        )
    };
    if let [digit @ b'1'..=b'5', x, y] = value.as_bytes()
        && x.eq_ignore_ascii_case(&b'x')
        && y.eq_ignore_ascii_case(&b'x')
    {
        let class = u16::from(digit - b'0');
        return Ok(class * 100..=class * 100 + 99);
    }
    match value.parse::<u16>() {
        Ok(code) if (100..=599).contains(&code) && value.len() == 3 => Ok(code..=code),
        _ => Err(invalid()),
    }
}

/// `{"requests": [...], "dropped": n}`.
#[derive(Serialize)]
struct Listing<'a> {
    requests: Vec<Listed<'a>>,
    dropped: u64,
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let Filters { matcher, bodies } = filters(query.as_deref())?;
    let journal = state.journal();
    no_bodies_kept(bodies, journal)?;
    let (records, dropped) = project_records(journal, entry.name.as_str(), bodies, &matcher);
    let requests = records
        .iter()
        .filter(|r| matcher.matches(r))
        .map(|r| Listed::new(r, bodies))
        .collect();
    Ok(Json(Listing { requests, dropped }).into_response())
}

/// An expectation's count from the query: `at_least=1` when none is given.
pub(super) fn times(pairs: &[(String, String)]) -> Result<Times, HttpError> {
    let mut times = None;
    for (name, value) in pairs {
        let n: usize = value.parse().map_err(|_| {
            HttpError::invalid_field(name, "A count of requests: 0 or more, e.g. 1.")
        })?;
        if times.is_some() {
            return Err(HttpError::invalid(format!(
                "Give one of {} (the count of requests expected), not several.",
                TIMES.join(", ")
            )));
        }
        times = Some(match name.as_str() {
            "at_most" => Times::at_most(n),
            "exactly" => Times::exactly(n),
            _ => Times::at_least(n),
        });
    }
    Ok(times.unwrap_or(Times::at_least(1)))
}

/// `{"met", "expected", "report", "matched", "near_misses"}`: `report` is what
/// [`Emulator::assert_received`](crate::Emulator) would panic with (empty when met).
#[derive(Serialize)]
struct Checked<'a> {
    met: bool,
    expected: String,
    report: String,
    matched: Vec<Listed<'a>>,
    near_misses: Vec<Listed<'a>>,
}

async fn expect(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let (counts, pairs): (Vec<_>, Vec<_>) = query_pairs(query.as_deref())
        .into_iter()
        .partition(|(name, _)| TIMES.contains(&name.as_str()));
    let times = times(&counts)?;
    let Filters { matcher, bodies } = filters_of(pairs)?;
    checked(&state, entry.name.as_str(), &matcher, times, bodies)
}

/// The answer of an expectation that `times` requests of `project` match `matcher`.
pub(super) fn checked(
    state: &AppState,
    project: &str,
    matcher: &RequestMatcher,
    times: Times,
    bodies: bool,
) -> Result<Response, HttpError> {
    let journal = state.journal();
    no_bodies_kept(bodies, journal)?;
    let (records, dropped) = project_records(journal, project, bodies, matcher);
    let expected = format!("{times} matching {matcher}");
    let body = match verify(matcher, times, records, dropped, journal.keeps_bodies()) {
        Ok(matched) => Json(Checked {
            met: true,
            expected,
            report: String::new(),
            matched: listed(&matched, bodies),
            near_misses: Vec::new(),
        })
        .into_response(),
        Err(unmet) => Json(Checked {
            met: false,
            expected,
            report: unmet.to_string(),
            matched: listed(unmet.matched(), bodies),
            near_misses: listed(unmet.near_misses(), bodies),
        })
        .into_response(),
    };
    Ok(body)
}

/// The project's requests in the journal that arrived in `matcher`'s time window, oldest
/// first, and how many of its older ones were dropped.
fn project_records(
    journal: &Journal,
    project: &str,
    bodies: bool,
    matcher: &RequestMatcher,
) -> (Vec<RecordedRequest>, u64) {
    match journal.project_index(project) {
        Some(index) => (
            journal.records_for(Scope::Project(index), bodies, matcher),
            journal.dropped(Scope::Project(index)),
        ),
        None => (Vec::new(), 0),
    }
}

/// `bodies=true` while the journal keeps none: a `400` that says how to keep them.
fn no_bodies_kept(bodies: bool, journal: &Journal) -> Result<(), HttpError> {
    if bodies && !journal.keeps_bodies() {
        return Err(HttpError::invalid_field(
            "bodies",
            "The journal keeps no bodies: start the emulator with --journal-bodies \
             (EmulatorConfig::journal_bodies(true)).",
        ));
    }
    Ok(())
}

fn listed(all: &[RecordedRequest], bodies: bool) -> Vec<Listed<'_>> {
    all.iter().map(|r| Listed::new(r, bodies)).collect()
}

async fn clear(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let journal = state.journal();
    if let Some(index) = journal.project_index(entry.name.as_str()) {
        journal.clear(Scope::Project(index));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_from_the_query() {
        let f = filters(Some(
            "path_prefix=%2Fprojects%2F&method=post&status=2xx&bodies=1",
        ))
        .unwrap();
        assert!(f.bodies);
        assert_eq!(
            f.matcher,
            RequestMatcher::post()
                .path_prefix("/projects/")
                .status_range(200..=299)
        );
        let f = filters(Some("status=5Xx")).unwrap();
        assert_eq!(f.matcher, RequestMatcher::any().status_range(500..=599));
        let f = filters(Some("since=2026-01-01T00:00:00Z&status=404")).unwrap();
        assert!(!f.bodies);
        assert_eq!(
            f.matcher,
            RequestMatcher::any()
                .since("2026-01-01T00:00:00Z".parse().unwrap())
                .status(404)
        );
        assert!(filters(None).is_ok());
    }

    #[test]
    fn bad_filters_are_400_naming_the_parameter() {
        for (query, field) in [
            ("since=yesterday", "since"),
            ("status=abc", "status"),
            ("status=600", "status"),
            ("status=0201", "status"),
            ("status=6xx", "status"),
            ("status=4x", "status"),
            ("status=4xxx", "status"),
            ("bodies=yes", "bodies"),
            ("method=", "method"),
            ("method=GET%20X", "method"),
        ] {
            let err = filters(Some(query)).unwrap_err();
            assert_eq!(err.status(), StatusCode::BAD_REQUEST, "{query}");
            assert!(
                err.body().error.starts_with(field),
                "{query}: {:?}",
                err.body()
            );
        }
        let err = filters(Some("path-prefix=/x")).unwrap_err();
        assert!(
            err.body().error.contains("\"path-prefix\""),
            "{:?}",
            err.body()
        );
    }
}
