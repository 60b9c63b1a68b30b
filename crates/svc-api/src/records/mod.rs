//! Records of connected resources (feature `records`): list one page, list all, stream every
//! record across pages, retrieve, create, update, delete, aggregate and group.

#[cfg(feature = "records")]
mod bulk;
mod stream;
#[cfg(feature = "records")]
mod text;

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use svc_auth::Secret;
use svc_model::ident::IntoRecordPk;
use svc_model::list::ArrayOrPage;
use svc_model::records::ListQuery;
use svc_model::records::wire::{NO_PAGINATION_PARAM, PAGE_PARAM, PER_PAGE_PARAM};
#[cfg(feature = "records")]
use svc_model::records::{AggregateRequest, AggregateResult, GroupRequest, GroupRow};
use svc_model::routes::Route;
use svc_model::{ListPage, ModelName, ResourceName};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::name::Name;
use crate::options::HandleOptions;
use crate::request::{Call, Operation};
use crate::url::Url;

#[cfg(feature = "records")]
pub use bulk::{Bulk, Existing, Outcome, Written};
pub use stream::RecordStream;
#[cfg(feature = "records")]
pub use text::RecordText;

/// The operations of a kind of record handle (records, users, teams): each a span name and a
/// route of svc-model's table, so that a users list is `users.list`, not `records.list`, and
/// goes to the users' route. Teams have no create or delete route.
#[derive(Debug)]
// Teams and users alone use a part of the table.
#[cfg_attr(not(feature = "records"), allow(dead_code))]
pub(crate) struct RecordOps {
    pub(crate) list: Operation,
    pub(crate) all: Operation,
    pub(crate) stream: Operation,
    pub(crate) get: Operation,
    pub(crate) create: Option<Operation>,
    pub(crate) update: Operation,
    pub(crate) delete: Option<Operation>,
}

#[cfg(feature = "records")]
static RECORDS: RecordOps = RecordOps {
    list: Operation::new("records.list", &svc_model::routes::LIST_RECORDS),
    all: Operation::new("records.all", &svc_model::routes::LIST_RECORDS),
    stream: Operation::new("records.stream", &svc_model::routes::LIST_RECORDS),
    get: Operation::new("records.get", &svc_model::routes::GET_RECORD),
    create: Some(Operation::new(
        "records.create",
        &svc_model::routes::CREATE_RECORD,
    )),
    update: Operation::new("records.update", &svc_model::routes::PATCH_RECORD),
    delete: Some(Operation::new(
        "records.delete",
        &svc_model::routes::DELETE_RECORD,
    )),
};
#[cfg(feature = "records")]
const AGGREGATE: Operation =
    Operation::new("records.aggregate", &svc_model::routes::AGGREGATE_RECORDS);
#[cfg(feature = "records")]
const GROUP: Operation = Operation::new("records.group", &svc_model::routes::GROUP_RECORDS);

/// A record as an open JSON object, the default record type.
pub type Record = serde_json::Map<String, serde_json::Value>;

/// A record as the server sent it: its JSON text, checked to be valid JSON but not decoded
/// (see [`Records::raw`]). [`RawValue::get`](serde_json::value::RawValue::get) gives the text.
#[cfg(feature = "records")]
pub type RawRecord = Box<serde_json::value::RawValue>;

impl Client {
    /// Records of one model of one resource.
    ///
    /// Calls carry the resource's static token, raw (set it with
    /// [`ClientBuilder::resource_token`](crate::ClientBuilder::resource_token) or per handle with
    /// [`Records::token`]), else the API key. Records decode into any `T: DeserializeOwned`
    /// (see [`Records::typed`]); the default is an open JSON object, [`Record`].
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::model::records::{ListQuery, Lookup};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Order {
    ///     id: i64,
    ///     status: String,
    ///     // REAL values come as numeric strings ("83.89"); see `svc_model::number`.
    ///     #[serde(with = "svc_api::model::number::f64_or_string")]
    ///     total: f64,
    /// }
    ///
    /// let orders = client.records("shop", "orders").typed::<Order>();
    /// let page = orders
    ///     .list(&ListQuery::new().eq("status", "paid").filter("total", Lookup::Gte, 100).order_by("-total"))
    ///     .await?;
    /// println!("{} paid orders over 100; the largest is {:?}", page.count, page.results.first().map(|o| o.id));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "records")]
    #[cfg_attr(docsrs, doc(cfg(feature = "records")))]
    pub fn records(&self, resource: impl AsRef<str>, model: impl AsRef<str>) -> Records<'_> {
        Records::new(self, &RECORDS, resource.as_ref(), model.as_ref())
    }
}

