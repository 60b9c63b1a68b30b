//! Read-only SQL queries on a resource (feature `sql`).

use serde::Serialize;
use serde::de::DeserializeOwned;
use svc_auth::Secret;
use svc_model::ResourceName;
use svc_model::routes;
use svc_model::sql::{SqlRequest, SqlResponse, SqlRows, is_param_name};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, CallAuth, Operation};

const QUERY: Operation = Operation::new("sql.query", &routes::SQL_QUERY);

impl Client {
    /// Read-only SQL queries on one resource.
    ///
    /// The service runs a single read-only statement (a `SELECT`, or `WITH ... SELECT`) and
    /// answers `400` with a `query` field error for anything else. Values go in as named
    /// parameters (`:name` in the query, [`SqlQuery::bind`]), never pasted into the text. Calls
    /// carry the resource's static token, raw (see
    /// [`ClientBuilder::resource_token`](crate::ClientBuilder::resource_token), or
    /// [`Sql::token`] for these calls), else the API key. A query is safe to repeat, so it is
    /// retried like a read.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// #[derive(serde::Deserialize)]
    /// struct Top {
    ///     name: String,
    ///     #[serde(with = "svc_api::model::number::f64_or_string")] // a number or a numeric string
    ///     spent: f64,
    /// }
    ///
    /// let top: Vec<Top> = client
    ///     .sql("shop")
    ///     .query(
    ///         "select c.name, sum(o.total) as spent from orders o join customers c on c.id = o.customer_id
    ///          where o.status = :status group by c.id order by spent desc limit :n",
    ///     )
    ///     .bind("status", "paid")
    ///     .bind("n", 5)
    ///     .rows()
    ///     .await?;
    /// for row in top {
    ///     println!("{} {:.2}", row.name, row.spent);
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "sql")))]
    pub fn sql(&self, resource: impl Into<String>) -> Sql<'_> {
        Sql {
            client: self,
            resource: resource.into(),
            token: None,
            options: None,
        }
    }
}

/// SQL on one resource; see [`Client::sql`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// #[derive(serde::Deserialize)]
/// struct Row {
///     status: String,
///     orders: i64,
/// }
/// let rows: Vec<Row> = client
///     .sql("shop")
///     .query("select status, count(*) as orders from orders where total > :min group by status")
///     .bind("min", 100)
///     .rows()
///     .await?;
/// for row in rows {
///     println!("{}: {}", row.status, row.orders);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Sql<'c> {
    client: &'c Client,
    resource: String,
    token: Option<Secret>,
    options: crate::options::HandleOptions,
}

impl<'c> Sql<'c> {
    /// Uses this static token for these queries, instead of the client's.
    pub fn token(mut self, token: impl Into<Secret>) -> Self {
        self.token = Some(token.into());
        self
    }

    crate::options::options_method!();

    /// Starts a query; bind its parameters, then [`send`](SqlQuery::send) it or read its
    /// [`rows`](SqlQuery::rows).
    pub fn query(&self, query: impl Into<String>) -> SqlQuery<'c> {
        SqlQuery {
            sql: self.clone(),
            request: SqlRequest::new(query),
            paging: Paging::default(),
            error: None,
        }
    }
}

/// One query with its parameters, ready to send; made by [`Sql::query`].
#[must_use = "a query does nothing until it is sent"]
pub struct SqlQuery<'c> {
    sql: Sql<'c>,
    request: SqlRequest,
    paging: Paging,
    /// The first bind that failed: reported by `send`, before anything is sent.
    error: Option<Error>,
}

/// The rows of the answer the body asks for: the data engine's `limit` and `offset`, which it
/// writes after its sub-select of the query.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Paging {
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<u64>,
}

/// The body sent: the request and its paging.
#[derive(Serialize)]
struct Body<'a> {
    #[serde(flatten)]
    request: &'a SqlRequest,
    #[serde(flatten)]
    paging: Paging,
}

pub use svc_model::sql::MAX_SQL_LIMIT;

impl std::fmt::Debug for SqlQuery<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Parameter values may be personal data: show their names only.
        f.debug_struct("SqlQuery")
            .field("resource", &self.sql.resource)
            .field("query", &self.request.query)
            .field(
                "params",
                &self.request.params_obj.keys().collect::<Vec<_>>(),
            )
            .field("limit", &self.paging.limit)
            .field("offset", &self.paging.offset)
            .field("token", &self.sql.token)
            .field("options", &self.sql.options)
            .finish_non_exhaustive()
    }
}

