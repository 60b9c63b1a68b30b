//! `svc sql RESOURCE QUERY [--param name=value ...]`.

use serde_json::Value;

use crate::args::{Global, SqlArgs};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output};

pub async fn run(global: &Global, args: SqlArgs) -> Result<(), Failure> {
    let query = input::query(&args.query)?;
    let params = args
        .params
        .iter()
        .map(|p| param(p))
        .collect::<Result<Vec<_>, _>>()?;
    let client = connect::client(global, Access::Resource(&args.resource))?;
    let mut sql = client.sql(&args.resource);
    if let Some(token) = connect::token(global) {
        sql = sql.token(token);
    }
    let mut request = sql.query(query);
    for (name, value) in params {
        request = request.bind(name, value);
    }
    let answer = request.send().await?;
    output::rows(
        output::resolve(global.output),
        &answer.columns,
        &answer.data,
    )
}

/// `name=value`: the value is JSON when it parses as JSON, else the text as a string.
fn param(text: &str) -> Result<(String, Value), Failure> {
    let (name, value) = text.split_once('=').ok_or_else(|| {
        Failure::usage_hint(
            format!("parameter {text:?} must look like name=value"),
            "write :name in the query and pass --param name=value (e.g. --param id=7 --param city=Paris)",
        )
    })?;
    let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
    Ok((name.to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_are_json_when_they_parse() {
        let v = |t: &str| param(t).unwrap().1;
        assert_eq!(v("id=7"), json!(7));
        assert_eq!(v("x=1.5"), json!(1.5));
        assert_eq!(v("ok=true"), json!(true));
        assert_eq!(v("none=null"), json!(null));
        assert_eq!(v("city=Paris"), json!("Paris"));
        assert_eq!(v(r#"code="007""#), json!("007"));
        assert_eq!(v("zip=01234"), json!("01234"));
        assert_eq!(v("ids=[1,2]"), json!([1, 2]));
        assert_eq!(v("empty="), json!(""));
        assert_eq!(v("eq=a=b"), json!("a=b"));
        assert_eq!(param("name=x").unwrap().0, "name");
        assert!(param("novalue").is_err());
    }
}
