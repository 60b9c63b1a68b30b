//! A tiny HTTP/1.1 server for the transport's tests, speaking raw bytes over tokio so that it
//! can misbehave on purpose (never answer, close early, lie about sizes).
//!
//! It binds 127.0.0.1:0, serves plain TCP or TLS, and stops by itself: when the `TestServer`
//! is dropped (which aborts every connection task) or after [`LIFETIME`], whichever is first.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The longest a test server runs.
const LIFETIME: Duration = Duration::from_secs(60);

/// A request as the server parsed it.
#[derive(Debug, Clone)]
pub(super) struct Req {
    pub method: String,
    /// The request target, e.g. `/path?query`.
    pub target: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// 1 for the first request the server received, on any connection.
    pub number: usize,
    /// 1 for the first request on this connection.
    pub on_connection: usize,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
pub(super) enum Reply {
    /// Answer with `Content-Length`, then keep the connection open for more requests.
    Ok {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Answer with `Content-Length` and no `Connection: close`, then close the connection.
    OkThenClose { body: Vec<u8> },
    /// Answer with a chunked body (no `Content-Length`).
    Chunked { body: Vec<u8> },
    /// Announce `content_length` bytes in the head, send `body`.
    Head {
        content_length: usize,
        body: Vec<u8>,
    },
    /// Never answer; hold the connection until the server stops.
    Hang,
    /// Close the connection without answering.
    Close,
}

impl Reply {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self::Ok {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }
}

type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// A running test server; dropping it stops it.
pub(super) struct TestServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
    requests: Arc<AtomicUsize>,
}

impl TestServer {
    /// Serves plain HTTP/1.1.
    pub async fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with(None, Arc::new(handler)).await
    }

    /// Serves HTTP/1.1 over TLS.
    pub async fn start_tls(
        acceptor: tokio_rustls::TlsAcceptor,
        handler: impl Fn(&Req) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Self::start_with(Some(acceptor), Arc::new(handler)).await
    }

