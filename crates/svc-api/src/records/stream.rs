//! The record stream: every record across pages, with pages fetched ahead of the caller.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use svc_model::ListPage;
use svc_model::records::ListQuery;
use svc_transport::BoxFuture;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::name::Name;
use crate::options::HandleOptions;
use crate::request::{Call, CallAuth, Operation};
use crate::url::Url;

/// Pages fetched ahead of the caller unless [`Records::prefetch`](super::Records::prefetch)
/// says otherwise.
pub(super) const DEFAULT_PREFETCH: usize = 3;
/// Records per page when the query does not set `per_page`.
pub(super) const DEFAULT_STREAM_PAGE_SIZE: u32 = 1000;

/// How a page's body becomes records: serde_json into `T`, or the scanner of
/// [`RecordText`](super::RecordText)s.
pub(super) type PageDecoder<T> = fn(http::Response<Bytes>) -> Result<ListPage<T>>;

struct Fetched<T> {
    number: u32,
    page: ListPage<T>,
    /// The response body, to notice a server that answers the same page again (a shared
    /// handle: nothing is copied).
    body: Bytes,
}

/// Every record of a query, across pages; made by [`Records::stream`](super::Records::stream).
///
/// Items are `Result<T, Error>`: after an error the stream ends.
#[must_use = "streams do nothing unless polled"]
pub struct RecordStream<T> {
    client: Client,
    /// Each page request is an operation of its own (docs/tracing.md says why).
    op: Operation,
    resource: Name,
    base: Url,
    auth: CallAuth,
    query: ListQuery,
    prefetch: usize,
    /// The handle's call options, for every page.
    options: HandleOptions,
    decode: PageDecoder<T>,
    in_flight: FuturesOrdered<BoxFuture<'static, Result<Fetched<T>>>>,
    ready: VecDeque<Result<Fetched<T>>>,
    items: std::vec::IntoIter<T>,
    next_to_request: u32,
    /// Known once the first page has told the total count.
    last_page: Option<u32>,
    /// The total count the first page told.
    count: Option<u64>,
    /// The body of the page read last, kept until the next one is read: comparing bodies
    /// costs nothing unless their lengths match, where hashing each cost every byte.
    last_body: Option<Bytes>,
    done: bool,
}

impl<T> std::fmt::Debug for RecordStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordStream")
            .field("next_to_request", &self.next_to_request)
            .field("last_page", &self.last_page)
            .field("count", &self.count)
            .field("in_flight", &self.in_flight.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

// Nothing in the stream is self-referential: futures are boxed.
impl<T> Unpin for RecordStream<T> {}

impl<T> RecordStream<T> {
    /// How many records match the query, on all pages, as the first page read said
    /// (its `count`); `None` until that page has arrived, which is by the time the first
    /// record is handed out. For progress shown to a person: the records the stream yields
    /// may differ when the data changes during the stream, and a query that starts past page 1
    /// yields only the records from its page on.
    pub fn total(&self) -> Option<u64> {
        self.count
    }
}

impl<T: Send + 'static> RecordStream<T> {
    /// A stream whose pages `decode` reads.
    #[cfg(any(feature = "records", feature = "users"))]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn with_decoder(
        client: Client,
        op: Operation,
        resource: Name,
        base: Url,
        auth: CallAuth,
        query: ListQuery,
        prefetch: usize,
        options: HandleOptions,
        decode: PageDecoder<T>,
    ) -> Self {
        let first = query.page_number().unwrap_or(1);
        let mut stream = Self {
            client,
            op,
            resource,
            base,
            auth,
            query,
            prefetch: prefetch.max(1),
            options,
            decode,
            in_flight: FuturesOrdered::new(),
            ready: VecDeque::new(),
            items: Vec::new().into_iter(),
            next_to_request: first,
            last_page: None,
            count: None,
            last_body: None,
            done: false,
        };
        stream.request_next();
        stream
    }

    fn request_next(&mut self) {
        let number = self.next_to_request;
        self.next_to_request += 1;
        let url = self
            .query
            .clone()
            .page(number)
            .to_pairs()
            .iter()
            .fold(self.base.clone(), |url, (k, v)| url.query(k, v))
            .build();
        let call = Call::new(self.op, url)
            .options(&self.options)
            .resource(self.resource.as_str())
            .auth(self.auth.clone());
        let client = self.client.clone();
        let decode = self.decode;
        self.in_flight.push_back(Box::pin(async move {
            let response = client.send(&call).await?;
            let body = response.body().clone();
            let page = decode(response)?;
            Ok(Fetched { number, page, body })
        }));
    }

    fn top_up(&mut self) {
        if let Some(last) = self.last_page {
            while !self.done
                && self.in_flight.len() + self.ready.len() < self.prefetch
                && self.next_to_request <= last
            {
                self.request_next();
            }
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.in_flight = FuturesOrdered::new();
        self.ready.clear();
        self.last_body = None;
    }

    /// Takes a fetched page in: checks it, learns the last page, queues its records.
    fn accept(&mut self, fetched: Fetched<T>) -> Result<()> {
        if self.last_body.as_ref() == Some(&fetched.body) {
            return Err(Error::Protocol(format!(
                "the server answered page {} with the same body as the page before it; stopping instead of looping",
                fetched.number
            )));
        }
        self.last_body = Some(fetched.body);
        if self.last_page.is_none() {
            let per_page = u64::from(
                self.query
                    .page_size()
                    .unwrap_or(DEFAULT_STREAM_PAGE_SIZE)
                    .max(1),
            );
            let pages = fetched.page.count.div_ceil(per_page);
            let last = u32::try_from(pages).unwrap_or(u32::MAX).max(fetched.number);
            self.last_page = Some(last);
            self.count = Some(fetched.page.count);
        }
        let is_last = fetched.page.next.is_none() || fetched.page.results.is_empty();
        self.items = fetched.page.results.into_iter();
        if is_last {
            self.finish();
        }
        Ok(())
    }
}

impl<T: Send + 'static> Stream for RecordStream<T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            this.top_up();
            // Drive the fetches on every poll, so pages arrive while the caller works.
            while this.ready.len() < this.prefetch {
                match this.in_flight.poll_next_unpin(cx) {
                    Poll::Ready(Some(result)) => this.ready.push_back(result),
                    Poll::Ready(None) | Poll::Pending => break,
                }
            }
            if let Some(item) = this.items.next() {
                return Poll::Ready(Some(Ok(item)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match this.ready.pop_front() {
                Some(Ok(fetched)) => {
                    if let Err(e) = this.accept(fetched) {
                        this.finish();
                        return Poll::Ready(Some(Err(e)));
                    }
                }
                Some(Err(e)) => {
                    this.finish();
                    return Poll::Ready(Some(Err(e)));
                }
                None if this.in_flight.is_empty() => {
                    // Every page up to the last one has been read.
                    this.finish();
                }
                None => return Poll::Pending,
            }
        }
    }
}
