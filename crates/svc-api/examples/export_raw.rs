//! Every record of a model to stdout as NDJSON, one record per line, without decoding them:
//! `Records::stream_text()` hands out each record as the JSON text the server sent, a slice of
//! its page (no copy).
//!
//! Run it against the emulator (`cargo run -p svc-cli -- emulator` prints the values: its
//! `project`, `api_base_url` and `api_key`):
//!
//! ```text
//! SVC_PROJECT=demo SVC_API_BASE_URL=http://127.0.0.1:PORT/... SVC_API_KEY=svc_key_... \
//!     cargo run -p svc-api --example export_raw -- shop orders > orders.ndjson
//! ```

use std::io::Write;

use futures_util::TryStreamExt;
use svc_api::model::records::ListQuery;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(resource), Some(model)) = (args.next(), args.next()) else {
        return Err("usage: export_raw RESOURCE MODEL".into());
    };
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| "set SVC_API_KEY")?;
    let client = svc_api::Client::builder()
        .env_config(env)
        .api_key(key)
        .build()?;

    let mut records = client
        .records(resource, model)
        .stream_text(ListQuery::new().order_by("id"))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut n = 0u64;
    while let Some(record) = records.try_next().await? {
        out.write_all(record.as_bytes())?;
        out.write_all(b"\n")?;
        n += 1;
    }
    out.flush()?;
    eprintln!("{n} records");
    Ok(())
}
