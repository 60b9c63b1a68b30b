//! `svc emulator`: the local emulator in the foreground, or a running one's resets,
//! snapshots, stubs and journal (its emulator-only routes `/_emulator/projects/{project}/...`).

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use svc_api::transport::{HyperTransport, Transport};

use crate::args::{EmulatorAction, EmulatorCommand, Global, RequestsArgs};
use crate::connect;
use crate::exit::Failure;
use crate::output;
use crate::signals;
use crate::url::encode;

/// Runs the emulator, or sends `cmd`'s action to a running one.
pub async fn run(global: &Global, cmd: EmulatorCommand) -> Result<(), Failure> {
    let Some(action) = cmd.action else {
        return svc_emulator::cli::run(cmd.run)
            .await
            .map_err(|e| Failure::Other(format!("the emulator stopped: {e}")));
    };
    let action = match action {
        EmulatorAction::Requests(args) => return requests(global, args).await,
        EmulatorAction::Exec(args) => return super::exec::run(args).await,
        EmulatorAction::Verify(args) => return crate::verify::run(*args).await,
        EmulatorAction::Export { dir } => return export(global, &dir).await,
        other => other,
    };
    let (method, tail, body) = match &action {
        EmulatorAction::Reset => (Method::POST, "reset".to_owned(), None),
        EmulatorAction::Snapshot { name } => (
            Method::POST,
            "snapshots".to_owned(),
            Some(json!({ "name": name })),
        ),
        EmulatorAction::Restore { name } => (
            Method::POST,
            format!("snapshots/{}/restore", encode(name)),
            None,
        ),
        EmulatorAction::Snapshots => (Method::GET, "snapshots".to_owned(), None),
        EmulatorAction::Stub { stub } => (Method::POST, "stubs".to_owned(), Some(stub_json(stub)?)),
        EmulatorAction::Stubs => (Method::GET, "stubs".to_owned(), None),
        EmulatorAction::Unstub { id: Some(id), .. } => {
            (Method::DELETE, format!("stubs/{id}"), None)
        }
        EmulatorAction::Unstub { id: None, .. } => (Method::DELETE, "stubs".to_owned(), None),
        EmulatorAction::Requests(_)
        | EmulatorAction::Exec(_)
        | EmulatorAction::Verify(_)
        | EmulatorAction::Export { .. } => unreachable!("handled above"),
    };
    let answer = send(global, method, &tail, body).await?;
    output::value(output::resolve(global.output), &answer)
}

/// `svc emulator export DIR`: the project's export from the running emulator, written to
/// `dir` (checked before anything is asked: an export never writes over other files), its
/// records as the emulator wrote them.
async fn export(global: &Global, dir: &std::path::Path) -> Result<(), Failure> {
    svc_emulator::check_export_dir(dir)
        .map_err(|e| Failure::Usage(format!("{e}; nothing was asked of the emulator")))?;
    // As the emulator's --export-on-exit and --data: other users who can write there could
    // change the export before an import reads it.
    let warning = svc_emulator::export_dir_warning(dir)
        .map_err(|e| Failure::Other(format!("{e}; nothing was asked of the emulator")))?;
    if let Some(warning) = warning {
        eprintln!("svc: warning: {warning}");
    }
    let answer = send_as(global, Method::GET, "export", None, true).await?;
    let text = answer.as_str().unwrap_or_default();
    let export: svc_emulator::ProjectExport = serde_json::from_str(text).map_err(|e| {
        Failure::Other(format!(
            "the emulator's export is not one this svc reads ({e}): use the svc of the \
             emulator's version"
        ))
    })?;
    let project = export.project.clone();
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || svc_emulator::write_export(&dir, &[export]))
        .await
        .map_err(|e| Failure::Other(format!("the export's task failed: {e}")))?
        .map_err(|e| Failure::Other(format!("cannot write the export: {e}")))?;
    eprintln!("svc: exported project {project:?}");
    Ok(())
}

/// A stub's JSON from the command line: the text, or the file after `@`. Read and parsed
/// before anything is sent.
fn stub_json(given: &str) -> Result<Value, Failure> {
    let hint = format!(
        "{}; see `svc emulator stub --help`",
        svc_emulator::STUB_SHAPE
    );
    let (text, from) = match given.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path).map_err(|e| {
                Failure::usage_hint(
                    format!("cannot read the stub file {path}: {e}; nothing was sent"),
                    hint.clone(),
                )
            })?,
            format!("the stub file {path}"),
        ),
        None => (given.to_owned(), "the stub".to_owned()),
    };
    serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| {
            Failure::usage_hint(
                format!("{from} is not a JSON object; nothing was sent"),
                hint,
            )
        })
}

/// Sends one request to the running emulator's route `tail` under the project, with its API
/// key; the JSON answer, or a failure that quotes the emulator's message.
async fn send(
    global: &Global,
    method: Method,
    tail: &str,
    body: Option<Value>,
) -> Result<Value, Failure> {
    send_as(global, method, tail, body, false).await
}

