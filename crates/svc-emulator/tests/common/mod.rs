//! A raw HTTP client for the tests: one connection per request, the path sent exactly as written
//! (percent-encoding included), HTTP/1.1 or HTTP/2, plain or TLS.

#![allow(dead_code, reason = "each test file uses a different part")]

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub version: http::Version,
}

impl Reply {
    /// The body as JSON; panics (in the test) when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "status {}: body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Asserts the status and that the body is a JSON error object with this `error_code`.
    pub fn assert_error(&self, status: u16, code: &str) -> Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "body: {:?}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(
            self.headers
                .get(http::header::CONTENT_TYPE)
                .map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
        let json = self.json();
        assert_eq!(json["error_code"], code, "{json}");
        assert!(json["error"].is_string(), "{json}");
        json
    }

    /// Asserts a refusal by design: `400`, marked `"error_decision": "stricter"` (`what` names
    /// the request in the failure).
    pub fn assert_stricter(&self, what: &str) -> Value {
        let json = self.assert_error(400, "invalid");
        assert_eq!(json["error_decision"], "stricter", "{what}: {json}");
        json
    }
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: Method,
    pub path: String,
    pub auth: Option<String>,
    pub body: Option<Vec<u8>>,
    /// More headers, each replacing one of the same name (`Host` included).
    pub headers: Vec<(String, String)>,
}

impl Call {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            auth: None,
            body: None,
            headers: Vec::new(),
        }
    }

    /// Sends `name: value` too, in place of a header of that name.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn get(path: impl Into<String>) -> Self {
        Self::new(Method::GET, path)
    }

    pub fn auth(mut self, value: impl Into<String>) -> Self {
        self.auth = Some(value.into());
        self
    }

    pub fn bearer(self, key: &str) -> Self {
        self.auth(format!("Bearer {key}"))
    }

    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some(serde_json::to_vec(body).unwrap());
        self
    }

    pub fn raw_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    fn request(&self) -> Request<Full<Bytes>> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(self.path.as_str())
            .header(http::header::HOST, "127.0.0.1");
        if let Some(auth) = &self.auth {
            builder = builder.header(http::header::AUTHORIZATION, auth.as_str());
        }
        if self.body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
        }
        let mut request = builder
            .body(Full::new(Bytes::from(
                self.body.clone().unwrap_or_default(),
            )))
            .unwrap();
        for (name, value) in &self.headers {
            request.headers_mut().insert(
                http::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
        }
        request
    }

    fn request_h2(&self, authority: &str, scheme: &str) -> Request<Full<Bytes>> {
        let mut req = self.request();
        *req.uri_mut() = format!("{scheme}://{authority}{}", self.path)
            .parse()
            .unwrap();
        req.headers_mut().remove(http::header::HOST);
        req
    }
}

/// Sends `call` to a plain-HTTP emulator over HTTP/1.1.
pub async fn send(emulator: &Emulator, call: Call) -> Reply {
    let stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
    send_h1(stream, &call).await
}

pub async fn send_h1<I>(io: I, call: &Call) -> Reply
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(conn);
    read(sender.send_request(call.request()).await.unwrap()).await
}

pub async fn send_h2<I>(io: I, call: &Call, authority: &str, scheme: &str) -> Reply
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .unwrap();
    tokio::spawn(conn);
    read(
        sender
            .send_request(call.request_h2(authority, scheme))
            .await
            .unwrap(),
    )
    .await
}

async fn read(response: http::Response<hyper::body::Incoming>) -> Reply {
    let (parts, body) = response.into_parts();
    Reply {
        status: parts.status,
        headers: parts.headers,
        version: parts.version,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

/// A TLS connection to the emulator that trusts only its CA, offering `alpn`.
pub async fn tls_connect(
    emulator: &Emulator,
    server_name: &str,
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(emulator.tls_ca_pem().expect("TLS is on")) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
    let name = ServerName::try_from(server_name.to_owned()).unwrap();
    connector.connect(name, stream).await.unwrap()
}

/// An emulator with the demo project, in memory.
pub async fn demo() -> Emulator {
    Emulator::start(EmulatorConfig::default()).await.unwrap()
}

/// A fresh, empty directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!(
            "svc-emulator-test-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// This process's peak resident memory (`VmHWM`), in KiB.
pub fn peak_rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}
