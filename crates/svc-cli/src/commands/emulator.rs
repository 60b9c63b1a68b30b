//! `svc emulator`: the local emulator in the foreground, or a running one's resets and
//! snapshots (its emulator-only routes `/_emulator/projects/{project}/...`).

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use svc_api::transport::{HyperTransport, Transport};

use crate::args::{EmulatorAction, EmulatorCommand, Global};
use crate::connect;
use crate::exit::Failure;
use crate::output;

/// Runs the emulator, or sends `cmd`'s action to a running one.
pub async fn run(global: &Global, cmd: EmulatorCommand) -> Result<(), Failure> {
    let Some(action) = cmd.action else {
        return svc_emulator::cli::run(cmd.run)
            .await
            .map_err(|e| Failure::Other(format!("the emulator stopped: {e}")));
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
            format!("snapshots/{}/restore", encode_segment(name)),
            None,
        ),
        EmulatorAction::Snapshots => (Method::GET, "snapshots".to_owned(), None),
    };
    let answer = send(global, method, &tail, body).await?;
    output::value(output::resolve(global.output), &answer)
}

/// Sends one request to the running emulator's route `tail` under the project, with its API
/// key; the JSON answer, or a failure that quotes the emulator's message.
async fn send(
    global: &Global,
    method: Method,
    tail: &str,
    body: Option<Value>,
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
        encode_segment(&project.value)
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
    let answer: Value = if text.is_empty() {
        json!({})
    } else {
        serde_json::from_str(&text).map_err(|_| {
            Failure::Other(format!(
                "{url} answered {status} with something other than JSON: is {} an svc emulator?",
                base.value
            ))
        })?
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

/// A path segment with every byte but unreserved ones percent-encoded.
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
