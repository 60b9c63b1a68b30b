//! What the journal shows of one request: [`RecordedRequest`], its bodies ([`CapturedBody`]),
//! and the number of the stub that answered it ([`StubId`]).

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use svc_model::Timestamp;

/// A stub's number, from 1 in the order stubs were declared since the emulator started; from
/// [`StubBuilder::respond`](../svc_emulator/struct.StubBuilder.html#method.respond), and shown in the journal
/// ([`RecordedRequest::stub`](../svc_emulator/struct.RecordedRequest.html#structfield.stub)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct StubId(pub u64);

impl std::fmt::Display for StubId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stub {}", self.0)
    }
}

/// One request the emulator answered, as its request journal shows it, with every credential
/// and secret token replaced by `***`. From [`Emulator::requests`](../svc_emulator/struct.Emulator.html#method.requests);
/// `GET /_emulator/projects/{project}/requests` lists the same as JSON (the serialized form).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use svc_emulator::{Emulator, EmulatorConfig};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let emulator = Emulator::start(EmulatorConfig::default()).await?;
/// // Any HTTP client will do; here, one request written by hand.
/// let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await?;
/// let request = format!(
///     "GET /projects/demo/prod/shop/models/orders?_per_page=2 HTTP/1.1\r\n\
///      Host: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
///     emulator.api_key()
/// );
/// stream.write_all(request.as_bytes()).await?;
/// stream.read_to_end(&mut Vec::new()).await?;
///
/// let requests = emulator.requests();
/// let listed = &requests[0];
/// assert_eq!(listed.method, "GET");
/// assert_eq!(listed.path, "/projects/demo/prod/shop/models/orders");
/// assert_eq!(listed.query.as_deref(), Some("_per_page=2"));
/// assert_eq!(listed.project.as_deref(), Some("demo"));
/// assert_eq!(listed.resource.as_deref(), Some("shop"));
/// assert_eq!(listed.model.as_deref(), Some("orders"));
/// assert_eq!(listed.status, 200);
/// assert!(listed.duration_ms >= 0.0);
/// // Bodies are kept only with `EmulatorConfig::journal_bodies(true)`.
/// assert!(listed.response_body.is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The request's number, from 1 in the order requests arrived since the emulator started.
    pub id: u64,
    /// When the request arrived (UTC, millisecond precision).
    pub time: Timestamp,
    /// The method, e.g. `GET`.
    pub method: String,
    /// The path as received, still percent-encoded, e.g.
    /// `/projects/demo/prod/shop/models/orders`. A path and query longer than 8 KiB are kept
    /// to their first 8 KiB, ending in `…`.
    pub path: String,
    /// The query string without its `?`, as received (percent-encoded), if there was one.
    pub query: Option<String>,
    /// The project the path names; for a path that names none (`/api/proxy_request`, an
    /// unknown path), the project of the request's credential, if it had a valid one.
    pub project: Option<String>,
    /// The environment the path names.
    pub environment: Option<String>,
    /// The resource the path names (records, SQL and reload paths).
    pub resource: Option<String>,
    /// The model the path names (records paths).
    pub model: Option<String>,
    /// The answer's status code.
    pub status: u16,
    /// From the request's arrival to its answer's status line and headers, in milliseconds
    /// (to the microsecond).
    pub duration_ms: f64,
    /// The request's body as the emulator read it, when the journal keeps bodies
    /// ([`EmulatorConfig::journal_bodies`](../svc_emulator/struct.EmulatorConfig.html#method.journal_bodies)); `None`
    /// when there was none, or the emulator answered without reading it (a `401`, ...).
    pub request_body: Option<CapturedBody>,
    /// The answer's body as sent, when the journal keeps bodies.
    pub response_body: Option<CapturedBody>,
    /// Who sent it: a client, or the emulator's web page (left out of listings and
    /// expectations unless asked for: [`RequestMatcher::source`](../svc_emulator/struct.RequestMatcher.html#method.source)).
    pub source: RequestSource,
    /// The stub that answered it instead of the data, if one did
    /// ([`Emulator::stub`](../svc_emulator/struct.Emulator.html#method.stub)); its `status` is then the stub's, or 0 when
    /// the stub dropped or reset the connection.
    pub stub: Option<StubId>,
}