/// Record operations on one model; see [`Client::records`]. `T` is the record type.
#[must_use]
pub struct Records<'c, T = Record> {
    client: &'c Client,
    ops: &'static RecordOps,
    resource: Name,
    model: Name,
    token: Option<Secret>,
    prefetch: usize,
    options: HandleOptions,
    _record: PhantomData<fn() -> T>,
}

impl<T> Clone for Records<'_, T> {
    fn clone(&self) -> Self {
        Self {
            client: self.client,
            ops: self.ops,
            resource: self.resource.clone(),
            model: self.model.clone(),
            token: self.token.clone(),
            prefetch: self.prefetch,
            options: self.options.clone(),
            _record: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Records<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("resource", &self.resource)
            .field("model", &self.model)
            .field("token", &self.token)
            .field("options", &self.options)
            .field("record_type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<'c, T> Records<'c, T> {
    /// A handle on one model. Users and teams are built on it too (resource `__svc_app__`), so
    /// that they share paging, streaming and credentials with records.
    pub(crate) fn new(
        client: &'c Client,
        ops: &'static RecordOps,
        resource: &str,
        model: &str,
    ) -> Self {
        Records {
            client,
            ops,
            resource: Name::new(resource),
            model: Name::new(model),
            token: None,
            prefetch: stream::DEFAULT_PREFETCH,
            options: None,
            _record: PhantomData,
        }
    }

    /// Uses this static token for these calls, instead of the client's.
    pub fn token(mut self, token: impl Into<Secret>) -> Self {
        self.token = Some(token.into());
        self
    }

    crate::options::options_method!();

    /// Decodes records as `U` (any `serde::de::DeserializeOwned`), straight from the response
    /// bytes.
    #[cfg(feature = "records")]
    pub fn typed<U>(self) -> Records<'c, U> {
        Records {
            client: self.client,
            ops: self.ops,
            resource: self.resource,
            model: self.model,
            token: self.token,
            prefetch: self.prefetch,
            options: self.options,
            _record: PhantomData,
        }
    }

    /// Records as the server sent them, undecoded: each is its JSON text, a [`RawRecord`].
    ///
    /// For passing records on (an export, a queue, a cache) where decoding each into a map and
    /// formatting it again would be wasted work. The text is checked to be valid JSON and
    /// valid UTF-8; any value is accepted (not only objects), keys are not checked for
    /// repeats, and whitespace, escapes and number forms are kept as sent. Decode a record
    /// later with `serde_json::from_str(raw.get())`.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use futures_util::TryStreamExt;
    /// use std::io::Write;
    /// use svc_api::model::records::ListQuery;
    ///
    /// // Every order as NDJSON, one record per line, bytes as the server sent them.
    /// let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    /// let mut all = client.records("shop", "orders").raw().stream(ListQuery::new())?;
    /// while let Some(record) = all.try_next().await? {
    ///     writeln!(out, "{}", record.get())?;
    /// }
    /// out.flush()?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "records")]
    pub fn raw(self) -> Records<'c, RawRecord> {
        self.typed()
    }

    /// How many pages [`stream`](Self::stream) fetches ahead of the caller (default 3, at least 1).
    #[cfg(any(feature = "records", feature = "users"))]
    pub fn prefetch(mut self, pages: usize) -> Self {
        self.prefetch = pages.max(1);
        self
    }

    /// `route`'s URL for this handle's resource and model, and `pk` where the route has a
    /// key. Both names are checked as `ResourceName` and `ModelName` check them, and encoded
    /// as their `encoded()` does, without copying either.
    fn url(&self, route: &Route, pk: &str) -> Result<Url> {
        let (resource, model) = (self.resource.as_str(), self.model.as_str());
        ResourceName::check(resource)?;
        ModelName::check(model)?;
        self.client.data_route(route, |name| match name {
            "resource" => resource,
            "model" => model,
            _ => pk,
        })
    }

    /// `op`'s URL without a key: a list, a create, an aggregate.
    fn model_url(&self, op: Operation) -> Result<Url> {
        self.url(op.route, "")
    }

    /// `op`'s URL for the record `pk`. The key is checked first; an integer key is written
    /// into the URL without being made into a `RecordPk`.
    fn record_url(&self, op: Operation, pk: impl IntoRecordPk) -> Result<String> {
        pk.with_pk_str(|pk| Ok(self.url(op.route, pk)?.build()))?
    }

    #[cfg(any(feature = "records", feature = "users"))]
    /// `op`, or a clear error when this kind of record has no such route (teams are neither
    /// created nor deleted through the API).
    fn served(&self, op: Option<Operation>, what: &str) -> Result<Operation> {
        op.ok_or_else(|| {
            Error::invalid(format!(
                "{}.{} cannot be {what} through the API",
                self.resource.as_str(),
                self.model.as_str()
            ))
        })
    }

    fn call(&self, op: Operation, url: String) -> Result<Call> {
        let auth = self
            .client
            .data_auth(self.resource.as_str(), self.token.as_ref());
        // Filled in place: each builder step would move the whole `Call` (a few hundred
        // bytes), and this runs for every record operation.
        let mut call = Call::new(op, url);
        call.options.clone_from(&self.options);
        call.resource = Some(self.resource.clone());
        call.auth = auth;
        Ok(call)
    }

    fn with_query(url: Url, pairs: &[(String, String)]) -> String {
        pairs
            .iter()
            .fold(url, |url, (k, v)| url.query(k, v))
            .build()
    }
}

