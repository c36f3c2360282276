//! Tools (spec §9): what a tool is to the engine ([`ToolDefinition`], [`ToolSpec`]), the JSON
//! Schema subset their `parameters` may use, checking a call's arguments against it, and the
//! [`ToolExecutor`] seam through which the engine runs a tool.
//!
//! The schema subset is the one every provider accepts: `type`, `properties`, `required`,
//! `items`, `enum`, `description`, `additionalProperties`, nested to any depth (up to
//! [`MAX_SCHEMA_DEPTH`]). Any other keyword is refused when the tool is registered, naming its
//! path, rather than sent to a provider that would reject the whole request (or ignored by one
//! and enforced by another). The root must be `type: "object"`: providers pass arguments as one
//! object.
//!
//! Argument checking follows the same subset and reports the first problem with its path
//! (`args.city: expected string, got number`); the engine hands that text to the model as the
//! call's result (`{"error": …}`) and never executes the tool.
//!
//! Timeouts: the core has no timer (time is injected, see `clock.rs`), and the LLM timeouts live
//! in the web adapter's transport too. So a tool's `timeoutMs` is part of the executor contract:
//! the executor gets it in [`ToolContext::timeout_ms`], must stop waiting after that long
//! (aborting the tool's signal) and resolve [`ToolError::TimedOut`]; the engine turns that into
//! `{"error": "timed out after <s> s"}`.

use crate::core::json::{Map, Value};
use serde::{Deserialize, Serialize};

use crate::core::json_write::{json_value, number_text, ToJson};

use crate::core::error::WorldError;
use crate::core::llm_client::CancelToken;
use crate::core::model::{is_tool_name, MAX_PROMPT_CHARS};
use crate::core::path::Path;
use crate::core::store::LocalBoxFuture;

/// A tool's time budget when the application gives none (spec §9).
pub const DEFAULT_TOOL_TIMEOUT_MS: u32 = 30_000;
/// The largest accepted `timeoutMs` (one hour).
pub const MAX_TOOL_TIMEOUT_MS: u32 = 3_600_000;
/// How deeply `parameters` schemas may nest.
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// The keywords of the supported JSON Schema subset.
pub const SCHEMA_KEYWORDS: [&str; 7] = [
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "description",
    "additionalProperties",
];
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// What the model is told about a tool: its name, what it does, and its parameters as a JSON
/// Schema (the subset above). This is what codecs encode into a request's tool list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Whether a call waits for the application's answer before it runs (spec §9 "Approval").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NeedsApproval {
    #[default]
    Never,
    Always,
    /// Ask the executor ([`ToolExecutor::needs_approval`]) with the call's arguments.
    ByArgs,
}

/// A registered tool: its spec plus the runtime settings the engine applies.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub spec: ToolSpec,
    pub needs_approval: NeedsApproval,
    pub timeout_ms: u32,
}

impl ToolDefinition {
    /// Checks a definition as `registerTool` receives it: the name rule, a description of at
    /// most [`MAX_PROMPT_CHARS`] characters, the schema subset, `timeoutMs` from 1 to
    /// [`MAX_TOOL_TIMEOUT_MS`]. Errors are `invalid_input` naming the field.
    pub fn validate(&self) -> Result<(), WorldError> {
        let name = &self.spec.name;
        if !is_tool_name(name) {
            return Err(WorldError::input(
                "name",
                format!("{name:?} is not a tool name; use 1 to 64 of A-Z a-z 0-9 _ -"),
            ));
        }
        let n = self.spec.description.chars().count();
        if n > MAX_PROMPT_CHARS {
            return Err(WorldError::input(
                "description",
                format!("{n} characters is too long; use at most {MAX_PROMPT_CHARS}"),
            ));
        }
        validate_parameters(&self.spec.parameters)
            .map_err(|(path, problem)| WorldError::input(&path, problem))?;
        if !(1..=MAX_TOOL_TIMEOUT_MS).contains(&self.timeout_ms) {
            return Err(WorldError::input(
                "timeoutMs",
                format!(
                    "{} is out of range; use an integer from 1 to {MAX_TOOL_TIMEOUT_MS}",
                    self.timeout_ms
                ),
            ));
        }
        Ok(())
    }
}

