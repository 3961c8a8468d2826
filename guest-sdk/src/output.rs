//! Typed output values and the sorted key/value lists WIT uses for protobuf maps.
//!
//! azd converts each output value by its `type`, and only knows `string`, `number`, `bool`,
//! `object` and `array` (the last two as JSON text). The constructors here are the only way this
//! SDK builds an output, so the type string always matches the value.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use crate::Error;
use crate::bindings::azd::provisioning0_1_0::types::OutputParameter;

/// An output value of a deployment: another name for the WIT `output-parameter`.
pub type Output = OutputParameter;

impl OutputParameter {
    /// A `string` output.
    pub fn string(value: impl Into<String>) -> Self {
        Self::typed("string", value.into())
    }

    /// A `number` output. Integers convert directly; for a float use
    /// [`Number::from_f64`], which refuses NaN and infinities (JSON has no such numbers).
    pub fn number(value: impl Into<Number>) -> Self {
        Self::typed("number", value.into().to_string())
    }

    /// A `bool` output (`true` / `false`).
    pub fn bool(value: bool) -> Self {
        Self::typed("bool", value.to_string())
    }

    /// An `object` output, carried as JSON text.
    pub fn json_object(value: Map<String, Value>) -> Self {
        Self::typed("object", Value::Object(value).to_string())
    }

    /// An `array` output, carried as JSON text.
    pub fn json_array(value: Vec<Value>) -> Self {
        Self::typed("array", Value::Array(value).to_string())
    }

    /// The output matching a JSON value's kind. JSON `null` has no azd type and is refused
    /// with an `internal` error (a provider bug, not a user mistake).
    pub fn from_json(value: Value) -> Result<Self, Error> {
        match value {
            Value::String(text) => Ok(Self::string(text)),
            Value::Number(number) => Ok(Self::number(number)),
            Value::Bool(flag) => Ok(Self::bool(flag)),
            Value::Object(map) => Ok(Self::json_object(map)),
            Value::Array(items) => Ok(Self::json_array(items)),
            Value::Null => Err(Error::internal(
                "null_output",
                "an output value is JSON null, which azd has no type for",
            )),
        }
    }

    fn typed(kind: &str, value: String) -> Self {
        Self {
            type_: kind.to_owned(),
            value,
        }
    }
}

/// Turns key/value pairs into the list form WIT uses for a map: sorted by key, keys unique.
/// When a key repeats, the last value wins, as with inserting into a map.
pub fn sorted_map<K, V>(entries: impl IntoIterator<Item = (K, V)>) -> Vec<(String, V)>
where
    K: Into<String>,
{
    entries
        .into_iter()
        .map(|(key, value)| (key.into(), value))
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

/// Looks a key up in a map-shaped list received from the host (e.g.
/// `options.virtual_env`). It does not rely on the list being sorted.
pub fn map_get<'a, V>(map: &'a [(String, V)], key: &str) -> Option<&'a V> {
    map.iter().find(|(k, _)| k == key).map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kind_and_value(output: &Output) -> (&str, &str) {
        (&output.type_, &output.value)
    }

    #[test]
    fn scalar_outputs_carry_matching_type_strings() {
        assert_eq!(
            kind_and_value(&Output::string("hello")),
            ("string", "hello")
        );
        assert_eq!(kind_and_value(&Output::number(42)), ("number", "42"));
        assert_eq!(kind_and_value(&Output::number(-7_i64)), ("number", "-7"));
        let float = Number::from_f64(1.5).unwrap();
        assert_eq!(kind_and_value(&Output::number(float)), ("number", "1.5"));
        assert_eq!(kind_and_value(&Output::bool(true)), ("bool", "true"));
        assert_eq!(kind_and_value(&Output::bool(false)), ("bool", "false"));
    }

    #[test]
    fn object_and_array_outputs_are_json_text_that_parses_back() {
        let object = json!({"name": "files", "count": 3, "nested": {"ok": true}});
        let Value::Object(map) = object.clone() else {
            unreachable!()
        };
        let output = Output::json_object(map);
        assert_eq!(output.type_, "object");
        assert_eq!(
            serde_json::from_str::<Value>(&output.value).unwrap(),
            object
        );

        let output = Output::json_array(vec![json!(1), json!("two")]);
        assert_eq!(output.type_, "array");
        assert_eq!(
            serde_json::from_str::<Value>(&output.value).unwrap(),
            json!([1, "two"])
        );
    }

    #[test]
    fn from_json_picks_the_type_of_the_value() {
        let cases = [
            (json!("s"), "string"),
            (json!(3.25), "number"),
            (json!(false), "bool"),
            (json!({"a": 1}), "object"),
            (json!([1, 2]), "array"),
        ];
        for (value, expected) in cases {
            assert_eq!(Output::from_json(value).unwrap().type_, expected);
        }
        let error = Output::from_json(Value::Null).unwrap_err();
        assert_eq!(error.code(), Some("null_output"));
    }

    #[test]
    fn string_output_is_not_json_quoted() {
        assert_eq!(Output::from_json(json!("a\"b")).unwrap().value, "a\"b");
    }

    #[test]
    fn sorted_map_sorts_by_key_and_keeps_the_last_duplicate() {
        let map = sorted_map([("b", 2), ("a", 1), ("c", 3), ("a", 10)]);
        assert_eq!(
            map,
            vec![
                ("a".to_owned(), 10),
                ("b".to_owned(), 2),
                ("c".to_owned(), 3)
            ]
        );
    }

    #[test]
    fn map_get_finds_keys_in_unsorted_lists() {
        let list = vec![("z".to_owned(), 1), ("a".to_owned(), 2)];
        assert_eq!(map_get(&list, "a"), Some(&2));
        assert_eq!(map_get(&list, "z"), Some(&1));
        assert_eq!(map_get(&list, "missing"), None);
    }
}
