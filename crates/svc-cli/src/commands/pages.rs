//! `svc pages`.
//!
//! `params`, the page structure, is JSON text in a string on the wire. `create` takes it as JSON
//! (sent as that text) or as the text itself; tables show it parsed. JSON, NDJSON and CSV keep
//! the string exactly as the server stores it: its type never depends on its content, and what
//! `pages get` prints can be given back to `pages create`.

use serde_json::Value;
use svc_api::model::{PageSettings, UpdatePageSettings};

use crate::args::{Global, Output, PagesCommand};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output, pagefiles};

pub async fn run(global: &Global, cmd: PagesCommand) -> Result<(), Failure> {
    let client = connect::client(
        global,
        Access::App {
            needs_project: true,
        },
    )?;
    let format = output::resolve(global.output);
    let pages = client.pages();
    match cmd {
        PagesCommand::List => {
            let shown: Vec<Value> = pages
                .list()
                .await?
                .into_iter()
                .map(|page| shown(format, page))
                .collect();
            output::list(format, &shown)
        }
        PagesCommand::Get { page } => {
            let found = pagefiles::find(&pages, &page).await?;
            output::value(format, &shown(format, found))
        }
        PagesCommand::Create { data } => {
            let page = page_to_create(input::json(&data)?)?;
            pagefiles::check_new_name(&pages, &page).await?;
            output::value(format, &shown(format, pages.create(&page).await?))
        }
        PagesCommand::Update { page, data } => {
            let update = update_from(input::json(&data)?)?;
            let uid = pagefiles::uid_of(&pages, &page).await?;
            output::value(format, &shown(format, pages.update(uid, &update).await?))
        }
        PagesCommand::Delete { page, yes } => {
            let uid = pagefiles::uid_of(&pages, &page).await?;
            let what = if uid == page {
                format!("page {uid}")
            } else {
                format!("page {page} ({uid})")
            };
            input::confirm_delete(&what, yes.yes)?;
            pages.delete(&uid).await?;
            eprintln!("deleted {what}");
            Ok(())
        }
        PagesCommand::Pull { dir } => pagefiles::pull(&pages, &dir).await,
        PagesCommand::Diff { dir } => {
            if pagefiles::diff(&pages, &dir).await? {
                Err(Failure::Differ)
            } else {
                Ok(())
            }
        }
        PagesCommand::Push {
            dir,
            dry_run,
            prune,
            yes,
        } => pagefiles::push(&pages, &dir, dry_run, prune, yes.yes).await,
        PagesCommand::Publish { page, all } => {
            let drafts = client.pages().draft(true);
            let published = client.pages().draft(false);
            let page = if all { None } else { page };
            pagefiles::publish(&published, &drafts, page.as_deref()).await
        }
    }
}

/// The page to create from `--data`: `params` given as JSON becomes the JSON text the API
/// stores; given as a string, it is sent as it is.
pub fn page_to_create(mut data: Value) -> Result<PageSettings, Failure> {
    let Value::Object(fields) = &mut data else {
        return Err(Failure::usage_hint(
            "--data must be a JSON object: the page's fields",
            r#"e.g. --data '{"unique_name": "orders", "name": "Orders", "params": {"elements": []}}'"#,
        ));
    };
    if let Some(params) = fields.get_mut("params") {
        match params {
            Value::Object(_) | Value::Array(_) => {
                *params = Value::String(params.to_string());
            }
            Value::String(text) => {
                if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
                    return Err(Failure::usage_hint(
                        format!("params is a string, but not JSON text: {e}"),
                        r#"give params as JSON ("params": {"elements": []}) or as JSON text in a string ("params": "{\"elements\": []}")"#,
                    ));
                }
            }
            other => {
                return Err(Failure::usage_hint(
                    format!("params must be the page structure, not {}", kind(other)),
                    r#"give params as a JSON object, e.g. "params": {"elements": []}, or leave it out"#,
                ));
            }
        }
    }
    PageSettings::try_from(data).map_err(|_| Failure::Usage("--data must be a JSON object".into()))
}