/// Checks a `parameters` schema against the subset. `Err((path, problem))`, the path starting
/// at `parameters`.
pub fn validate_parameters(schema: &Value) -> Result<(), (String, String)> {
    let root = "parameters";
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        _ => {
            return Err((
                format!("{root}.type"),
                "must be \"object\" (a tool takes one object of named arguments)".into(),
            ))
        }
    }
    check_schema(schema, &Path::Top.field(root), 0)
}

/// The error `problem` at `at` (the path only written here, on failure).
#[inline(never)]
fn schema_error(at: &Path, problem: &str) -> Result<(), (String, String)> {
    Err((at.to_string(), problem.to_string()))
}

fn check_schema(schema: &Value, path: &Path, depth: usize) -> Result<(), (String, String)> {
    let err = schema_error;
    if depth > MAX_SCHEMA_DEPTH {
        return err(path, "nests too deeply; use at most 32 levels");
    }
    let Value::Object(obj) = schema else {
        return err(path, "must be a JSON Schema object");
    };
    for (k, v) in obj {
        let p = &path.field(k);
        match k.as_str() {
            "type" => match v {
                Value::String(t) if TYPES.contains(&t.as_str()) => {}
                _ => {
                    return err(
                        p,
                        "must be one of \"object\", \"array\", \"string\", \"number\", \"integer\", \"boolean\", \"null\"",
                    )
                }
            },
            "description" => {
                if !v.is_string() {
                    return err(p, "must be a string");
                }
            }
            "properties" => {
                let Value::Object(props) = v else {
                    return err(p, "must be an object of schemas");
                };
                for (name, sub) in props {
                    check_schema(sub, &p.field(name), depth + 1)?;
                }
            }
            "required" => {
                let Value::Array(names) = v else {
                    return err(p, "must be an array of property names");
                };
                let props = obj.get("properties").and_then(Value::as_object);
                for (i, n) in names.iter().enumerate() {
                    let Some(n) = n.as_str() else {
                        return err(&p.item(i), "must be a string");
                    };
                    if !props.is_some_and(|m| m.contains_key(n)) {
                        return Err((
                            p.item(i).to_string(),
                            format!("{n:?} is not one of the properties"),
                        ));
                    }
                }
            }
            "items" => check_schema(v, p, depth + 1)?,
            "enum" => match v {
                Value::Array(a) if !a.is_empty() => {}
                _ => return err(p, "must be a non-empty array of values"),
            },
            "additionalProperties" => match v {
                Value::Bool(_) => {}
                other => check_schema(other, p, depth + 1)?,
            },
            _ => {
                return Err((
                    p.to_string(),
                    format!(
                        "keyword not supported; use only {}",
                        crate::core::join(&SCHEMA_KEYWORDS, ", ")
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Parses a call's JSON text and checks it against the tool's `parameters`. `Err` is the text
/// the model gets as the call's `error` (with the path of the problem).
pub fn parse_args(schema: &Value, arguments: &str) -> Result<Value, String> {
    // Some models send no arguments at all for a tool without parameters.
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args: Value = crate::core::json::from_str(text)
        .map_err(|e| format!("invalid arguments: not valid JSON ({e})"))?;
    check_args(schema, &args, &Path::Top.field("args"))
        .map_err(|e| format!("invalid arguments: {e}"))?;
    Ok(args)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// Checks `v` against a (valid) schema of the subset; `Err("<path>: <problem>")`.
fn check_args(schema: &Value, v: &Value, path: &Path) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    if let Some(t) = obj.get("type").and_then(Value::as_str) {
        if !has_type(v, t) {
            return Err(format!("{path}: expected {t}, got {}", type_name(v)));
        }
    }
    if let Some(Value::Array(options)) = obj.get("enum") {
        if !options.contains(v) {
            let mut list = String::new();
            for (i, o) in options.iter().enumerate() {
                if i > 0 {
                    list.push_str(", ");
                }
                list.push_str(&o.to_json());
            }
            return Err(format!("{path}: expected one of {list}"));
        }
    }
    if let Value::Object(fields) = v {
        check_object(obj, fields, path)?;
    }
    if let (Value::Array(items), Some(item_schema)) = (v, obj.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check_args(item_schema, item, &path.item(i))?;
        }
    }
    Ok(())
}

fn check_object(
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &Path,
) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(req)) = schema.get("required") {
        for name in req.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                return Err(format!("{path}.{name}: is required"));
            }
        }
    }
    for (k, fv) in fields {
        let p = &path.field(k);
        match props.and_then(|m| m.get(k)) {
            Some(sub) => check_args(sub, fv, p)?,
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    return Err(format!("{p}: unknown property (not allowed)"));
                }
                Some(extra @ Value::Object(_)) => check_args(extra, fv, p)?,
                _ => {}
            },
        }
    }
    Ok(())
}