impl SqlQuery<'_> {
    /// Binds `value` (anything serializable: numbers, strings, booleans, `None` for NULL) to
    /// the parameter written `:name` in the query. An array is sent as a list, which the data
    /// engine's driver writes as PostgreSQL's `ARRAY[...]` (`= ANY(:ids)`) or MySQL's `(1, 2)`
    /// (`IN :ids`); its SQLite driver cannot bind one, nor does any driver write an object (a
    /// `400` naming `query`): for SQLite's JSON functions bind the JSON text, a string
    /// (`.bind("ids", serde_json::json!(ids).to_string())` for
    /// `where id in (select value from json_each(:ids))`).
    ///
    /// `name` may be given with or without its `:`. A name that is not letters, digits and `_`
    /// (not starting with a digit), or a value that cannot be serialized, makes the query fail
    /// before anything is sent. Binding a name twice keeps the last value.
    pub fn bind(mut self, name: impl Into<String>, value: impl Serialize) -> Self {
        if self.error.is_some() {
            return self;
        }
        let name = name.into();
        let bare = name.strip_prefix(':').unwrap_or(&name);
        if !is_param_name(bare) {
            self.error = Some(Error::invalid(format!(
                "{name:?} is not a parameter name: use ASCII letters, digits and _, not starting with a digit, and write it :name in the query"
            )));
            return self;
        }
        match serde_json::to_value(value) {
            Ok(value) => {
                self.request.params_obj.insert(bare.to_owned(), value);
            }
            Err(e) => {
                self.error = Some(Error::invalid_because(
                    format!("the value of parameter {bare:?} could not be serialized"),
                    e,
                ));
            }
        }
        self
    }

    /// Uses this static token for this query, instead of the client's.
    pub fn token(mut self, token: impl Into<Secret>) -> Self {
        self.sql.token = Some(token.into());
        self
    }

    /// Answers at most `rows` rows, `1` to [`MAX_SQL_LIMIT`] (1000). Without it the data
    /// engine answers **at most 100 rows** of a query (a `LIMIT` inside the query cannot raise
    /// that: the engine pages the query's answer); `0` asks for every row (the emulator stops
    /// at 10000). A limit over 1000 makes the query fail before anything is sent: the engine
    /// would answer 1000 rows.
    pub fn limit(mut self, rows: u64) -> Self {
        if rows > MAX_SQL_LIMIT && self.error.is_none() {
            self.error = Some(Error::invalid(format!(
                "limit({rows}) is over {MAX_SQL_LIMIT}, the most rows the data engine answers of one query: page with offset, or by key (docs/sql.md, Limits)"
            )));
        }
        self.paging.limit = Some(rows);
        self
    }

    /// Skips the first `rows` rows of the query's answer (give the query an `ORDER BY`, so that
    /// pages follow one order).
    pub fn offset(mut self, rows: u64) -> Self {
        self.paging.offset = Some(rows);
        self
    }

    /// Runs the query: columns and rows as JSON values (see [`SqlResponse::rows`] and
    /// [`SqlResponse::maps`] to read them).
    pub async fn send(mut self) -> Result<SqlResponse> {
        let call = self.call()?;
        self.sql.client.send_json(&call).await
    }

    /// Runs the query and decodes every row as `T`, straight from the response bytes: by
    /// column name for structs and maps, in column order for tuples, the only column's value
    /// for single values (`i64`, `String`, ...). See [`svc_model::sql`].
    pub async fn rows<T: DeserializeOwned>(self) -> Result<Vec<T>> {
        Ok(self.fetch::<T>().await?.rows)
    }

    /// Like [`rows`](Self::rows), keeping the column names and the row count.
    pub async fn fetch<T: DeserializeOwned>(mut self) -> Result<SqlRows<T>> {
        let call = self.call()?;
        self.sql.client.send_json(&call).await
    }

    fn call(&mut self) -> Result<Call> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.request.query.trim().is_empty() {
            return Err(Error::invalid("the query is empty"));
        }
        let resource = ResourceName::new(self.sql.resource.as_str())?;
        let url = self
            .sql
            .client
            .data_route(QUERY.route, |_| resource.as_str())?
            .build();
        Ok(Call::new(QUERY, url)
            .options(&self.sql.options)
            .resource(&self.sql.resource)
            .auth(CallAuth::data(&self.sql.resource, self.sql.token.as_ref()))
            .json(&Body {
                request: &self.request,
                paging: self.paging,
            })?
            .idempotent())
    }
}
