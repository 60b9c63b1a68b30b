//! `svc proxy METHOD URL`: a request to another service through the svc HTTP proxy, with the
//! saved session. The upstream's status goes to stderr, its body to stdout, as it came.

use std::io::Write;

use http::Method;

use crate::args::{Global, ProxyArgs};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output};

pub async fn run(global: &Global, args: ProxyArgs) -> Result<(), Failure> {
    let method = Method::from_bytes(args.method.to_ascii_uppercase().as_bytes()).map_err(|_| {
        Failure::usage_hint(
            format!("{:?} is not an HTTP method", args.method),
            "give a method such as GET, POST, PUT, PATCH or DELETE",
        )
    })?;
    if !(args.url.starts_with("http://") || args.url.starts_with("https://")) {
        return Err(Failure::usage_hint(
            format!("{:?} is not an http:// or https:// URL", args.url),
            "give the full target URL, e.g. https://api.example.com/orders",
        ));
    }
    let query = args
        .query
        .iter()
        .map(|q| {
            q.split_once('=').ok_or_else(|| {
                Failure::usage_hint(
                    format!("query parameter {q:?} must look like name=value"),
                    "e.g. --query page=2",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let headers = args
        .headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(name, value)| (name.trim(), value.trim()))
                .filter(|(name, _)| !name.is_empty())
                .ok_or_else(|| {
                    Failure::usage_hint(
                        format!("header {h:?} must look like Name: value"),
                        "e.g. --header 'X-Request-Id: 42'",
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let json = args.json.as_deref().map(input::json).transpose()?;
    let raw = args.raw.as_deref().map(input::raw).transpose()?;

    let client = connect::client(global, Access::Session)?;
    let mut request = client.proxy().request(method, args.url.as_str());
    for (name, value) in query {
        request = request.query(name, value);
    }
    for (name, value) in headers {
        request = request.header(name, value);
    }
    for name in args.secret_tokens {
        request = request.secret_token(name);
    }
    if let Some(body) = &json {
        request = request.json(body);
    }
    if let Some(text) = raw {
        request = request.raw(text);
    }
    let response = request.send().await.map_err(|e| {
        let status = e.status().map(|s| s.as_u16());
        let failure = Failure::from(e);
        match status {
            Some(403) => failure.with_hint(
                "the proxy forwards only to targets on its allow-list (the emulator's default: loopback, 127.0.0.0/8 and ::1)",
            ),
            Some(502 | 504) => failure.with_hint(
                "the proxy could not reach the target (502) or it answered too slowly (504): check the URL and that the target is up",
            ),
            _ => failure,
        }
    })?;
    let status = response.status;
    eprintln!(
        "upstream answered {} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let mut out = std::io::stdout().lock();
    out.write_all(&response.body).map_err(output::io)?;
    out.flush().map_err(output::io)?;
    if status.is_client_error() || status.is_server_error() {
        return Err(Failure::Refused(format!(
            "the upstream answered {status} (its body is on stdout)"
        )));
    }
    Ok(())
}