/// The update from `--data`: the structure, or (a JSON string) the structure's JSON text, as
/// `jq .params` prints it.
fn update_from(data: Value) -> Result<UpdatePageSettings, Failure> {
    match data {
        Value::String(text) => UpdatePageSettings::from_params_json(text).map_err(|e| {
            Failure::usage_hint(
                format!("--data is a JSON string, but its text is not JSON: {e}"),
                r#"give the page structure as JSON, e.g. --data '{"elements": []}'"#,
            )
        }),
        Value::Object(fields) => {
            let page_fields: Vec<&str> = fields
                .keys()
                .map(String::as_str)
                .filter(|k| PAGE_FIELDS.contains(k))
                .collect();
            if !page_fields.is_empty() {
                let hint = if page_fields.contains(&"params") {
                    "give the structure itself, the value of params: e.g. `svc pages get UID | jq .params | svc pages update UID --data -`"
                } else {
                    "pages update replaces only the structure (params), e.g. --data '{\"elements\": []}'; the service changes no other field of a page"
                };
                return Err(Failure::usage_hint(
                    format!(
                        "--data holds page fields ({}), not a page structure",
                        page_fields.join(", ")
                    ),
                    hint,
                ));
            }
            UpdatePageSettings::from_structure(&Value::Object(fields))
                .map_err(|e| Failure::Usage(e.to_string()))
        }
        Value::Array(items) => UpdatePageSettings::from_structure(&Value::Array(items))
            .map_err(|e| Failure::Usage(e.to_string())),
        other => Err(Failure::usage_hint(
            format!(
                "the page structure must be a JSON object, not {}",
                kind(&other)
            ),
            r#"e.g. --data '{"elements": []}'; to delete a page, `svc pages delete UID`"#,
        )),
    }
}

/// The fields of a page (docs/contract.md 4.2): an object holding one is a page, not a page
/// structure (whose keys are `parameters`, `elements`, `popups`, `queries`, ...).
const PAGE_FIELDS: [&str; 11] = [
    "uid",
    "environment",
    "view",
    "unique_name",
    "name",
    "resource",
    "model",
    "params",
    "draft",
    "deleted",
    "date_add",
];

pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A page as printed: in a table, `params` parsed when it is JSON text.
fn shown(format: Output, page: PageSettings) -> Value {
    let mut value = Value::Object(page.into_map());
    if format == Output::Table
        && let Some(params) = value.get_mut("params")
        && let Value::String(text) = params
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        *params = parsed;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_given_as_json_are_sent_as_json_text() {
        let page =
            page_to_create(json!({"uid": "a", "params": {"elements": [1, {"b": null}]}})).unwrap();
        assert_eq!(page.params_raw(), Some(r#"{"elements":[1,{"b":null}]}"#));
        let page = page_to_create(json!({"params": [1, 2]})).unwrap();
        assert_eq!(page.params_raw(), Some("[1,2]"));
        let text = "{\n  \"elements\": []\n}";
        let page = page_to_create(json!({"params": text})).unwrap();
        assert_eq!(page.params_raw(), Some(text));
        assert!(page_to_create(json!({"params": "{not json"})).is_err());
        assert!(page_to_create(json!({"params": 3})).is_err());
        assert!(page_to_create(json!([1])).is_err());
        assert!(page_to_create(json!({"name": "no params"})).is_ok());
    }

    #[test]
    fn an_update_takes_the_structure_or_its_text() {
        let from_text = update_from(json!("{\"elements\": []}")).unwrap();
        assert_eq!(from_text.params.as_deref(), Some("{\"elements\": []}"));
        let from_json = update_from(json!({"elements": []})).unwrap();
        assert_eq!(from_json.params.as_deref(), Some(r#"{"elements":[]}"#));
        assert!(update_from(json!("not json")).is_err());
        // Page fields are not a structure; null, numbers and booleans are none either.
        for bad in [
            json!({"name": "Renamed"}),
            json!({"params": {"elements": []}}),
            json!({"elements": [], "unique_name": "x"}),
            json!(null),
            json!(3),
            json!(true),
        ] {
            assert!(update_from(bad.clone()).is_err(), "{bad}");
        }
        assert!(update_from(json!([1])).is_ok());
        assert!(update_from(json!({"parameters": [], "popups": []})).is_ok());
    }

    #[test]
    fn tables_show_params_parsed_and_json_keeps_the_text() {
        let page: PageSettings =
            serde_json::from_value(json!({"uid": "a", "params": "{\"elements\": [ ]}"})).unwrap();
        assert_eq!(
            shown(Output::Table, page.clone())["params"],
            json!({"elements": []})
        );
        for format in [Output::Json, Output::Ndjson, Output::Csv] {
            assert_eq!(
                shown(format, page.clone())["params"],
                json!("{\"elements\": [ ]}")
            );
        }
        let odd: PageSettings = serde_json::from_value(json!({"params": "not json"})).unwrap();
        assert_eq!(shown(Output::Table, odd)["params"], json!("not json"));
    }
}
