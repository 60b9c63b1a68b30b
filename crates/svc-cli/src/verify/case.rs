//! One request of a verification run ([`Case`]): what it asks of a resource, written once and
//! sent as the data host writes its paths (the emulator's, and the service's) or as the data
//! engine writes them. A case is also what `--replay` reads back.

use http::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::url::encode;

/// What a case does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `GET models/{model}?...`: a page of records.
    List,
    /// `GET models/{model}/{key}`.
    Retrieve,
    /// `GET models/{model}/aggregate?_y_func=...`.
    Aggregate,
    /// `GET models/{model}/group?_x_column=...`.
    Group,
    /// A read-only SQL query.
    Sql,
    /// `POST models/{model}` (only with `--writes`).
    Create,
    /// `PATCH models/{model}/{key}` (only with `--writes`).
    Update,
    /// `DELETE models/{model}/{key}` (only with `--writes`).
    Delete,
}

impl Op {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::List => "list",
            Op::Retrieve => "retrieve",
            Op::Aggregate => "aggregate",
            Op::Group => "group",
            Op::Sql => "sql",
            Op::Create => "create",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }

    /// Whether the case changes data.
    pub fn writes(self) -> bool {
        matches!(self, Op::Create | Op::Update | Op::Delete)
    }

    /// The section of docs/contract.md that holds its rules and its `[decision]`s.
    pub fn contract_section(self) -> &'static str {
        match self {
            Op::Sql => "docs/contract.md 5.2 SQL",
            _ => "docs/contract.md 5.1 Records",
        }
    }
}

/// How a server writes its paths and reads its credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The data host: `{base}/projects/{project}/{environment}/{resource}/models/{model}`,
    /// `.../sql_get_query`; the emulator's paths too.
    Service,
    /// The open-source data engine (PyPI `jet-bridge`): `{base}/api/models/{model}/`,
    /// `{base}/api/sql/`.
    Engine,
}

/// Where a resource lives on a server of a [`Kind`].
#[derive(Debug, Clone)]
pub struct Place {
    /// The server's base URL, without a trailing `/`.
    pub base: String,
    pub kind: Kind,
    pub project: String,
    pub environment: String,
    pub resource: String,
}

/// One request, in terms every server understands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub op: Op,
    /// The model (none for SQL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A record's key (retrieve, update, delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The query's pairs, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<(String, String)>,
    /// The JSON body (writes), or the SQL text (`{"query": ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl Case {
    /// A read of `model` with a query.
    pub fn read(op: Op, model: &str, query: Vec<(String, String)>) -> Case {
        Case {
            op,
            model: Some(model.to_owned()),
            key: None,
            query,
            body: None,
        }
    }

    /// A read-only SQL query.
    pub fn sql(text: &str) -> Case {
        Case {
            op: Op::Sql,
            model: None,
            key: None,
            query: Vec::new(),
            body: Some(json!({ "query": text })),
        }
    }

    /// A read-only SQL query of format 2 with its `:name` values (`params`, an object: the
    /// body's `params_obj`) and the body's other keys (`extra`, an object: `limit`, ...).
    pub fn sql_with(text: &str, params: Value, extra: Value) -> Case {
        let mut body = json!({ "query": text, "v": 2, "params_obj": params });
        if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
            body.extend(extra);
        }
        Case {
            body: Some(body),
            ..Case::sql(text)
        }
    }

    /// The HTTP method.
    pub fn method(&self) -> Method {
        match self.op {
            Op::List | Op::Retrieve | Op::Aggregate | Op::Group => Method::GET,
            Op::Sql | Op::Create => Method::POST,
            Op::Update => Method::PATCH,
            Op::Delete => Method::DELETE,
        }
    }

    /// Its model, or `sql`: how reports group it.
    pub fn subject(&self) -> &str {
        self.model.as_deref().unwrap_or("sql")
    }

    /// The path and query under a server's base URL.
    pub fn target(&self, place: &Place) -> String {
        let tail = match (self.op, &self.key) {
            (Op::Aggregate, _) => "/aggregate".to_owned(),
            (Op::Group, _) => "/group".to_owned(),
            (_, Some(key)) => format!("/{}", encode(key)),
            (_, None) => String::new(),
        };
        let model = encode(self.model.as_deref().unwrap_or_default());
        let path = match (place.kind, self.op) {
            (Kind::Service, Op::Sql) => format!("{}/sql_get_query", prefix(place)),
            (Kind::Service, _) => format!("{}/models/{model}{tail}", prefix(place)),
            (Kind::Engine, Op::Sql) => "/api/sql/".to_owned(),
            // The engine's routes end in `/`.
            (Kind::Engine, _) => format!("/api/models/{model}{tail}/"),
        };
        format!("{path}{}", self.query_string())
    }

    /// The full URL on a server.
    pub fn url(&self, place: &Place) -> String {
        format!("{}{}", place.base, self.target(place))
    }

    /// `?a=1&b=2`, percent-encoded, in order; empty without pairs.
    pub fn query_string(&self) -> String {
        if self.query.is_empty() {
            return String::new();
        }
        let pairs: Vec<String> = self
            .query
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        format!("?{}", pairs.join("&"))
    }

    /// Whether the case can be sent as it is: a model for every case but SQL, a key for a
    /// retrieve, update or delete, and neither empty, `.` nor `..` (a server that normalises
    /// paths would read another route).
    pub fn check(&self) -> Result<(), String> {
        let segment = |what: &str, value: &Option<String>, needed: bool| match value.as_deref() {
            None if needed => Err(format!("it has no {what}")),
            Some(bad @ ("" | "." | "..")) => {
                Err(format!("its {what} {bad:?} is not a path segment"))
            }
            _ => Ok(()),
        };
        segment("model", &self.model, self.op != Op::Sql)?;
        let keyed = matches!(self.op, Op::Retrieve | Op::Update | Op::Delete);
        segment("key", &self.key, keyed)
    }

    /// One line for people: `GET books?price__gt=3`, `SQL select ...`.
    pub fn describe(&self) -> String {
        if self.op == Op::Sql {
            let body = self.body.as_ref();
            let text = body.and_then(|b| b["query"].as_str()).unwrap_or_default();
            // The body's other keys (`v`, `params_obj`, `limit`, ...) after the text.
            let mut rest = body.and_then(Value::as_object).cloned().unwrap_or_default();
            rest.remove("query");
            return match rest.is_empty() {
                true => format!("SQL {text}"),
                false => format!("SQL {text} {}", Value::Object(rest)),
            };
        }
        let key = self
            .key
            .as_ref()
            .map(|k| format!("/{k}"))
            .unwrap_or_default();
        let tail = match self.op {
            Op::Aggregate => "/aggregate",
            Op::Group => "/group",
            _ => "",
        };
        let body = match (&self.body, self.op.writes()) {
            (Some(b), true) => format!(" {b}"),
            _ => String::new(),
        };
        format!(
            "{} {}{key}{tail}{}{body}",
            self.method(),
            self.subject(),
            self.query_string()
        )
    }
}