/// [`send`], with a successful answer's JSON as its text (a `Value::String`) when `raw`.
async fn send_as(
    global: &Global,
    method: Method,
    tail: &str,
    body: Option<Value>,
    raw: bool,
) -> Result<Value, Failure> {
    let settings = connect::settings(global)?;
    let hint = "give the running emulator's --api-base-url, the project's --api-key and --project \
                (SVC_API_BASE_URL, SVC_API_KEY, SVC_PROJECT, or a profile): `svc emulator` prints them \
                in its startup line";
    let (Some(base), Some(key), Some(project)) = (
        settings.api_base_url.as_ref(),
        settings.api_key.as_ref(),
        settings.project.as_ref(),
    ) else {
        return Err(Failure::usage_hint(
            "the emulator's address, its project or the project's API key is missing, so nothing was sent",
            hint,
        ));
    };
    crate::verbose::secret(&key.value);
    let url = format!(
        "{}/_emulator/projects/{}/{tail}",
        base.value.trim_end_matches('/'),
        encode(&project.value)
    );
    let mut transport = HyperTransport::builder();
    if let Some(ca) = &settings.ca_cert {
        let pem = std::fs::read(&ca.value).map_err(|e| {
            Failure::Other(format!(
                "cannot read the CA certificate {}: {e}",
                ca.value.display()
            ))
        })?;
        transport = transport.add_root_certificate_pem(&pem).map_err(|e| {
            Failure::Other(format!("the CA certificate {}: {e}", ca.value.display()))
        })?;
    }
    let transport = transport
        .build()
        .map_err(|e| Failure::Other(format!("cannot set up HTTP: {e}")))?;
    let payload = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
    let mut request = Request::builder()
        .method(method)
        .uri(&url)
        .header(header::AUTHORIZATION, format!("Bearer {}", key.value));
    if !payload.is_empty() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    let request = request
        .body(payload)
        .map_err(|e| Failure::usage_hint(format!("not a URL: {e}"), hint))?;
    let response = transport.send(request).await.map_err(|e| {
        Failure::Other(format!("cannot reach the emulator at {}: {e}", base.value)).with_hint(hint)
    })?;
    let status = response.status();
    let text = String::from_utf8_lossy(response.body()).into_owned();
    let not_json = || {
        Failure::Other(format!(
            "{url} answered {status} with something other than JSON: is {} an svc emulator?",
            base.value
        ))
    };
    let answer: Value = if text.is_empty() {
        json!({})
    } else if status.is_success() && raw {
        // The text as it came (an export's records keep their numbers' forms).
        serde_json::value::RawValue::from_string(text.clone()).map_err(|_| not_json())?;
        Value::String(text.clone())
    } else {
        serde_json::from_str(&text).map_err(|_| not_json())?
    };
    if status.is_success() {
        return Ok(answer);
    }
    let message = answer["error"].as_str().unwrap_or(text.as_str()).to_owned();
    let failure = Failure::Refused(format!("the emulator answered {status}: {message}"));
    Err(match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => failure.with_hint(hint),
        _ => failure,
    })
}

/// `svc emulator requests`: the journal's requests (the route's filters), or with `--follow`
/// each new one as a JSON line until Ctrl-C.
async fn requests(global: &Global, args: RequestsArgs) -> Result<(), Failure> {
    let mut filters: Vec<(&str, String)> = Vec::new();
    if let Some(prefix) = &args.path_prefix {
        filters.push(("path_prefix", prefix.clone()));
    }
    if let Some(method) = &args.method {
        filters.push(("method", method.clone()));
    }
    if let Some(status) = &args.status {
        filters.push(("status", status.clone()));
    }
    if args.bodies {
        filters.push(("bodies", "true".to_owned()));
    }
    let tail = |since: Option<&str>| {
        let mut query: Vec<String> = filters
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        if let Some(since) = since {
            query.push(format!("since={}", encode(since)));
        }
        match query.is_empty() {
            true => "requests".to_owned(),
            false => format!("requests?{}", query.join("&")),
        }
    };
    let given_since = args.since.clone();
    if !args.follow {
        let answer = send(global, Method::GET, &tail(given_since.as_deref()), None).await?;
        dropped_note(&answer);
        let requests = answer["requests"].as_array().cloned().unwrap_or_default();
        return output::list(output::resolve(global.output), &requests);
    }
    // Polled: each answer holds what arrived at or after the last one seen (times are to the
    // millisecond), told apart by their numbers.
    let mut stop = signals::interrupted();
    let (mut since, mut last_id) = (given_since, 0u64);
    let mut dropped_before: Option<u64> = None;
    loop {
        let answer = send(global, Method::GET, &tail(since.as_deref()), None).await?;
        missed_note(&answer, dropped_before, last_id);
        dropped_before = answer["dropped"].as_u64();
        for request in answer["requests"].as_array().into_iter().flatten() {
            let id = request["id"].as_u64().unwrap_or(0);
            if id > last_id {
                last_id = id;
                since = request["time"].as_str().map(str::to_owned).or(since);
                output::value(crate::args::Output::Ndjson, request)?;
            }
        }
        tokio::select! {
            _ = &mut stop => return Ok(()),
            () = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
        }
    }
}

/// Says on stderr when `--follow` may have missed requests: the journal dropped some since the
/// last look (`dropped_before`; at the first look, as a plain listing says it) and no longer
/// holds the last request printed (`last_id`; 0 for none). The journal drops its oldest entries
/// first: while it still holds the last one printed, it holds every newer one too.
fn missed_note(answer: &Value, dropped_before: Option<u64>, last_id: u64) {
    let Some(before) = dropped_before else {
        return dropped_note(answer);
    };
    let dropped = answer["dropped"].as_u64().unwrap_or(0);
    let holds_last = last_id != 0
        && answer["requests"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["id"].as_u64() == Some(last_id)));
    if dropped > before && !holds_last {
        eprintln!(
            "note: the journal dropped {} requests since the last look, past its capacity \
             (--journal-capacity): some may be missing here",
            dropped - before
        );
    }
}

/// Says on stderr how many requests the journal dropped (past its capacity), if any.
fn dropped_note(answer: &Value) {
    if let Some(n) = answer["dropped"].as_u64().filter(|&n| n > 0) {
        eprintln!(
            "note: the journal dropped its {n} oldest requests (past its capacity, \
             --journal-capacity)"
        );
    }
}
