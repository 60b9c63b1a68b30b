//! The listener: a manual accept loop that serves each connection with hyper-util's automatic
//! HTTP/1.1 + HTTP/2 builder, over plain TCP or TLS, and stops when told or when its handle is
//! dropped.
//!
//! Stopping: the accept loop closes the listener at once; each open connection finishes the
//! request it is serving and closes (graceful shutdown); connections still busy after
//! [`GRACE`] are cut.
//!
//! In fault mode ([`crate::Faults`]) every request goes through the fault layer first
//! (`crate::runtime::faults`), and idle HTTP/1.1 connections can be closed early.
//!
//! Limits ([`Limits`]): a connection that sends nothing (or does not finish its TLS handshake)
//! within the first-byte timeout is closed; one that takes longer than the idle timeout to send
//! a request's headers, or waits that long between requests, is closed by hyper; at the
//! connection cap the oldest connection that has not spoken yet makes room for a new one, or the
//! new one is closed at once, so the connections being served keep their answers and the
//! process keeps file descriptors for its databases.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use crate::runtime::faults::{self, FaultCounts, FaultState, Faults};
use crate::ui::Front;
use svc_emulator_http::stubs::CutConnection;
use svc_emulator_state::config::limits::Limits;

/// How long open connections may take to finish after a stop.
const GRACE: Duration = Duration::from_secs(5);

/// A running server. Dropping it tells the server to stop; [`stop`](Self::stop) also waits.
#[derive(Debug)]
pub(crate) struct ServerTask {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    faults: Option<Arc<FaultState>>,
}

impl ServerTask {
    /// Starts serving `router` on `listener`, with TLS when an acceptor is given, and with
    /// faults injected when `faults` is given.
    pub(crate) fn spawn(
        listener: TcpListener,
        router: Front,
        tls: Option<TlsAcceptor>,
        faults: Option<Faults>,
        limits: Limits,
    ) -> Self {
        let (stop, stopped) = watch::channel(false);
        let faults = faults.map(|f| Arc::new(FaultState::new(f)));
        let task = tokio::spawn(accept_loop(
            listener,
            Serving {
                router,
                tls,
                faults: faults.clone(),
                limits,
            },
            stopped,
        ));
        Self {
            stop,
            task: Some(task),
            faults,
        }
    }

    /// How many requests met each fault, in fault mode.
    pub(crate) fn fault_counts(&self) -> Option<FaultCounts> {
        self.faults.as_deref().map(FaultState::counts)
    }

    /// Stops the server and waits until the listener and every connection are closed.
    pub(crate) async fn stop(mut self) {
        self.stop.send_replace(true);
        if let Some(task) = self.task.take() {
            // A panic in the loop has nothing left to clean up.
            let _ = task.await;
        }
    }
}

