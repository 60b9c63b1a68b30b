//! Bulk writes: many records created, or created and updated by a key, with bounded
//! concurrency and one result per item.

use futures_core::Stream;
use futures_util::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use svc_model::records::ListQuery;

use super::{Record, Records};
use crate::error::{Error, Result};
use crate::retry::Jitter;

/// Requests in flight unless [`Bulk::concurrency`] says otherwise.
const DEFAULT_CONCURRENCY: usize = 8;

/// How a bulk write runs: how many requests at once and, for
/// [`Records::upsert_many`], which field identifies a record. Build it with
/// [`Bulk::new`] (plain creates) or [`Bulk::keyed`].
///
/// ```
/// use svc_api::{Bulk, Existing};
/// let plain = Bulk::new().concurrency(16);
/// let keyed = Bulk::keyed("email").pk("id").existing(Existing::Skip);
/// assert_eq!(plain.concurrency_limit(), 16);
/// assert_eq!(keyed.key(), Some("email"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bulk {
    concurrency: usize,
    key: Option<String>,
    pk: String,
    existing: Existing,
}

impl Default for Bulk {
    fn default() -> Self {
        Self::new()
    }
}

/// What [`Records::upsert_many`] does with an item whose key a record already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Existing {
    /// Change that record's fields to the item's (`PATCH`).
    #[default]
    Update,
    /// Leave that record as it is.
    Skip,
}

impl Bulk {
    /// Plain creates, 8 requests at once.
    pub fn new() -> Self {
        Self {
            concurrency: DEFAULT_CONCURRENCY,
            key: None,
            pk: "id".to_owned(),
            existing: Existing::Update,
        }
    }

    /// Creates and updates by the value of the field `key`: an item whose key no record has is
    /// created, one whose key a record has updates it (or is skipped, see
    /// [`existing`](Self::existing)). Running the same items again changes nothing more, so an
    /// interrupted import can be run again.
    pub fn keyed(key: impl Into<String>) -> Self {
        Self {
            key: Some(key.into()),
            ..Self::new()
        }
    }

    /// Requests in flight at once (at least 1; default 8).
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests.max(1);
        self
    }

    /// The primary key field of the model, which addresses the record to update (default `id`).
    pub fn pk(mut self, field: impl Into<String>) -> Self {
        self.pk = field.into();
        self
    }

    /// What to do with items whose key exists (default [`Existing::Update`]).
    pub fn existing(mut self, existing: Existing) -> Self {
        self.existing = existing;
        self
    }

    /// Requests in flight at once.
    pub fn concurrency_limit(&self) -> usize {
        self.concurrency
    }

    /// The key field, for keyed writes.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }
}

/// What a bulk write did with one item.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Written<T> {
    /// A new record, as stored.
    Created(T),
    /// An existing record, as updated.
    Updated(T),
    /// An existing record, left as it was ([`Existing::Skip`]).
    Skipped,
}

/// One item's outcome: its position among the items (from 0) and what became of it. Outcomes
/// come in the order the requests finish, not the order of the items.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome<T> {
    /// The item's position in the input, from 0.
    pub index: usize,
    /// What was done, or why it failed.
    pub result: Result<Written<T>>,
}

