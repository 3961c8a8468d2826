//! azd's `google.protobuf.Struct` values (a layer's `config`) as JSON, and
//! back: how a config crosses to a guest (as JSON text) and how `run` reads
//! one from `azure.yaml`.

use prost_types::value::Kind;
use serde_json::{Map, Number, Value};

/// Largest integer a JSON number (an f64) holds exactly: 2^53.
const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// A protobuf `Struct` as a JSON object.
pub fn struct_to_json(s: &prost_types::Struct) -> Value {
    Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

fn value_to_json(v: &prost_types::Value) -> Value {
    match &v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::NumberValue(n)) => number_to_json(*n),
        Some(Kind::StructValue(s)) => struct_to_json(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.iter().map(value_to_json).collect()),
    }
}

/// Whole numbers print without a fraction (`3`, not `3.0`), like protobuf's own
/// JSON mapping; NaN and infinities, which JSON cannot hold, become `null`.
fn number_to_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= MAX_EXACT_INT {
        #[allow(clippy::cast_possible_truncation, reason = "whole and within 2^53")]
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// A JSON value as a protobuf `Value`.
fn json_to_value(v: &Value) -> prost_types::Value {
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.iter().map(json_to_value).collect(),
        }),
        Value::Object(o) => Kind::StructValue(object_to_struct(o)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A JSON object as a protobuf `Struct`.
pub fn object_to_struct(o: &Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: o
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_json_round_trip() {
        let json: Value = serde_json::json!({
            "name": "x", "count": 3, "ratio": 0.5, "on": true, "none": null,
            "list": [1, "two", {"three": 3}], "nested": {"a": {"b": []}}
        });
        let Value::Object(o) = &json else {
            unreachable!()
        };
        let s = object_to_struct(o);
        assert_eq!(struct_to_json(&s), json);
    }

    #[test]
    fn numbers_json_cannot_hold_become_null() {
        assert_eq!(number_to_json(f64::NAN), Value::Null);
        assert_eq!(number_to_json(f64::INFINITY), Value::Null);
        assert_eq!(number_to_json(1e300).as_f64(), Some(1e300));
        assert_eq!(number_to_json(0.25).to_string(), "0.25");
        assert_eq!(number_to_json(-2.0).to_string(), "-2");
    }
}