fn check(query: &ListQuery) -> Result<()> {
    query
        .validate()
        .map_err(|e| Error::invalid_because(e.to_string(), e))
}

impl<'c, T: DeserializeOwned> Records<'c, T> {
    /// One page of records matching `query` (page 1 and 25 per page unless the query says
    /// otherwise). A page size outside 1..=10000 or a page 0 is refused before sending.
    pub async fn list(&self, query: &ListQuery) -> Result<ListPage<T>> {
        check(query)?;
        let url = Self::with_query(self.model_url(self.ops.list)?, &query.to_pairs());
        self.client.send_json(&self.call(self.ops.list, url)?).await
    }

    /// Every record matching `query` in one response (`_no_pagination`): at most 10000, so use
    /// [`stream`](Self::stream) for larger sets. Page and page size of the query are ignored.
    pub async fn all(&self, query: &ListQuery) -> Result<Vec<T>> {
        check(query)?;
        let mut pairs: Vec<(String, String)> = query
            .to_pairs()
            .into_iter()
            .filter(|(k, _)| k != PAGE_PARAM && k != PER_PAGE_PARAM)
            .collect();
        pairs.push((NO_PAGINATION_PARAM.to_owned(), "1".to_owned()));
        let url = Self::with_query(self.model_url(self.ops.all)?, &pairs);
        let call = self.call(self.ops.all, url)?;
        let all: ArrayOrPage<T> = self.client.send_json(&call).await?;
        Ok(all.0)
    }

    /// One record by primary key (`404` when there is none).
    pub async fn get(&self, pk: impl IntoRecordPk) -> Result<T> {
        let url = self.record_url(self.ops.get, pk)?;
        self.client.send_json(&self.call(self.ops.get, url)?).await
    }

    /// The same as [`get`](Self::get), under the name the service's documentation uses.
    #[cfg(feature = "records")]
    pub async fn retrieve(&self, pk: impl IntoRecordPk) -> Result<T> {
        self.get(pk).await
    }

    /// Creates a record from any serializable value; returns the stored record. Never retried
    /// once it may have been sent.
    #[cfg(any(feature = "records", feature = "users"))]
    pub async fn create<B: Serialize + ?Sized>(&self, record: &B) -> Result<T> {
        let op = self.served(self.ops.create, "created")?;
        let url = self.model_url(op)?.build();
        self.client
            .send_json(&self.call(op, url)?.json(record)?)
            .await
    }

    /// Changes the given fields of a record (`PATCH`); returns the whole updated record.
    pub async fn update<B: Serialize + ?Sized>(
        &self,
        pk: impl IntoRecordPk,
        patch: &B,
    ) -> Result<T> {
        let url = self.record_url(self.ops.update, pk)?;
        self.client
            .send_json(&self.call(self.ops.update, url)?.json(patch)?)
            .await
    }

    /// Deletes a record.
    #[cfg(any(feature = "records", feature = "users"))]
    pub async fn delete(&self, pk: impl IntoRecordPk) -> Result<()> {
        let op = self.served(self.ops.delete, "deleted")?;
        let url = self.record_url(op, pk)?;
        self.client.send(&self.call(op, url)?).await.map(drop)
    }

    /// An aggregate (`count`, `sum`, `min`, `max`, `avg`) over the records matching the
    /// filters and search of `filters` (its paging and ordering are ignored). `V` is the value
    /// type: e.g. `u64` for `count`; [`Decimal`](svc_model::number::Decimal) for `avg`, and for
    /// `sum`, `min` and `max` of a `REAL` or `NUMERIC` column, which the service sends as
    /// numeric strings; an `Option` for `min` and `max` (null over no records).
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::model::number::Decimal;
    /// use svc_api::model::records::{AggregateFunc, AggregateRequest, ListQuery};
    /// let revenue: Decimal = client
    ///     .records("shop", "orders")
    ///     .aggregate(&AggregateRequest::new(AggregateFunc::Sum).column("total"), &ListQuery::new().eq("status", "paid"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "records")]
    pub async fn aggregate<V: DeserializeOwned>(
        &self,
        request: &AggregateRequest,
        filters: &ListQuery,
    ) -> Result<V> {
        check(filters)?;
        let url = Self::with_query(self.model_url(AGGREGATE)?, &filters.filter_pairs());
        let call = self.call(AGGREGATE, url)?.json(request)?.idempotent();
        let result: AggregateResult<V> = self.client.send_json(&call).await?;
        Ok(result.y_func)
    }