/// `/projects/{project}/{environment}/{resource}`, each segment encoded.
fn prefix(place: &Place) -> String {
    format!(
        "/projects/{}/{}/{}",
        encode(&place.project),
        encode(&place.environment),
        encode(&place.resource)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(kind: Kind) -> Place {
        Place {
            base: "http://127.0.0.1:9".to_owned(),
            kind,
            project: "p".to_owned(),
            environment: "prod".to_owned(),
            resource: "shop".to_owned(),
        }
    }

    #[test]
    fn each_kind_writes_its_own_paths() {
        let mut case = Case::read(
            Op::List,
            "order items",
            vec![("name__icontains".to_owned(), "50% a&b".to_owned())],
        );
        assert_eq!(
            case.target(&place(Kind::Service)),
            "/projects/p/prod/shop/models/order%20items?name__icontains=50%25%20a%26b"
        );
        assert_eq!(
            case.target(&place(Kind::Engine)),
            "/api/models/order%20items/?name__icontains=50%25%20a%26b"
        );
        case.op = Op::Group;
        case.query.clear();
        assert_eq!(
            case.target(&place(Kind::Engine)),
            "/api/models/order%20items/group/"
        );
        case.op = Op::Retrieve;
        case.key = Some("É-7".to_owned());
        assert_eq!(
            case.url(&place(Kind::Service)),
            "http://127.0.0.1:9/projects/p/prod/shop/models/order%20items/%C3%89-7"
        );
        let sql = Case::sql("select 1");
        assert_eq!(sql.target(&place(Kind::Engine)), "/api/sql/");
        assert_eq!(
            sql.target(&place(Kind::Service)),
            "/projects/p/prod/shop/sql_get_query"
        );
        assert_eq!(sql.method(), Method::POST);
    }

    #[test]
    fn a_case_reads_back_as_written() {
        let case = Case::read(
            Op::Aggregate,
            "books",
            vec![("_y_func".into(), "sum".into())],
        );
        let text = serde_json::to_string(&case).unwrap();
        assert_eq!(
            text,
            r#"{"op":"aggregate","model":"books","query":[["_y_func","sum"]]}"#
        );
        assert_eq!(serde_json::from_str::<Case>(&text).unwrap(), case);
    }
}
