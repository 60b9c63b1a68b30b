//! Page settings: the configuration of one page of an application.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::object::{bool_field, open_object, str_field};

/// The settings of one page: an open JSON object that keeps every field it was given.
///
/// Known fields have typed accessors. `params` is a **string** holding JSON (the page structure,
/// with top-level keys such as `parameters`, `elements`, `popups`, `queries`); read it with
/// [`params`](Self::params) and write it with [`set_params`](Self::set_params).
///
/// ```
/// use svc_model::PageSettings;
/// use serde_json::json;
///
/// let page = PageSettings::new()
///     .with("unique_name", "orders")
///     .with("name", "Orders")
///     .with("theme", "dark") // unknown fields are kept
///     .with_params(&json!({"elements": []}))
///     .unwrap();
/// assert_eq!(page.unique_name(), Some("orders"));
/// assert_eq!(page.params_raw(), Some(r#"{"elements":[]}"#));
/// let structure: serde_json::Value = page.params().unwrap().unwrap();
/// assert_eq!(structure["elements"], json!([]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PageSettings(Map<String, Value>);

open_object!(PageSettings);

impl PageSettings {
    /// An empty page settings object, to fill in for a create.
    pub fn new() -> Self {
        Self::default()
    }

    /// The page's unique id (`uid`), assigned by the server when not given.
    pub fn uid(&self) -> Option<&str> {
        str_field(&self.0, "uid")
    }

    /// `unique_name`.
    pub fn unique_name(&self) -> Option<&str> {
        str_field(&self.0, "unique_name")
    }

    /// `name`, the human-readable title.
    pub fn name(&self) -> Option<&str> {
        str_field(&self.0, "name")
    }

    /// `environment`.
    pub fn environment(&self) -> Option<&str> {
        str_field(&self.0, "environment")
    }

    /// `view`.
    pub fn view(&self) -> Option<&str> {
        str_field(&self.0, "view")
    }

    /// `resource`, the resource the page shows, if any.
    pub fn resource(&self) -> Option<&str> {
        str_field(&self.0, "resource")
    }

    /// `model`, the model the page shows, if any.
    pub fn model(&self) -> Option<&str> {
        str_field(&self.0, "model")
    }

    /// Whether this copy comes from the draft set (`draft`).
    pub fn is_draft(&self) -> Option<bool> {
        bool_field(&self.0, "draft")
    }

    /// `deleted`.
    pub fn is_deleted(&self) -> Option<bool> {
        bool_field(&self.0, "deleted")
    }

    /// `date_add`, an RFC 3339 timestamp set by the server.
    pub fn date_add(&self) -> Option<&str> {
        str_field(&self.0, "date_add")
    }

    /// `params` as the JSON text it is on the wire.
    pub fn params_raw(&self) -> Option<&str> {
        str_field(&self.0, "params")
    }

    /// Parses `params` into any page structure type (or [`serde_json::Value`]).
    /// `Ok(None)` when there is no `params` string.
    pub fn params<T: DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        self.params_raw().map(serde_json::from_str).transpose()
    }

    /// Serializes `structure` to JSON text and stores it as `params`.
    pub fn set_params<T: Serialize + ?Sized>(
        &mut self,
        structure: &T,
    ) -> Result<(), serde_json::Error> {
        let text = serde_json::to_string(structure)?;
        self.0.insert("params".to_owned(), Value::String(text));
        Ok(())
    }

    /// Builder form of [`set_params`](Self::set_params).
    pub fn with_params<T: Serialize + ?Sized>(
        mut self,
        structure: &T,
    ) -> Result<Self, serde_json::Error> {
        self.set_params(structure)?;
        Ok(self)
    }
}

/// The body of a page settings update: `{"params": "<JSON text>"}`.
///
/// A body without `params` changes nothing.
///
/// ```
/// use svc_model::UpdatePageSettings;
/// #[derive(serde::Serialize)]
/// struct Structure { elements: Vec<String> }
///
/// let update = UpdatePageSettings::from_structure(&Structure { elements: vec!["table".into()] }).unwrap();
/// assert_eq!(serde_json::to_string(&update).unwrap(), r#"{"params":"{\"elements\":[\"table\"]}"}"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdatePageSettings {
    /// The page structure as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<String>,
}

impl UpdatePageSettings {
    /// An update built from any serializable page structure.
    pub fn from_structure<T: Serialize + ?Sized>(structure: &T) -> Result<Self, serde_json::Error> {
        Ok(Self {
            params: Some(serde_json::to_string(structure)?),
        })
    }

    /// An update from JSON text, checked to be valid JSON.
    pub fn from_params_json(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let text = text.into();
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(Self { params: Some(text) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_every_field_through_a_round_trip() {
        let raw =
            json!({"uid": "u1", "params": "{\"a\":1}", "custom": {"deep": [1, 2]}, "draft": true});
        let page: PageSettings = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(page.uid(), Some("u1"));
        assert_eq!(page.is_draft(), Some(true));
        assert_eq!(serde_json::to_value(&page).unwrap(), raw);
    }

    #[test]
    fn params_that_are_not_json_are_an_error_not_a_panic() {
        let page = PageSettings::new().with("params", "{not json");
        assert!(page.params::<Value>().is_err());
        let none = PageSettings::new().with("params", 3);
        assert_eq!(none.params::<Value>().unwrap(), None);
    }

    #[test]
    fn update_from_json_text_is_checked() {
        assert!(UpdatePageSettings::from_params_json("{\"a\": 1}").is_ok());
        assert!(UpdatePageSettings::from_params_json("{").is_err());
        assert_eq!(
            serde_json::to_string(&UpdatePageSettings::default()).unwrap(),
            "{}"
        );
    }
}