    async fn start_with(acceptor: Option<tokio_rustls::TlsAcceptor>, handler: Handler) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            let accept_loop = async {
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        return;
                    };
                    let handler = Arc::clone(&handler);
                    let counter = Arc::clone(&counter);
                    let acceptor = acceptor.clone();
                    connections.spawn(async move {
                        match acceptor {
                            None => serve(tcp, handler, counter).await,
                            Some(acceptor) => {
                                // A client that rejects our certificate ends the handshake.
                                if let Ok(tls) = acceptor.accept(tcp).await {
                                    serve(tls, handler, counter).await;
                                }
                            }
                        }
                    });
                }
            };
            let _ = tokio::time::timeout(LIFETIME, accept_loop).await;
            // Dropping the JoinSet aborts the connections still open.
        });
        Self {
            addr,
            task,
            requests,
        }
    }

    /// `http://127.0.0.1:PORT` (or `https://`) followed by `path`.
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{path}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests the server has read.
    pub fn request_count(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    handler: Handler,
    counter: Arc<AtomicUsize>,
) {
    let mut buffer = Vec::new();
    let mut on_connection = 0;
    loop {
        let Some(mut req) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        on_connection += 1;
        req.on_connection = on_connection;
        req.number = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let head_only = req.method == "HEAD";
        let reply = handler(&req);
        let (bytes, close) = match reply {
            Reply::Ok {
                status,
                headers,
                body,
            } => (
                response(status, &headers, Some(body.len()), &body, head_only),
                false,
            ),
            Reply::OkThenClose { body } => {
                (response(200, &[], Some(body.len()), &body, false), true)
            }
            Reply::Chunked { body } => {
                let mut out = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
                for chunk in body.chunks(1000) {
                    out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    out.extend_from_slice(chunk);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
                (out, false)
            }
            Reply::Head {
                content_length,
                body,
            } => (response(200, &[], Some(content_length), &body, false), true),
            Reply::Hang => {
                tokio::time::sleep(LIFETIME).await;
                return;
            }
            Reply::Close => return,
        };
        if stream.write_all(&bytes).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if close {
            let _ = stream.shutdown().await;
            return;
        }
    }
}

fn response(
    status: u16,
    headers: &[(String, String)],
    content_length: Option<usize>,
    body: &[u8],
    head_only: bool,
) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Test\r\n").into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if let Some(length) = content_length {
        out.extend_from_slice(format!("content-length: {length}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
    out
}

/// Reads one request (head and `Content-Length` body); `None` at end of stream or on garbage.
async fn read_request<S: AsyncRead + Unpin>(stream: &mut S, buffer: &mut Vec<u8>) -> Option<Req> {
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buffer.len() > 64 * 1024 || !fill(stream, buffer).await {
            return None;
        }
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    buffer.drain(..head_end + 4);

    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < length {
        if !fill(stream, buffer).await {
            return None;
        }
    }
    let body = buffer.drain(..length).collect();
    Some(Req {
        method,
        target,
        headers,
        body,
        number: 0,
        on_connection: 0,
    })
}

async fn fill<S: AsyncRead + Unpin>(stream: &mut S, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

/// A loopback HTTP proxy: `CONNECT host:port` is tunnelled to the address `routes` gives for
/// it; any other request is answered by the proxy itself with `{request line}|{Proxy-Authorization}`.
/// Every request line it sees is kept, in order.
pub(super) struct TestProxy {
    addr: SocketAddr,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl TestProxy {
    pub async fn start(routes: Vec<(String, SocketAddr)>) -> Self {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let routes = Arc::new(routes);
        let task = tokio::spawn(async move {
            let accept_loop = async {
                while let Ok((tcp, _)) = listener.accept().await {
                    let (log, routes) = (Arc::clone(&log), Arc::clone(&routes));
                    tokio::spawn(async move {
                        let mut reader = BufReader::new(tcp);
                        let mut line = String::new();
                        let mut auth = String::new();
                        if reader.read_line(&mut line).await.is_err() {
                            return;
                        }
                        let line = line.trim_end().to_owned();
                        loop {
                            let mut header = String::new();
                            match reader.read_line(&mut header).await {
                                Ok(0) | Err(_) => return,
                                Ok(_) if header.trim().is_empty() => break,
                                Ok(_) => {
                                    if let Some((name, value)) = header.split_once(':')
                                        && name.eq_ignore_ascii_case("proxy-authorization")
                                    {
                                        value.trim().clone_into(&mut auth);
                                    }
                                }
                            }
                        }
                        log.lock().unwrap().push(line.clone());
                        let mut tcp = reader.into_inner();
                        if let Some(target) = line
                            .strip_prefix("CONNECT ")
                            .and_then(|rest| rest.split(' ').next())
                        {
                            let Some((_, upstream)) = routes.iter().find(|(t, _)| t == target)
                            else {
                                let _ = tcp.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                                return;
                            };
                            let Ok(mut upstream) = TcpStream::connect(upstream).await else {
                                return;
                            };
                            let _ = tcp
                                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                                .await;
                            let _ = tokio::io::copy_bidirectional(&mut tcp, &mut upstream).await;
                        } else {
                            let body = format!("{line}|{auth}");
                            let answer = format!(
                                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            );
                            let _ = tcp.write_all(answer.as_bytes()).await;
                        }
                    });
                }
            };
            let _ = tokio::time::timeout(LIFETIME, accept_loop).await;
        });
        Self { addr, seen, task }
    }

    /// `http://[credentials@]127.0.0.1:PORT`.
    pub fn url(&self, credentials: Option<&str>) -> String {
        match credentials {
            Some(c) => format!("http://{c}@{}", self.addr),
            None => format!("http://{}", self.addr),
        }
    }

    /// The request lines seen so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