/// What a running tool knows about its call (spec §9: `execute(args, {signal, agentName,
/// messageId, toolCallId})`).
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The agent whose reply made the call.
    pub agent_name: String,
    /// The id the reply will be published with (the SSE `messageId`).
    pub message_id: String,
    pub tool_call_id: String,
    /// The tool's time budget: the executor stops waiting after it and resolves
    /// [`ToolError::TimedOut`] (see the module docs).
    pub timeout_ms: u32,
    /// Cancelled when the reply is cancelled (stop, chat switch, abort) or times out: the
    /// executor aborts the tool's `signal`. The engine stops waiting at once either way.
    pub cancel: CancelToken,
}

/// Why a tool produced no result. The engine gives the model `{"error": <text>}` for each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// `execute` threw or rejected; the text is its error's message.
    #[error("{0}")]
    Failed(String),
    /// No result within the tool's `timeoutMs`.
    #[error("timed out")]
    TimedOut,
    /// `execute` returned something that is not JSON (a function, a cycle, a BigInt, …); the
    /// text says what.
    #[error("the tool returned a value that is not JSON: {0}")]
    NotJson(String),
}

/// Runs tools for the engine. The JS binding implements it over the application's `execute`
/// functions; tests use a scripted one. `?Send`, executor-agnostic like every seam of the core.
pub trait ToolExecutor {
    /// Runs `name` with arguments that already passed the schema check.
    fn execute<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        ctx: ToolContext,
    ) -> LocalBoxFuture<'a, Result<Value, ToolError>>;

    /// For tools registered with [`NeedsApproval::ByArgs`]: whether this call must wait for
    /// the application's answer. `Err` is the message of a throwing check (the call then
    /// needs approval: asking is the safe side).
    fn needs_approval<'a>(
        &'a self,
        _name: &'a str,
        _args: &'a Value,
    ) -> LocalBoxFuture<'a, Result<bool, String>> {
        Box::pin(async { Ok(false) })
    }
}

/// `{"error": "<what is wrong>"}`, the result a bad or failed call gives the model.
pub fn error_result(message: &str) -> Value {
    json_value!({ "error": message })
}

