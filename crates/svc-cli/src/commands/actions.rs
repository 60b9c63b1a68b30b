//! `svc actions run RESOURCE NAME [--data JSON]`.

use crate::args::{ActionsCommand, Global};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output};

pub async fn run(global: &Global, cmd: ActionsCommand) -> Result<(), Failure> {
    let ActionsCommand::Run {
        resource,
        name,
        data,
    } = cmd;
    // Read and checked before connecting: a bad --data is a usage error, nothing sent.
    let inputs = inputs(&data)?;
    let client = connect::client(global, Access::Resource(&resource))?;
    let mut action = client.action(&resource, &name);
    if let Some(token) = connect::token(global) {
        action = action.token(token);
    }
    let result = action.execute(&inputs).await?;
    output::result(output::resolve(global.output), &result)
}

/// `--data`: a JSON object, inline, `@file` or `-` (stdin).
pub fn inputs(arg: &str) -> Result<serde_json::Value, Failure> {
    let value = input::json(arg)?;
    if !value.is_object() {
        return Err(Failure::usage_hint(
            "--data must be a JSON object of input names to values",
            r#"e.g. --data '{"id": 7}', or --data '{}' (the default) when there are no inputs"#,
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_must_be_an_object() {
        assert_eq!(inputs("{}").unwrap(), serde_json::json!({}));
        assert_eq!(
            inputs(r#"{"id": 7}"#).unwrap(),
            serde_json::json!({"id": 7})
        );
        for refused in ["[7]", "7", "null", r#""id""#] {
            let failure = inputs(refused).unwrap_err();
            assert_eq!(failure.code(), crate::exit::USAGE, "{refused}");
            assert!(failure.to_string().contains("JSON object"), "{refused}");
        }
        assert_eq!(inputs("{").unwrap_err().code(), crate::exit::USAGE);
    }
}
