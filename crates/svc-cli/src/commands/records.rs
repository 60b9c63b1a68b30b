//! `svc records`.

use svc_api::model::records::{ListQuery, Lookup};

use crate::args::{Global, RecordsCommand, Target};
use crate::exit::Failure;
use crate::{connect, input, output};

pub async fn run(global: &Global, cmd: RecordsCommand) -> Result<(), Failure> {
    let client = connect::client(global)?;
    let records = |t: &Target| {
        let r = client.records(&t.resource, &t.model);
        match &global.token {
            Some(token) => r.token(token),
            None => r,
        }
    };
    match cmd {
        RecordsCommand::List {
            target,
            filters,
            order_by,
            search,
            page,
            per_page,
        } => {
            let mut query = ListQuery::new();
            for f in &filters {
                query = add_filter(query, f)?;
            }
            if let Some(o) = order_by {
                for field in o.split(',').filter(|f| !f.is_empty()) {
                    query = query.order_by(field);
                }
            }
            if let Some(s) = search {
                query = query.search(s);
            }
            if let Some(p) = page {
                query = query.page(p);
            }
            if let Some(n) = per_page {
                query = query.per_page(n);
            }
            let page = records(&target).list(&query).await?;
            match global.output {
                crate::args::Output::Json => output::value(global.output, &page),
                crate::args::Output::Ndjson => output::list(global.output, &page.results),
            }
        }
        RecordsCommand::Get { target, pk } => {
            output::value(global.output, &records(&target).retrieve(pk).await?)
        }
        RecordsCommand::Create { target, data } => {
            let body = input::json(&data)?;
            output::value(global.output, &records(&target).create(&body).await?)
        }
        RecordsCommand::Update { target, pk, data } => {
            let body = input::json(&data)?;
            output::value(global.output, &records(&target).update(pk, &body).await?)
        }
        RecordsCommand::Delete { target, pk } => {
            records(&target).delete(pk.as_str()).await?;
            eprintln!("deleted record {pk}");
            Ok(())
        }
    }
}

/// `field=value`, `field__lookup=value`, `exclude__field[__lookup]=value`.
fn add_filter(query: ListQuery, text: &str) -> Result<ListQuery, Failure> {
    let (key, value) = text.split_once('=').ok_or_else(|| {
        Failure::Usage(format!(
            "filter {text:?} must look like field=value or field__lookup=value"
        ))
    })?;
    let (exclude, key) = match key.strip_prefix("exclude__") {
        Some(rest) => (true, rest),
        None => (false, key),
    };
    let (field, lookup) = match key.rsplit_once("__") {
        Some((field, name)) => {
            let lookup = Lookup::parse(name).ok_or_else(|| {
                let names: Vec<_> = Lookup::ALL.iter().map(|l| l.as_str()).collect();
                Failure::Usage(format!(
                    "unknown lookup {name:?} in {text:?}; lookups: {}",
                    names.join(", ")
                ))
            })?;
            (field, lookup)
        }
        None => (key, Lookup::Exact),
    };
    Ok(if exclude {
        query.exclude(field, lookup, value)
    } else {
        query.filter(field, lookup, value)
    })
}