impl<'c, T: DeserializeOwned> Records<'c, T> {
    /// Creates a record from each item of `items` (any stream of serializable values), with
    /// up to [`Bulk::concurrency`] requests at once, and yields one [`Outcome`] per item as its
    /// request finishes (a failed item does not stop the others). Creates are never retried
    /// once they may have reached the server (a retry could create the record twice): for
    /// retries and re-runs that are safe, use [`upsert_many`](Self::upsert_many) with a key.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use futures_util::StreamExt;
    /// use svc_api::Bulk;
    ///
    /// let rows = (1..=100).map(|n| serde_json::json!({"status": "new", "total": n}));
    /// let orders = client.records("shop", "orders");
    /// let mut outcomes = orders.create_many(futures_util::stream::iter(rows), &Bulk::new());
    /// while let Some(outcome) = outcomes.next().await {
    ///     if let Err(e) = outcome.result {
    ///         eprintln!("item {}: {e}", outcome.index);
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn create_many<'a, B, S>(
        &'a self,
        items: S,
        bulk: &Bulk,
    ) -> impl Stream<Item = Outcome<T>> + 'a
    where
        B: Serialize + 'a,
        S: Stream<Item = B> + 'a,
        T: 'a,
    {
        items
            .enumerate()
            .map(move |(index, item)| async move {
                let result = self.create(&item).await.map(Written::Created);
                Outcome { index, result }
            })
            .buffer_unordered(bulk.concurrency)
    }

    /// Creates or updates a record per item, by the value of the key field of `bulk` (see
    /// [`Bulk::keyed`]; without a key this is [`create_many`](Self::create_many)), with up to
    /// [`Bulk::concurrency`] items at once, and yields one [`Outcome`] per item as it finishes.
    ///
    /// Each item costs a lookup (`GET` filtered on the key, retried as reads are) and then a
    /// create, an update (`PATCH` by the [primary key](Bulk::pk) of the record found, retried:
    /// setting the same values twice is harmless) or nothing. A create whose answer is lost
    /// or retryable (`429`, `5xx` gateways) is retried by looking the key up again first, as
    /// the client's [`RetryPolicy`](crate::RetryPolicy) allows, so it is never made twice. An
    /// item without the key field, or whose key matches several records, fails on its own.
    /// Two items with the same key should not be in one run: they may both be created.
    pub fn upsert_many<'a, S>(
        &'a self,
        items: S,
        bulk: &Bulk,
    ) -> impl Stream<Item = Outcome<T>> + 'a
    where
        S: Stream<Item = Record> + 'a,
        T: 'a,
    {
        let concurrency = bulk.concurrency;
        let bulk = bulk.clone();
        items
            .enumerate()
            .map(move |(index, item)| {
                let bulk = bulk.clone();
                async move {
                    let result = match bulk.key.as_deref() {
                        Some(key) => self.upsert_one(&item, key, &bulk).await,
                        None => self.create(&item).await.map(Written::Created),
                    };
                    Outcome { index, result }
                }
            })
            .buffer_unordered(concurrency)
    }

    async fn upsert_one(&self, item: &Record, key: &str, bulk: &Bulk) -> Result<Written<T>> {
        let value = match item.get(key) {
            None | Some(Value::Null) => {
                return Err(Error::invalid(format!(
                    "the item has no value for the key field {key:?}"
                )));
            }
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let lookup = ListQuery::new().eq(key, value.as_str()).per_page(2);
        let mut attempt = 1;
        let mut jitter = None;
        loop {
            let found: svc_model::ListPage<Record> = self.clone().typed().list(&lookup).await?;
            match found.results.as_slice() {
                [] => {}
                [existing] => {
                    if bulk.existing == Existing::Skip {
                        return Ok(Written::Skipped);
                    }
                    let pk = match existing.get(&bulk.pk) {
                        Some(Value::String(s)) => s.clone(),
                        Some(v @ Value::Number(_)) => v.to_string(),
                        _ => {
                            return Err(Error::invalid(format!(
                                "the record with {key} = {value:?} has no primary key field {:?}; \
                                 name the model's primary key",
                                bulk.pk
                            )));
                        }
                    };
                    let url = self.record_url(self.ops.update, pk.as_str())?;
                    let call = self.call(self.ops.update, url)?.json(item)?.idempotent();
                    return self.client.send_json(&call).await.map(Written::Updated);
                }
                _ => {
                    return Err(Error::invalid(format!(
                        "{} records have {key} = {value:?}: the key must identify one record",
                        found.count
                    )));
                }
            }
            match self.create(item).await {
                Ok(created) => return Ok(Written::Created(created)),
                Err(e) if e.is_retryable() => {
                    let jitter = jitter.get_or_insert_with(Jitter::new);
                    match self.client.inner.retry.delay(attempt, None, jitter) {
                        Some(wait) => {
                            self.client.inner.sender.sleep.sleep(wait).await;
                            attempt += 1;
                        }
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}
