//! `GET /_emulator/openapi.json`: the OpenAPI 3.1 description of both hosts, the file
//! `crates/svc-emulator/openapi.json` of the repository, served as it is (no credential); and
//! `GET /_emulator/health`, the readiness route a script or a container's health check waits
//! for (no credential).
//!
//! The description cannot drift from the router: the test below compares its paths with the
//! path templates the router was built with, and asks the running emulator each path with every
//! method, expecting `405` exactly for the methods the description does not list.
//! `cargo xtask contract` checks the rest (parameters, bodies, status codes) with schemathesis.

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use svc_emulator_http::{AppState, routes, serve};

/// The description, as kept in the repository.
pub const OPENAPI_JSON: &str = include_str!("../openapi.json");

/// The route, on the data host.
pub fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::HEALTH, health);
    serve(router, &routes::OPENAPI, openapi)
}

/// `200 {"status": "ok", "version"}`: the emulator is up and every project is served (it
/// accepts connections only once its start is done).
async fn health() -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
    }))
    .into_response()
}

async fn openapi() -> Response {
    let mut response = (StatusCode::OK, OPENAPI_JSON).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde_json::Value;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::OPENAPI_JSON;
    use svc_emulator_http::routes;
    use svc_model::routes::Host;

    const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

    /// The description's operations: path (the app host's without `/api`) -> methods.
    fn described() -> BTreeMap<String, BTreeSet<String>> {
        let doc: Value = serde_json::from_str(OPENAPI_JSON).expect("openapi.json is JSON");
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["info"]["version"], "2026-09-15");
        doc["paths"]
            .as_object()
            .expect("paths")
            .iter()
            .map(|(path, item)| {
                let path = path.strip_prefix("/api").unwrap_or(path).to_owned();
                let methods = item
                    .as_object()
                    .expect("a path item")
                    .keys()
                    .filter(|k| METHODS.contains(&k.to_ascii_uppercase().as_str()))
                    .map(|k| k.to_ascii_uppercase())
                    .collect();
                (path, methods)
            })
            .collect()
    }

    /// The status of `method path` on the emulator at `addr`, without credentials.
    async fn status(addr: std::net::SocketAddr, method: &str, path: &str) -> u16 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: emulator\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let text = String::from_utf8_lossy(&answer);
        text.split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    /// The description's operations: `(operationId, method, path)`.
    fn operations() -> BTreeSet<(String, String, String)> {
        let doc: Value = serde_json::from_str(OPENAPI_JSON).expect("openapi.json is JSON");
        let mut operations = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("a path item") {
                let method = method.to_ascii_uppercase();
                if METHODS.contains(&method.as_str()) {
                    let id = op["operationId"]
                        .as_str()
                        .expect("an operationId")
                        .to_owned();
                    operations.insert((id, method, path.clone()));
                }
            }
        }
        operations
    }

    #[test]
    fn the_description_lists_exactly_the_routes_of_both_tables() {
        // The API's routes (svc-model's table, which the SDK builds its URLs from) and the
        // emulator's own: an SDK operation without a described route fails here, and so does
        // a described route that no table has.
        let tables: BTreeSet<(String, String, String)> = svc_model::routes::ALL
            .iter()
            .chain(routes::ALL)
            .map(|route| {
                let prefix = match route.host() {
                    Host::App => "/api",
                    Host::Data => "",
                };
                let path = format!("{prefix}{}", route.path().trim_end_matches('/'));
                (route.id().to_owned(), route.method().to_string(), path)
            })
            .collect();
        let described = operations();
        let missing: Vec<_> = tables.difference(&described).collect();
        let extra: Vec<_> = described.difference(&tables).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "routes openapi.json lacks: {missing:?}; described routes no table has: {extra:?}"
        );
    }

    #[tokio::test]
    async fn the_description_lists_exactly_the_routes_and_methods_served() {
        let emulator = crate::Emulator::start(crate::EmulatorConfig::default())
            .await
            .unwrap();
        let described = described();
        for (path, methods) in &described {
            // Each parameter gets a value that names something served, so that nothing but the
            // method can decide between 405 and another answer.
            let concrete = path
                .replace("{project}", "demo")
                .replace("{environment}", "prod")
                .replace("{resource}", "shop")
                .replace("{model}", "orders")
                .replace("{pk}", "1")
                .replace("{uid}", "x");
            let mut answered = false;
            for method in METHODS {
                for prefix in ["", "/api"] {
                    let full = format!("{prefix}{concrete}");
                    let got = status(emulator.local_addr(), method, &full).await;
                    if got == 404 {
                        continue; // the other host's prefix
                    }
                    answered = true;
                    // On a records path the data engine answers a method it routes nowhere
                    // there after its credential check (`records::unrouted`): `401` here.
                    let records = path.contains("/{resource}/models/{model}");
                    let refused = got == 405 || (records && got == 401);
                    assert_eq!(
                        if methods.contains(method) {
                            got == 405
                        } else {
                            refused
                        },
                        !methods.contains(method),
                        "{method} {full}: {got}; described methods {methods:?}"
                    );
                }
            }
            assert!(answered, "{path} is served under neither host's prefix");
        }
    }

    /// The query parameters the description gives the operation `id`.
    fn query_params(id: &str) -> BTreeSet<String> {
        let doc: Value = serde_json::from_str(OPENAPI_JSON).unwrap();
        let op = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .find(|op| op["operationId"] == id)
            .unwrap_or_else(|| panic!("no operation {id}"));
        op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["in"] == "query")
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn list_and_page_parameters_are_the_codes_own() {
        use svc_model::records::wire::{DRAFT_PARAM, RESERVED_PARAMS};
        // Lists read every reserved parameter but `draft` (svc-model's list, which the
        // emulator's list reader uses); page settings read `draft`.
        let list: BTreeSet<String> = RESERVED_PARAMS
            .iter()
            .filter(|p| **p != DRAFT_PARAM)
            .map(|p| (*p).to_owned())
            .collect();
        for id in ["listRecords", "listUsers", "listTeams"] {
            assert_eq!(query_params(id), list, "{id}");
        }
        for id in [
            "listPages",
            "createPage",
            "getPage",
            "updatePage",
            "deletePage",
        ] {
            assert_eq!(
                query_params(id),
                BTreeSet::from([DRAFT_PARAM.to_owned()]),
                "{id}"
            );
        }
        // The GET forms of aggregate and group name what `svc_engine::forms` reads.
        let aggregate = BTreeSet::from(["_y_func".to_owned(), "_y_column".to_owned()]);
        assert_eq!(query_params("aggregateRecordsGet"), aggregate);
        let group: BTreeSet<String> = [
            "_x_column",
            "_x_lookup",
            "_y_func",
            "_y_column",
            "_per_page",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(query_params("groupRecordsGet"), group);
    }

    #[tokio::test]
    async fn the_description_is_served_without_credentials() {
        let emulator = crate::Emulator::start(crate::EmulatorConfig::default())
            .await
            .unwrap();
        assert_eq!(
            status(emulator.local_addr(), "GET", "/_emulator/openapi.json").await,
            200
        );
        assert_eq!(
            status(emulator.local_addr(), "GET", "/_emulator/health").await,
            200
        );
    }
}