    /// Groups the records matching `filters` by a column (or a date unit of it) and computes an
    /// aggregate per group; rows come ordered by group key. `K` is the key type, `V` the value
    /// type, as for [`aggregate`](Self::aggregate) (`serde_json::Value` for either when unsure).
    #[cfg(feature = "records")]
    pub async fn group<K: DeserializeOwned, V: DeserializeOwned>(
        &self,
        request: &GroupRequest,
        filters: &ListQuery,
    ) -> Result<Vec<GroupRow<K, V>>> {
        check(filters)?;
        let url = Self::with_query(self.model_url(GROUP)?, &filters.filter_pairs());
        let call = self.call(GROUP, url)?.json(request)?.idempotent();
        self.client.send_json(&call).await
    }
}

#[cfg(any(feature = "records", feature = "users"))]
impl<T: DeserializeOwned + Send + 'static> Records<'_, T> {
    /// Every record matching `query`, across all pages, as a [`Stream`](futures_core::Stream).
    ///
    /// The stream fetches up to [`prefetch`](Self::prefetch) pages ahead while the caller works
    /// on the current one, stops at the last page (computed from the first page's `count`, and
    /// at the first page without `next`), and ends with an error instead of looping if the
    /// server answers the same page twice. Pages hold 1000 records unless the query sets
    /// `per_page`; the query's `page` is where it starts. It owns a clone of the client, so it
    /// is `'static` and can be moved into a task. Memory stays bounded by the pages in flight.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use futures_util::TryStreamExt;
    /// use svc_api::model::records::ListQuery;
    ///
    /// let mut all = client.records("shop", "orders").stream(ListQuery::new().order_by("id"))?;
    /// let mut n = 0;
    /// while let Some(record) = all.try_next().await? {
    ///     n += 1;
    /// #   let _ = record;
    /// }
    /// println!("{n} orders");
    /// # Ok(()) }
    /// ```
    pub fn stream(&self, query: ListQuery) -> Result<RecordStream<T>> {
        self.stream_with(query, crate::request::decode::<ListPage<T>>)
    }

    /// A stream of this handle's query whose pages `decode` reads.
    fn stream_with<R: Send + 'static>(
        &self,
        query: ListQuery,
        decode: stream::PageDecoder<R>,
    ) -> Result<RecordStream<R>> {
        check(&query)?;
        let query = if query.page_size().is_none() {
            query.per_page(stream::DEFAULT_STREAM_PAGE_SIZE)
        } else {
            query
        };
        let base = self.model_url(self.ops.stream)?;
        // Fail now, not at the first page, when no credential could serve the stream.
        self.client
            .check_data_credential(self.resource.as_str(), self.token.as_ref())?;
        Ok(RecordStream::with_decoder(
            self.client.clone(),
            self.ops.stream,
            self.resource.clone(),
            base,
            crate::request::CallAuth::data(self.resource.as_str(), self.token.as_ref()),
            query,
            self.prefetch,
            self.options.clone(),
            decode,
        ))
    }

    /// Every record matching `query`, as [`stream`](Self::stream) gives them, but each as its
    /// JSON text cut from the page it came in, without copying: a [`RecordText`].
    ///
    /// For passing records on (an export, a queue, a cache) at the speed of the network: each
    /// page is checked in one pass (the syntax serde_json checks for a [`RawRecord`]) and its
    /// records handed out as slices of its body. Whitespace, escapes and number forms are kept
    /// as sent; any JSON value is accepted as a record, as for [`RawRecord`]s.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use futures_util::TryStreamExt;
    /// use std::io::Write;
    /// use svc_api::model::records::ListQuery;
    ///
    /// // Every order as NDJSON, one record per line, bytes as the server sent them.
    /// let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    /// let mut all = client.records("shop", "orders").stream_text(ListQuery::new())?;
    /// while let Some(record) = all.try_next().await? {
    ///     out.write_all(record.as_bytes())?;
    ///     out.write_all(b"\n")?;
    /// }
    /// out.flush()?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "records")]
    pub fn stream_text(&self, query: ListQuery) -> Result<RecordStream<RecordText>> {
        self.stream_with(query, text::decode_page)
    }
}