impl Drop for ServerTask {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Resolves once a stop was asked for (or the handle is gone).
async fn stop_requested(stop: &mut watch::Receiver<bool>) {
    // An error means the sender was dropped, which also means stop.
    let _ = stop.wait_for(|&stop| stop).await;
}

/// What every connection is served with.
#[derive(Clone)]
struct Serving {
    router: Front,
    tls: Option<TlsAcceptor>,
    faults: Option<Arc<FaultState>>,
    limits: Limits,
}

/// A connection that has not sent its first byte yet: the first to close at the cap.
struct Silent {
    task: AbortHandle,
    /// Set by the connection once it has spoken (or finished its TLS handshake).
    spoke: Arc<AtomicBool>,
}

impl Silent {
    fn still_silent(&self) -> bool {
        !self.spoke.load(Ordering::Relaxed) && !self.task.is_finished()
    }
}

async fn accept_loop(listener: TcpListener, serving: Serving, mut stop: watch::Receiver<bool>) {
    let cap = serving.limits.connections();
    let mut connections = JoinSet::new();
    // Oldest first; entries of connections that have spoken are dropped as they are met.
    let mut silent: VecDeque<Silent> = VecDeque::new();
    loop {
        tokio::select! {
            biased;
            () = stop_requested(&mut stop) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    if connections.len() >= cap {
                        // Make room by closing the oldest connection that has said nothing;
                        // without one, this connection is the one closed (dropped here).
                        silent.retain(Silent::still_silent);
                        let Some(oldest) = silent.pop_front() else {
                            continue;
                        };
                        oldest.task.abort();
                    }
                    let spoke = Arc::new(AtomicBool::new(false));
                    let task = connections.spawn(serve(
                        stream,
                        serving.clone(),
                        Arc::clone(&spoke),
                        stop.clone(),
                    ));
                    if silent.len() >= cap {
                        silent.retain(Silent::still_silent);
                    }
                    silent.push_back(Silent { task, spoke });
                }
                // Out of file descriptors and the like: wait a little instead of spinning.
                Err(e) if !is_per_connection(&e) => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(_) => {}
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drain = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(GRACE, drain).await.is_err() {
        connections.shutdown().await;
    }
}

/// A connection's socket, reset (an RST, not a FIN) when it closes if a stub asked for it.
struct Resettable {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for Resettable {
    fn drop(&mut self) {
        if self.reset.load(Ordering::Relaxed) {
            // A linger of zero makes the close send an RST; it never blocks.
            let _ = self.stream.set_zero_linger();
        }
    }
}

impl AsyncRead for Resettable {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Resettable {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Accept errors that concern one connection only, not the listener.
fn is_per_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused | Interrupted | WouldBlock
    )
}

async fn serve(
    stream: TcpStream,
    serving: Serving,
    spoke: Arc<AtomicBool>,
    mut stop: watch::Receiver<bool>,
) {
    // Small JSON exchanges: do not let Nagle hold them back.
    let _ = stream.set_nodelay(true);
    let cut = Arc::new(AtomicBool::new(false));
    let stream = Resettable {
        stream,
        reset: Arc::clone(&cut),
    };
    let first_byte = serving.limits.first_byte();
    match serving.tls.clone() {
        None => {
            // Wait for the first byte without taking it (hyper reads it), within the limit.
            let mut byte = [0u8; 1];
            tokio::select! {
                peeked = tokio::time::timeout(first_byte, stream.stream.peek(&mut byte)) => match peeked {
                    Ok(Ok(n)) if n > 0 => {}
                    _ => return,
                },
                () = stop_requested(&mut stop) => return,
            }
            spoke.store(true, Ordering::Relaxed);
            drive(stream, serving, stop, Arc::clone(&cut)).await;
        }
        Some(acceptor) => {
            let stream = tokio::select! {
                handshake = tokio::time::timeout(first_byte, acceptor.accept(stream)) => {
                    match handshake {
                        Ok(Ok(stream)) => stream,
                        _ => return,
                    }
                }
                () = stop_requested(&mut stop) => return,
            };
            spoke.store(true, Ordering::Relaxed);
            drive(stream, serving, stop, Arc::clone(&cut)).await;
        }
    }
}

async fn drive<I>(io: I, serving: Serving, mut stop: watch::Receiver<bool>, reset: Arc<AtomicBool>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Serving {
        router,
        faults,
        limits,
        ..
    } = serving;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    if let Some(faults) = &faults {
        faults.connection_opened();
    }
    // hyper's header read timeout runs while a request's headers are awaited, so also while a
    // kept-alive connection waits for its next request: an idle connection is closed after it.
    // Fault mode may close idle connections sooner.
    let idle = faults
        .as_deref()
        .and_then(|f| f.faults().idle_close_after())
        .map_or(limits.idle(), |fault| fault.min(limits.idle()));
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(idle);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let router = router.clone();
        let faults = faults.clone();
        let reset = Arc::clone(&reset);
        async move {
            // HTTP/2 carries other streams on the connection: an error resets this stream
            // only (RST_STREAM), and the connection's close stays a plain one.
            let multiplexed = request.version() == hyper::Version::HTTP_2;
            let response = match faults {
                None => faults::run(router, request).await,
                Some(faults) => faults.serve(router, request).await?,
            };
            // A stub that answers by ending the connection.
            match response.extensions().get::<CutConnection>() {
                None => Ok(response),
                Some(cut) => {
                    if !multiplexed {
                        reset.store(cut.reset, Ordering::Relaxed);
                    }
                    Err(faults::Dropped("by a stub"))
                }
            }
        }
    });
    let connection = builder.serve_connection(TokioIo::new(io), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        () = stop_requested(&mut stop) => connection.as_mut().graceful_shutdown(),
    }
    // Errors here are the client's (a reset, a malformed request): nothing to report.
    let _ = connection.await;
}