/// The text of a timeout result: `timed out after 30 s` (`1.5 s` for 1,500 ms).
pub fn timeout_message(timeout_ms: u32) -> String {
    // `number_text`, not `{}` of the f64: the same digits here, without Rust's float printing.
    let s = number_text(f64::from(timeout_ms) / 1000.0);
    format!("timed out after {s} s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    fn weather() -> Value {
        json!({"type": "object", "description": "where",
            "properties": {
                "city": {"type": "string", "description": "the city"},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "opts": {"type": "object", "properties": {"hourly": {"type": "boolean"}},
                         "additionalProperties": false}
            },
            "required": ["city"]})
    }

    #[test]
    fn the_subset_is_accepted_and_other_keywords_are_refused_with_their_path() {
        assert_eq!(validate_parameters(&weather()), Ok(()));
        assert_eq!(
            validate_parameters(&json!({"type": "object"})),
            Ok(()),
            "a tool without parameters"
        );
        let cases = [
            (json!({"type": "string"}), "parameters.type"),
            (json!({}), "parameters.type"),
            (
                json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}),
                "parameters.properties.n.minimum",
            ),
            (
                json!({"type": "object", "properties": {"n": {"type": "int"}}}),
                "parameters.properties.n.type",
            ),
            (
                json!({"type": "object", "properties": {}, "required": ["x"]}),
                "parameters.required[0]",
            ),
            (
                json!({"type": "object", "properties": {"l": {"type": "array", "items": 3}}}),
                "parameters.properties.l.items",
            ),
            (
                json!({"type": "object", "properties": {"e": {"enum": []}}}),
                "parameters.properties.e.enum",
            ),
        ];
        for (schema, path) in cases {
            match validate_parameters(&schema) {
                Err((p, _)) => assert_eq!(p, path, "{schema}"),
                Ok(()) => panic!("accepted {schema}"),
            }
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "array", "items": deep});
        }
        let schema = json!({"type": "object", "properties": {"d": deep}});
        assert!(validate_parameters(&schema).is_err());
    }

    #[test]
    fn arguments_are_checked_with_the_path_of_the_first_problem() {
        let s = weather();
        assert_eq!(
            parse_args(&s, r#"{"city": "Oslo", "days": 3, "tags": ["a"]}"#),
            Ok(json!({"city": "Oslo", "days": 3, "tags": ["a"]}))
        );
        let bad = [
            (r#"{"city": 3}"#, "args.city: expected string, got integer"),
            (r#"{}"#, "args.city: is required"),
            (
                r#"{"city": "x", "unit": "k"}"#,
                "args.unit: expected one of \"c\", \"f\"",
            ),
            (
                r#"{"city": "x", "days": 1.5}"#,
                "args.days: expected integer, got number",
            ),
            (
                r#"{"city": "x", "tags": ["a", 2]}"#,
                "args.tags[1]: expected string, got integer",
            ),
            (
                r#"{"city": "x", "opts": {"daily": true}}"#,
                "args.opts.daily: unknown property (not allowed)",
            ),
            (r#"["Oslo"]"#, "args: expected object, got array"),
        ];
        for (args, want) in bad {
            assert_eq!(
                parse_args(&s, args),
                Err(format!("invalid arguments: {want}")),
                "{args}"
            );
        }
        let e = parse_args(&s, r#"{"city": "Os"#).err().unwrap_or_default();
        assert!(e.starts_with("invalid arguments: not valid JSON ("), "{e}");
        assert_eq!(
            parse_args(&json!({"type": "object"}), ""),
            Ok(json!({})),
            "no arguments at all means an empty object"
        );
    }

    #[test]
    fn definitions_are_validated_field_by_field() {
        let ok = ToolDefinition {
            spec: ToolSpec {
                name: "get_weather".into(),
                description: "Weather".into(),
                parameters: weather(),
            },
            needs_approval: NeedsApproval::Never,
            timeout_ms: DEFAULT_TOOL_TIMEOUT_MS,
        };
        assert_eq!(ok.validate(), Ok(()));
        let field = |d: ToolDefinition| match d.validate() {
            Err(WorldError::InvalidInput { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let mut d = ok.clone();
        d.spec.name = "get weather".into();
        assert_eq!(field(d), "name");
        let mut d = ok.clone();
        d.timeout_ms = 0;
        assert_eq!(field(d), "timeoutMs");
        for n in [NeedsApproval::Always, NeedsApproval::ByArgs] {
            let mut d = ok.clone();
            d.needs_approval = n;
            assert_eq!(d.validate(), Ok(()), "approvals are built (spec §9)");
        }
        let mut d = ok.clone();
        d.spec.parameters = json!({"type": "object", "properties": {"x": {"format": "date"}}});
        assert_eq!(field(d), "parameters.properties.x.format");
    }

    #[test]
    fn timeout_text() {
        assert_eq!(timeout_message(30_000), "timed out after 30 s");
        assert_eq!(timeout_message(1_500), "timed out after 1.5 s");
        assert_eq!(timeout_message(50), "timed out after 0.05 s");
        assert_eq!(timeout_message(1), "timed out after 0.001 s");
        assert_eq!(timeout_message(u32::MAX), "timed out after 4294967.295 s");
    }
}