/// Who sent a request: serialized as `"client"` or `"ui"`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RequestSource {
    /// A client of the API: the code under test, a script, `svc`.
    #[default]
    Client,
    /// The emulator's web page (`/_emulator/ui/`), reading and changing the emulator through
    /// the API's routes.
    Ui,
}

/// A request's or answer's body in the request journal: its first 64 KiB, secrets redacted.
///
/// Serialized as `{"json": ..., "bytes": n, "truncated": false}` for JSON,
/// `{"text": "...", "bytes": n, "truncated": b}` for other text (and for JSON cut at 64 KiB),
/// and `{"bytes": n, "truncated": b}` for anything else.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CapturedBody {
    /// What the kept bytes hold.
    pub content: BodyContent,
    /// How many bytes of the body passed (read by the emulator, or sent).
    pub bytes: u64,
    /// Whether only the first 64 KiB were kept, or the body did not pass whole (the client
    /// left, or the emulator stopped reading it).
    pub truncated: bool,
}

/// The content of a [`CapturedBody`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BodyContent {
    /// A whole JSON body, with the values of secret keys replaced by `***`.
    Json(Value),
    /// UTF-8 text that is not JSON (or JSON cut short).
    Text(String),
    /// Bytes that are not UTF-8 text: not shown.
    Binary,
}

impl CapturedBody {
    /// The body as JSON, if it was a whole JSON body.
    pub fn json(&self) -> Option<&Value> {
        match &self.content {
            BodyContent::Json(value) => Some(value),
            _ => None,
        }
    }

    /// The body as text, if it was text that is not JSON.
    pub fn text(&self) -> Option<&str> {
        match &self.content {
            BodyContent::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl Serialize for CapturedBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.content {
            BodyContent::Json(value) => map.serialize_entry("json", value)?,
            BodyContent::Text(text) => map.serialize_entry("text", text)?,
            BodyContent::Binary => {}
        }
        map.serialize_entry("bytes", &self.bytes)?;
        map.serialize_entry("truncated", &self.truncated)?;
        map.end()
    }
}

impl RecordedRequest {
    /// The arrival time as the journal's JSON writes it: RFC 3339 in UTC with milliseconds,
    /// e.g. `2026-05-01T10:00:00.250Z`.
    pub fn time_rfc3339(&self) -> String {
        let millis = self
            .time
            .unix_seconds()
            .saturating_mul(1000)
            .saturating_add(i64::from(self.time.subsec_nanos() / 1_000_000));
        svc_emulator_state::util::timestamp::format_millis(millis)
    }
}

/// The JSON of a record, with or without its bodies.
#[derive(Debug)]
pub struct Listed<'a> {
    record: &'a RecordedRequest,
    bodies: bool,
}

impl<'a> Listed<'a> {
    /// `record`'s serialized form, with its bodies (`bodies=true`) or without.
    pub fn new(record: &'a RecordedRequest, bodies: bool) -> Self {
        Self { record, bodies }
    }
}

impl Serialize for Listed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let r = self.record;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &r.id)?;
        map.serialize_entry("time", &r.time_rfc3339())?;
        map.serialize_entry("method", &r.method)?;
        map.serialize_entry("path", &r.path)?;
        map.serialize_entry("query", &r.query)?;
        map.serialize_entry("project", &r.project)?;
        map.serialize_entry("environment", &r.environment)?;
        map.serialize_entry("resource", &r.resource)?;
        map.serialize_entry("model", &r.model)?;
        map.serialize_entry("status", &r.status)?;
        map.serialize_entry("duration_ms", &r.duration_ms)?;
        map.serialize_entry("source", &r.source)?;
        map.serialize_entry("stub", &r.stub)?;
        if self.bodies {
            map.serialize_entry("request_body", &r.request_body)?;
            map.serialize_entry("response_body", &r.response_body)?;
        }
        map.end()
    }
}

/// Every field, the bodies included (`null` when absent): the form of
/// `GET /_emulator/projects/{project}/requests?bodies=true`.
impl Serialize for RecordedRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Listed::new(self, true).serialize(serializer)
    }
}
