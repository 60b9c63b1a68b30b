//! Building a client from the global options.

use svc_api::Client;

use crate::args::Global;
use crate::exit::Failure;

pub fn client(global: &Global) -> Result<Client, Failure> {
    // SVC_* variables were read by clap; the draft flag also honours SVC_DRAFT's words.
    let env_draft = std::env::var("SVC_DRAFT")
        .ok()
        .and_then(|v| svc_api::auth::parse_draft(&v));
    let mut builder = Client::builder().draft(global.draft || env_draft.unwrap_or(false));
    if let Some(p) = &global.project {
        builder = builder.project(p);
    }
    if let Some(e) = &global.environment {
        builder = builder.environment(e);
    }
    if let Some(u) = &global.api_base_url {
        builder = builder.api_base_url(u);
    }
    if let Some(u) = &global.app_base_url {
        builder = builder.app_base_url(u);
    }
    if let Some(k) = &global.api_key {
        builder = builder.api_key(k);
    }
    if let Some(path) = &global.ca_cert {
        let pem = std::fs::read(path).map_err(|e| {
            Failure::Usage(format!("cannot read --ca-cert {}: {e}", path.display()))
        })?;
        builder = builder.add_root_certificate_pem(pem);
    }
    Ok(builder.build()?)
}
