//! `svc records`: list, export, get, create, update, delete, aggregate, group.

use serde_json::Value;
use svc_api::model::records::wire::LOOKUP_SEPARATOR;
use svc_api::model::records::{
    AggregateFunc, AggregateRequest, FilterKeyError, GroupLookup, GroupRequest, GroupRow,
    ListQuery, Lookup, parse_filter_key,
};
use svc_api::{Client, Records};

use crate::args::{ExportFormat, Filters, Global, Output, Paging, RecordsCommand, Target};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::input;
use crate::output;

pub async fn run(global: &Global, cmd: RecordsCommand) -> Result<(), Failure> {
    let resource = match &cmd {
        RecordsCommand::List { target, .. }
        | RecordsCommand::Export { target, .. }
        | RecordsCommand::Import { target, .. }
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
            page: page_number,
            per_page,
        } => {
            let mut query = ordered(query(&filters)?, order_by.as_deref());
            if let Some(p) = page_number {
                query = query.page(p);
            }
            if let Some(n) = per_page {
                query = query.per_page(n);
            }
            let page = records(&client, global, &target).list(&query).await?;
            let at = output::PageAt {
                noun: ("record", "records"),
                page: page_number.unwrap_or(1),
                per_page,
            };
            output::page(format, &page, at)
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
            let file_format = export_format(format, global.output, out.as_deref())?;
            crate::export::run(
                records(&client, global, &target),
                query,
                file_format,
                out.as_deref(),
            )
            .await
        }
        RecordsCommand::Import {
            target,
            file,
            format: file_format,
            key,
            skip_existing,
            pk,
            concurrency,
            errors,
            columns,
            skip_columns,
            no_check,
        } => {
            let import = crate::import::Import {
                file,
                format: file_format,
                key,
                skip_existing,
                pk,
                concurrency: usize::from(concurrency),
                errors,
                columns,
                skip_columns,
                check: !no_check,
            };
            let mut sql = client.sql(&target.resource);
            if let Some(token) = connect::token(global) {
                sql = sql.token(token);
            }
            let model = crate::import_check::ModelRef {
                resource: &target.resource,
                model: &target.model,
                sql,
            };
            crate::import::run(records(&client, global, &target), model, import, format).await
        }
        RecordsCommand::Get { target, pk } => output::value(
            format,
            &records(&client, global, &target).retrieve(pk).await?,
        ),
        RecordsCommand::Create { target, data } => {
            let body = one_record(input::json(&data)?, "create")?;
            output::value(
                format,
                &records(&client, global, &target).create(&body).await?,
            )
        }
        RecordsCommand::Update { target, pk, data } => {
            let body = one_record(input::json(&data)?, "update")?;
            output::value(
                format,
                &records(&client, global, &target).update(pk, &body).await?,
            )
        }
        RecordsCommand::Delete { target, pk, yes } => {
            input::confirm_delete(
                &format!("record {pk} of {}/{}", target.resource, target.model),
                yes.yes,
            )?;
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
            let func = func_named(&func)?;
            let mut request = AggregateRequest::new(func);
            if let Some(c) = column {
                if matches!(func, AggregateFunc::Sum | AggregateFunc::Avg) {
                    numeric_column(&records(&client, global, &target), &c, func).await?;
                }
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

/// The format of an export: `--format`, else `-o csv|ndjson`, else `--out`'s extension, else
/// NDJSON. Two of them that disagree (`--format ndjson --out x.csv`, `-o csv --format ndjson`)
/// are a usage error, as is `-o table` or `-o json` (an export is NDJSON or CSV).
fn export_format(
    format: Option<ExportFormat>,
    output: Option<Output>,
    out: Option<&std::path::Path>,
) -> Result<ExportFormat, Failure> {
    let name = |f: ExportFormat| match f {
        ExportFormat::Csv => "csv",
        ExportFormat::Ndjson => "ndjson",
    };
    let from_output = match output {
        None => None,
        Some(Output::Csv) => Some(ExportFormat::Csv),
        Some(Output::Ndjson) => Some(ExportFormat::Ndjson),
        Some(other) => {
            return Err(Failure::usage_hint(
                format!(
                    "an export is NDJSON or CSV, not {}",
                    if other == Output::Table {
                        "a table"
                    } else {
                        "one JSON document"
                    }
                ),
                "give --format ndjson or --format csv (or -o ndjson / -o csv), or name the --out file .csv or .ndjson",
            ));
        }
    };
    let from_name = out
        .and_then(|p| p.extension())
        .and_then(|e| e.to_str())
        .and_then(|e| match e.to_ascii_lowercase().as_str() {
            "csv" => Some(ExportFormat::Csv),
            "ndjson" | "jsonl" => Some(ExportFormat::Ndjson),
            _ => None,
        });
    let given = [
        (format, "--format"),
        (from_output, "-o"),
        (from_name, "the --out file's extension"),
    ];
    let mut chosen: Option<(ExportFormat, &str)> = None;
    for (f, said_by) in given {
        let Some(f) = f else { continue };
        match chosen {
            None => chosen = Some((f, said_by)),
            Some((c, first)) if c != f => {
                return Err(Failure::usage_hint(
                    format!("{first} says {} but {said_by} says {}", name(c), name(f)),
                    "give one format: --format, -o, or the --out file's extension (.csv, .ndjson)",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(chosen.map_or(ExportFormat::Ndjson, |(f, _)| f))
}

/// `--data` of `records create` and `records update`: one JSON object.
fn one_record(data: Value, verb: &str) -> Result<Value, Failure> {
    match &data {
        Value::Object(_) => Ok(data),
        Value::Array(items) => Err(Failure::usage_hint(
            format!(
                "--data is an array of {} values, but records {verb} takes one record: a JSON object",
                items.len()
            ),
            "to create or update many records, put them in a file (NDJSON, one object per line, or CSV) and run `svc records import RESOURCE MODEL FILE` (--key FIELD updates existing ones)",
        )),
        other => Err(Failure::usage_hint(
            format!(
                "--data must be one record, a JSON object of field values, not {}",
                crate::commands::pages::kind(other)
            ),
            r#"e.g. --data '{"status": "paid"}'"#,
        )),
    }
}

/// `sum` and `avg` add numbers: over a text column the database reads every value as 0 and
/// answers `0.0`, which looks like a result. The first non-null value of the column tells:
/// a number, a boolean or text that is a number (decimals come as text) is fine; other text
/// (`"paid"`) is refused before the aggregate is asked for.
async fn numeric_column(
    records: &Records<'_>,
    column: &str,
    func: AggregateFunc,
) -> Result<(), Failure> {
    let probe = ListQuery::new()
        .exclude(column, Lookup::IsNull, true)
        .per_page(1);
    let Ok(page) = records.list(&probe).await else {
        // The aggregate's own request reports what is wrong (an unknown column, ...).
        return Ok(());
    };
    let Some(value) = page.results.first().and_then(|r| r.get(column)) else {
        return Ok(());
    };
    let text = match value {
        Value::String(s) => s,
        _ => return Ok(()),
    };
    if text.trim().parse::<f64>().is_ok() {
        return Ok(());
    }
    Err(Failure::usage_hint(
        format!(
            "--func {} needs a numeric column, but {column:?} holds text (e.g. {text:?}): the database would read every value as 0",
            func.as_str()
        ),
        format!(
            "give a numeric --column; over text, count, min and max work (e.g. --func count, or `svc records group ... --x-column {column} --func count`)"
        ),
    ))
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

/// Where the page `paging` asks for stands, for the line under a table of `noun`s.
pub fn page_at(paging: &Paging, noun: (&'static str, &'static str)) -> output::PageAt {
    output::PageAt {
        noun,
        page: paging.page.unwrap_or(1),
        per_page: paging.per_page,
    }
}

/// `field=value`, `field__lookup=value`, `exclude__field[__lookup]=value`, read by svc-model's
/// filter-key decoder. The CLI does not know the model's fields, so every name without `__` (the
/// names `ListQuery` can send) counts as one: the last `__` starts the lookup.
fn add_filter(query: ListQuery, text: &str) -> Result<ListQuery, Failure> {
    let (key, value) = text.split_once('=').ok_or_else(|| {
        Failure::Usage(format!(
            "filter {text:?} must look like field=value or field__lookup=value"
        ))
    })?;
    let key = parse_filter_key(key, |name| !name.contains(LOOKUP_SEPARATOR)).map_err(|e| {
        Failure::Usage(match e {
            FilterKeyError::UnknownLookup { lookup, .. } => {
                let names: Vec<_> = Lookup::ALL.iter().map(|l| l.as_str()).collect();
                format!(
                    "unknown lookup {lookup:?} in {text:?}; lookups: {}",
                    names.join(", ")
                )
            }
            other => format!("invalid filter {text:?}: {other}; field names cannot contain `__`"),
        })
    })?;
    Ok(if key.exclude {
        query.exclude(key.field, key.lookup, value)
    } else {
        query.filter(key.field, key.lookup, value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> Result<String, String> {
        match add_filter(ListQuery::new(), text) {
            Ok(q) => Ok(q.to_pairs().remove(0).0),
            Err(Failure::Usage(m)) => Err(m),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn filters_are_read_with_the_wire_grammar() {
        for (text, want) in [
            ("status=paid", "status"),
            ("total__gte=3", "total__gte"),
            ("exclude__status=x", "exclude__status"),
            ("exclude__total__lt=3", "exclude__total__lt"),
            ("exclude=1", "exclude"),
            ("exclude_=1", "exclude_"),
            ("exclude__gt=1", "exclude__gt"),
            ("exclude__exclude__gt=1", "exclude__exclude__gt"),
            ("page=2", "page__exact"),
            ("draft__exact=1", "draft__exact"),
            ("a_=1", "a_"),
            ("a___gt=1", "a___gt"),
            ("name=a=b", "name"),
        ] {
            assert_eq!(key(text).as_deref(), Ok(want), "{text}");
        }
        let e = key("total__regex=1").unwrap_err();
        assert!(e.contains("unknown lookup \"regex\""), "{e}");
        let e = key("exclude__total__regex=1").unwrap_err();
        assert!(e.contains("unknown lookup \"regex\""), "{e}");
        assert!(key("a__b__gt=1").is_err());
        assert!(key("status").is_err());
    }
}
