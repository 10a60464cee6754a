//! The `id` a client may give any message, echoed on the answer.

use serde::{Deserialize, Serialize};

/// The longest string `id` a client may give a message (in bytes).
pub const MAX_ID_LEN: usize = 64;
/// The largest integer `id` (in absolute value): exact in every JSON reader (2^53 - 1).
pub const MAX_ID_INT: i64 = (1 << 53) - 1;

/// A client's name for one of its messages (`"id"` beside `"type"`, in any message): a
/// string of at most [`MAX_ID_LEN`] bytes or an integer of at most [`MAX_ID_INT`] in
/// absolute value. The server echoes it on the answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Int(i64),
    Str(String),
}

impl RequestId {
    /// The id in a message's `id` field, or why it is not one.
    pub fn from_json(value: &serde_json::Value) -> Result<RequestId, String> {
        match value {
            serde_json::Value::String(s) if s.len() <= MAX_ID_LEN => Ok(RequestId::Str(s.clone())),
            serde_json::Value::String(s) => Err(format!(
                "a string id has at most {MAX_ID_LEN} bytes, not {}",
                s.len()
            )),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) if i.abs() <= MAX_ID_INT => Ok(RequestId::Int(i)),
                _ => Err(format!(
                    "an integer id is at most {MAX_ID_INT} in absolute value, not {n}"
                )),
            },
            other => Err(format!(
                "an id is a string or an integer, not {}",
                match other {
                    serde_json::Value::Null => "null",
                    serde_json::Value::Bool(_) => "a boolean",
                    serde_json::Value::Array(_) => "an array",
                    _ => "an object",
                }
            )),
        }
    }
}

impl schemars::JsonSchema for RequestId {
    fn schema_name() -> String {
        "RequestId".into()
    }
    fn json_schema(_gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let value = serde_json::json!({
            "description": format!(
                "A client's name for one of its messages, echoed on the answer: a string of at most {MAX_ID_LEN} bytes or an integer of at most 2^53 - 1 in absolute value."
            ),
            "anyOf": [
                {"type": "string", "maxLength": MAX_ID_LEN},
                {"type": "integer", "minimum": -MAX_ID_INT, "maximum": MAX_ID_INT}
            ]
        });
        serde_json::from_value(value).expect("a schema")
    }
}
