//! `svc records`: list, export, get, create, update, delete, aggregate, group.

use serde_json::Value;
use svc_api::model::records::{
    AggregateFunc, AggregateRequest, GroupLookup, GroupRequest, GroupRow, ListQuery, Lookup,
};
use svc_api::{Client, Records};

use crate::args::{Filters, Global, Output, Paging, RecordsCommand, Target};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::input;
use crate::output;

pub async fn run(global: &Global, cmd: RecordsCommand) -> Result<(), Failure> {
    let resource = match &cmd {
        RecordsCommand::List { target, .. }
        | RecordsCommand::Export { target, .. }
        | RecordsCommand::Get { target, .. }
        | RecordsCommand::Create { target, .. }
        | RecordsCommand::Update { target, .. }
        | RecordsCommand::Delete { target, .. }
        | RecordsCommand::Aggregate { target, .. }
        | RecordsCommand::Group { target, .. } => target.resource.clone(),
    };
    let client = connect::client(global, Access::Resource(&resource))?;
    let format = output::resolve(global.output);
    match cmd {
        RecordsCommand::List {
            target,
            filters,
            order_by,
            page,
            per_page,
        } => {
            let mut query = ordered(query(&filters)?, order_by.as_deref());
            if let Some(p) = page {
                query = query.page(p);
            }
            if let Some(n) = per_page {
                query = query.per_page(n);
            }
            let page = records(&client, global, &target).list(&query).await?;
            match format {
                Output::Json => output::value(format, &page),
                _ => output::list(format, &page.results),
            }
        }
        RecordsCommand::Export {
            target,
            filters,
            order_by,
            format,
            out,
            per_page,
        } => {
            let query = ordered(query(&filters)?, order_by.as_deref()).per_page(per_page);
            crate::export::run(
                records(&client, global, &target),
                query,
                format,
                out.as_deref(),
            )
            .await
        }
        RecordsCommand::Get { target, pk } => output::value(
            format,
            &records(&client, global, &target).retrieve(pk).await?,
        ),
        RecordsCommand::Create { target, data } => {
            let body = input::json(&data)?;
            output::value(
                format,
                &records(&client, global, &target).create(&body).await?,
            )
        }
        RecordsCommand::Update { target, pk, data } => {
            let body = input::json(&data)?;
            output::value(
                format,
                &records(&client, global, &target).update(pk, &body).await?,
            )
        }
        RecordsCommand::Delete { target, pk } => {
            records(&client, global, &target)
                .delete(pk.as_str())
                .await?;
            eprintln!("deleted record {pk}");
            Ok(())
        }
        RecordsCommand::Aggregate {
            target,
            filters,
            func,
            column,
        } => {
            let mut request = AggregateRequest::new(func_named(&func)?);
            if let Some(c) = column {
                request = request.column(c);
            }
            let value: Value = records(&client, global, &target)
                .aggregate(&request, &query(&filters)?)
                .await?;
            output::value(format, &serde_json::json!({ "y_func": value }))
        }
        RecordsCommand::Group {
            target,
            filters,
            x_column,
            x_lookup,
            func,
            y_column,
        } => {
            let mut request = GroupRequest::new(x_column, func_named(&func)?);
            if let Some(l) = x_lookup {
                let lookup = GroupLookup::parse(&l).ok_or_else(|| {
                    Failure::Usage(format!("unknown --x-lookup {l:?}: use plain, auto or date_{{second,minute,hour,day,week,month,quarter,year}}"))
                })?;
                request = request.x_lookup(lookup);
            }
            if let Some(c) = y_column {
                request = request.y_column(c);
            }
            let rows: Vec<GroupRow> = records(&client, global, &target)
                .group(&request, &query(&filters)?)
                .await?;
            output::list(format, &rows)
        }
    }
}

fn records<'c>(client: &'c Client, global: &Global, target: &Target) -> Records<'c> {
    let r = client.records(&target.resource, &target.model);
    match connect::token(global) {
        Some(token) => r.token(token),
        None => r,
    }
}

fn func_named(name: &str) -> Result<AggregateFunc, Failure> {
    AggregateFunc::parse(name).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown --func {name:?}: use count, sum, min, max or avg"
        ))
    })
}

pub fn query(filters: &Filters) -> Result<ListQuery, Failure> {
    let mut query = ListQuery::new();
    for f in &filters.filters {
        query = add_filter(query, f)?;
    }
    if let Some(s) = &filters.search {
        query = query.search(s);
    }
    Ok(query)
}

pub fn ordered(query: ListQuery, order_by: Option<&str>) -> ListQuery {
    order_by
        .into_iter()
        .flat_map(|o| o.split(','))
        .filter(|f| !f.is_empty())
        .fold(query, |q, field| q.order_by(field))
}

/// Filters, search, ordering, page and page size, for the lists of users and teams.
pub fn list_query(filters: &Filters, paging: &Paging) -> Result<ListQuery, Failure> {
    let mut query = ordered(query(filters)?, paging.order_by.as_deref());
    if let Some(p) = paging.page {
        query = query.page(p);
    }
    if let Some(n) = paging.per_page {
        query = query.per_page(n);
    }
    Ok(query)
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
