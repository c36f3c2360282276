//! Writing the crate's JSON documents (events sent to JS, stored rows, export documents) by
//! hand instead of `derive(Serialize)`: the counterpart of [`crate::core::json`]'s decoders.
//!
//! Why: every `derive(Serialize)` type got its own `serialize` function per serializer it met
//! (`serde_json::to_string`, `to_value`) plus serde's generic map and sequence code
//! (`SerializeMap::serialize_entry`, `collect_seq`) instantiated once per field type: tens of
//! KB of the wasm module for formats this crate writes itself. Here a type's writer is a
//! plain function appending to one `String`, through helpers shared by every type ([`Obj`]
//! for an object's fields and its skip rules, [`write_str`] the one string escaper).
//!
//! The output is byte-identical to serde_json's of the derived form (the tests compare them
//! type by type): the same field order, the same skip rules (`skip_serializing_if`), serde_json's
//! string escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
//! `\u00xx`; nothing else escaped), integers in decimal, and floats through serde_json's own
//! float writer (shortest round-trip form, non-finite values as `null`).
//!
//! Every shipping path writes through here: `to_js` (events and results to JS), the stores' rows
//! (IndexedDB and the adapter store), the export document, the LLM request bodies (`Value`'s
//! writer; the crate macro `json_value!` builds them without `serde_json::to_value`) and tool
//! values. Nothing in the module calls a serde serializer, so none of serde's serializer code is
//! compiled in (about 30 KB raw). The `derive(Serialize)` left on the model types is dead code in
//! the module: the tests compare each writer against it, byte for byte. Keep it so: one
//! `serde::Serialize` call on a shipping path brings serde's serializer back (and serde_json is
//! only a dev-dependency now: the tests' reference).

use crate::core::json::{Map, Number, Value};

use crate::core::llm::byte_search::string_stop;
use crate::core::model::Timestamp;

/// A type written as JSON by hand (see the module docs).
pub trait ToJson {
    /// Appends this value's JSON text to `out`.
    fn write_json(&self, out: &mut String);

    /// This value's JSON text.
    fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }
}

/// Appends `s` as a JSON string with serde_json's escapes: `"`, `\\` and control characters,
/// nothing else. The plain runs between them are found eight bytes at a time
/// (`byte_search::string_stop`) and copied whole: every row, event and request body goes through here,
/// and a byte-by-byte loop (an iterator step and a `String::push` per byte at the size-first
/// optimisation level) was the largest cost of a custom provider's call in a fresh process.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let mut rest = s;
    while let Some(i) = string_stop(rest.as_bytes()) {
        // `i` is at an ASCII byte (a quote, a backslash or a control character): a character
        // boundary, and so is `i + 1`.
        out.push_str(rest.get(..i).unwrap_or_default());
        let b = rest.as_bytes().get(i).copied().unwrap_or(b'"');
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => "",
        };
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
        } else {
            out.push_str(esc);
        }
        rest = rest.get(i + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends an unsigned integer in decimal.
pub fn write_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[i..] {
        out.push(d as char);
    }
}

/// A number much as JavaScript prints it, for error texts that quote a rejected input: integers
/// without a fraction (`3`, `-1`), other finite numbers through serde_json's float writer
/// (`2.5`, `1e+21`), and `NaN`, `Infinity`, `-Infinity`. Not `{}` of the `f64`: Rust's float
/// formatting (`core::fmt::float`, flt2dec) is some 16 KB of wasm that nothing else needs, and
/// it prints `inf` and `1000000000000000000000`, which is not what the caller passed.
pub fn number_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e18 {
        (v as i64).to_json()
    } else {
        v.to_json()
    }
}

impl ToJson for str {
    fn write_json(&self, out: &mut String) {
        write_str(out, self);
    }
}

impl ToJson for String {
    fn write_json(&self, out: &mut String) {
        write_str(out, self);
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

impl ToJson for u32 {
    fn write_json(&self, out: &mut String) {
        write_u64(out, u64::from(*self));
    }
}

impl ToJson for u64 {
    fn write_json(&self, out: &mut String) {
        write_u64(out, *self);
    }
}

impl ToJson for i64 {
    fn write_json(&self, out: &mut String) {
        if *self < 0 {
            out.push('-');
        }
        write_u64(out, self.unsigned_abs());
    }
}

impl ToJson for f64 {
    /// serde_json's float text (shortest round-trip digits through `zmij`, its own float
    /// writer: `1.0` for whole numbers), `null` when not finite, as its serializer writes it.
    fn write_json(&self, out: &mut String) {
        match Number::from_f64(*self) {
            Some(n) => n.write(out),
            None => out.push_str("null"),
        }
    }
}

impl ToJson for Value {
    /// Compact, as serde_json's `to_string` of its `Value` writes it: object keys in the map's
    /// (sorted) order, strings with [`write_str`]'s escapes, numbers as serde_json's `Number`
    /// prints them.
    fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => b.write_json(out),
            Value::Number(n) => n.write(out),
            Value::String(s) => write_str(out, s),
            Value::Array(items) => items.write_json(out),
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

impl ToJson for Timestamp {
    fn write_json(&self, out: &mut String) {
        write_str(out, &self.to_iso());
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out);
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn write_json(&self, out: &mut String) {
        match self {
            Some(v) => v.write_json(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, out: &mut String) {
        out.push('[');
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v.write_json(out);
        }
        out.push(']');
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, out: &mut String) {
        self.as_slice().write_json(out);
    }
}

/// An object being written: `{` on [`Obj::new`], one `"name":value` per field, `}` on
/// [`Obj::end`]. The skip rules of the derived form are [`Obj::opt`] (`Option::is_none`) and
/// [`Obj::list`] (`Vec::is_empty`); anything else is an `if` at the call.
pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        Obj { out, first: true }
    }

    /// Writes `"name":` (names are the crate's own ASCII keys: nothing to escape).
    #[inline(never)]
    fn key(&mut self, name: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
        self.out
    }

    /// A field always written (`None` as `null`).
    pub fn field<T: ToJson + ?Sized>(&mut self, name: &str, v: &T) -> &mut Self {
        v.write_json(self.key(name));
        self
    }

    /// A string field always written.
    pub fn str(&mut self, name: &str, v: &str) -> &mut Self {
        write_str(self.key(name), v);
        self
    }

    /// A field left out when `None` (`skip_serializing_if = "Option::is_none"`).
    pub fn opt<T: ToJson>(&mut self, name: &str, v: &Option<T>) -> &mut Self {
        if let Some(v) = v {
            v.write_json(self.key(name));
        }
        self
    }

    /// A list left out when empty (`skip_serializing_if = "Vec::is_empty"`).
    pub fn list<T: ToJson>(&mut self, name: &str, v: &[T]) -> &mut Self {
        if !v.is_empty() {
            v.write_json(self.key(name));
        }
        self
    }

    pub fn end(&mut self) {
        self.out.push('}');
    }
}

/// A value the crate macro `json_value!` interpolates: a plain conversion to a [`Value`].
pub trait ToValue {
    fn to_value(&self) -> Value;
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::String(self.to_owned())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::String(self.clone())
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

impl ToValue for u32 {
    fn to_value(&self) -> Value {
        Value::from(*self)
    }
}

impl ToValue for i32 {
    fn to_value(&self) -> Value {
        Value::from(*self)
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::from(*self)
    }
}

impl ToValue for u64 {
    fn to_value(&self) -> Value {
        Value::from(*self)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_value)
    }
}

impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        Value::Array(self.iter().map(T::to_value).collect())
    }
}

/// `serde_json::json!` for the crate's own documents (the LLM request bodies): the same
/// syntax (`{"key": value, ...}` with literal keys, `[...]`, `null`, nested), the same `Value`,
/// but each interpolated value goes through [`ToValue`] instead of `serde_json::to_value`,
/// which would bring serde's serializer into `Value` (`serde_core::ser`) back into the module.
macro_rules! json_value {
    (null) => {
        $crate::core::json::Value::Null
    };
    ([ $($tt:tt)* ]) => {
        $crate::core::json::Value::Array($crate::core::json_write::json_items!(@[] $($tt)*))
    };
    ({ $($tt:tt)* }) => {
        $crate::core::json_write::json_fields!(@[] $($tt)*)
    };
    ($e:expr) => {
        $crate::core::json_write::ToValue::to_value(&$e)
    };
}

/// The fields of a [`json_value!`] object, one at a time, into one call of [`object`].
macro_rules! json_fields {
    (@[$($done:expr,)*]) => {
        $crate::core::json_write::object(&mut [$($done,)*])
    };
    (@[$($done:expr,)*] $k:literal : null $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_fields!(
            @[$($done,)* ($k, $crate::core::json::Value::Null),] $($($rest)*)?)
    };
    (@[$($done:expr,)*] $k:literal : [ $($v:tt)* ] $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_fields!(
            @[$($done,)* ($k, $crate::core::json_write::json_value!([ $($v)* ])),] $($($rest)*)?)
    };
    (@[$($done:expr,)*] $k:literal : { $($v:tt)* } $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_fields!(
            @[$($done,)* ($k, $crate::core::json_write::json_value!({ $($v)* })),] $($($rest)*)?)
    };
    (@[$($done:expr,)*] $k:literal : $v:expr $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_fields!(
            @[$($done,)* ($k, $crate::core::json_write::json_value!($v)),] $($($rest)*)?)
    };
}

/// A `json_value!` object from its fields: one function for every object the macro
/// builds, instead of a key copy and a map insert inlined per field (keys sorted as the map
/// keeps them; a repeated key keeps its last value, as an insert would).
pub fn object(fields: &mut [(&str, Value)]) -> Value {
    let mut map = Map::new();
    for (k, v) in fields {
        map.insert((*k).to_string(), std::mem::take(v));
    }
    Value::Object(map)
}

/// The items of a [`json_value!`] array, one at a time, into a `vec![]`.
macro_rules! json_items {
    (@[$($done:expr,)*]) => {
        vec![$($done,)*]
    };
    (@[$($done:expr,)*] null $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_items!(
            @[$($done,)* $crate::core::json::Value::Null,] $($($rest)*)?)
    };
    (@[$($done:expr,)*] [ $($x:tt)* ] $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_items!(
            @[$($done,)* $crate::core::json_write::json_value!([ $($x)* ]),] $($($rest)*)?)
    };
    (@[$($done:expr,)*] { $($x:tt)* } $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_items!(
            @[$($done,)* $crate::core::json_write::json_value!({ $($x)* }),] $($($rest)*)?)
    };
    (@[$($done:expr,)*] $x:expr $(, $($rest:tt)*)?) => {
        $crate::core::json_write::json_items!(
            @[$($done,)* $crate::core::json_write::json_value!($x),] $($($rest)*)?)
    };
}

pub(crate) use {json_fields, json_items, json_value};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    #[test]
    fn strings_are_escaped_as_serde_json_does() {
        let mut all = String::new();
        for c in 0u8..0x80 {
            all.push(c as char);
        }
        all.push_str("é ✓ 😀 \u{2028}\u{7f}/");
        for s in [all.as_str(), "", "plain", "\"\\", "tail\n"] {
            assert_eq!(
                s.to_json(),
                serde_json::to_string(s).unwrap_or_default(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn numbers_match_serde_json() {
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            12345,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            assert_eq!(n.to_json(), serde_json::to_string(&n).unwrap_or_default());
        }
        for n in [0i64, -1, 7, -10, i64::MIN, i64::MAX] {
            assert_eq!(n.to_json(), serde_json::to_string(&n).unwrap_or_default());
        }
        for x in [
            0.1,
            1e21,
            -0.0,
            0.0,
            1.0,
            2.5,
            -1.5e-7,
            1e300,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert_eq!(x.to_json(), serde_json::to_string(&x).unwrap_or_default());
        }
        assert_eq!(1.0f64.to_json(), "1.0");
        assert_eq!(f64::NAN.to_json(), "null");
    }

    /// `Value`s of every kind, nested, as serde_json's `to_string` writes them (keys in the
    /// map's order, integers and floats apart).
    #[test]
    fn values_match_serde_json() {
        let values = [
            json!(null),
            json!({}),
            json!([]),
            json!({"b": [1, -2, 2.5, 1e21, 5e-324, 1.0, -0.0, u64::MAX, i64::MIN],
                "a": {"x\n": "q\"\u{1}", "t": true, "f": false, "n": null}, "é": [[], {}]}),
            json!("\u{7f}\u{2028}😀"),
            json!(0.1),
        ];
        for v in values {
            assert_eq!(v.to_json(), serde_json::to_string(&v).unwrap_or_default());
            assert_eq!(v.to_json(), v.to_string());
        }
    }

    /// `json_value!` builds what `json!` builds, for every shape the request bodies use.
    #[test]
    fn json_value_is_json() {
        let text = "t\"x".to_string();
        let none: Option<String> = None;
        let list = vec![json!({"a": 1}), json!(null)];
        let schema = json!({"type": "object"});
        let n = 7u32;
        assert_eq!(
            json_value!({"role": "user", "text": text, "none": none, "some": Some(&text),
                "list": list, "schema": schema, "n": n, "flag": true, "null": null,
                "nested": {"deep": [{"x": text.as_str()}, null, [n, 5u64]], "empty": {}},
                "arr": []}),
            json!({"role": "user", "text": text, "none": none, "some": Some(&text),
                "list": list, "schema": schema, "n": n, "flag": true, "null": null,
                "nested": {"deep": [{"x": text.as_str()}, null, [n, 5u64]], "empty": {}},
                "arr": []})
        );
        assert_eq!(json_value!([{ "a": text }]), json!([{ "a": text }]));
        assert_eq!(json_value!(text), json!(text));
        // A repeated key keeps its last value, in the first one's sorted place.
        assert_eq!(
            json_value!({"k": 1, "a": n, "k": {"z": 2, "b": null}}),
            json!({"k": 1, "a": n, "k": {"z": 2, "b": null}})
        );
    }

    #[test]
    fn numbers_print_as_javascript_does() {
        let cases = [
            (3.0, "3"),
            (-1.0, "-1"),
            (-0.0, "0"),
            (2.5, "2.5"),
            (0.1, "0.1"),
            (-1.5e-7, "-1.5e-7"),
            (1e21, "1e+21"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, text) in cases {
            assert_eq!(number_text(v), text, "{v:?}");
        }
    }

    #[test]
    fn options_and_lists() {
        assert_eq!(None::<u32>.to_json(), "null");
        assert_eq!(Some(3u32).to_json(), "3");
        assert_eq!(Vec::<String>::new().to_json(), "[]");
        assert_eq!(
            vec!["a".to_string(), "b\"".into()].to_json(),
            r#"["a","b\""]"#
        );
        let mut out = String::new();
        Obj::new(&mut out)
            .opt("a", &None::<u32>)
            .list("b", &Vec::<u32>::new())
            .field("c", &None::<u32>)
            .str("d", "x")
            .end();
        assert_eq!(out, r#"{"c":null,"d":"x"}"#);
    }

    /// The hand-written writers against serde_json's output of the derived form: every type,
    /// optional fields set and unset, strings with every escape, floats.
    mod against_serde {
        use crate::core::json::json;

        use crate::core::approval::{ApprovalRecord, PendingApproval, ReplyState};
        use crate::core::events::*;
        use crate::core::json_write::ToJson;
        use crate::core::llm::types::{
            ChatMessage, Role, ThinkingBlock, ToolCallPart, ToolResultPart, Usage,
        };
        use crate::core::model::*;

        const NASTY: &str = "q\"b\\s/\u{1}\u{8}\u{c}\n\r\t\u{1f}\u{7f} é😀";

        fn same<T: ToJson + serde::Serialize>(v: &T) {
            let want = serde_json::to_string(v).unwrap_or_default();
            assert!(!want.is_empty());
            assert_eq!(v.to_json(), want);
        }

        fn s(x: &str) -> String {
            format!("{x}{NASTY}")
        }

        fn args() -> crate::core::json::Value {
            json!({"z": [1, 2.5, -0.0, 1e21, 0.1, null, true], "a": {"k": NASTY}})
        }

        fn world(full: bool) -> WorldData {
            WorldData {
                id: s("w"),
                name: s("n"),
                description: full.then(|| s("d")),
                turn_limit: 5,
                history_limit: u32::MAX,
                current_chat_id: full.then(|| s("c")),
                chat_llm_provider: full.then(|| s("p")),
                chat_llm_model: full.then(|| s("m")),
                created_at: Timestamp(0),
                last_updated: Timestamp(1_764_000_000_123),
            }
        }

        fn agent(full: bool) -> Agent {
            Agent {
                id: s("a"),
                name: s("n"),
                agent_type: s("t"),
                provider: s("p"),
                model: s("m"),
                system_prompt: full.then(|| s("sp")),
                temperature: full.then_some(0.1),
                max_tokens: full.then_some(7),
                history_limit: full.then_some(0),
                stream: full,
                tools: if full { vec![s("x"), s("y")] } else { vec![] },
                max_steps: if full { 12 } else { DEFAULT_MAX_STEPS },
                reasoning: full.then_some(Reasoning {
                    effort: Some(ReasoningEffort::Medium),
                    budget_tokens: Some(1024),
                }),
                llm_call_count: 3,
                last_llm_call: full.then_some(Timestamp(-1)),
                created_at: Timestamp(86_400_000),
                last_active: Timestamp(253_402_300_799_999),
                status: s("active"),
            }
        }

        fn record(full: bool) -> ToolCallRecord {
            ToolCallRecord {
                tool_call_id: s("id"),
                tool_name: s("t"),
                args: args(),
                result: full.then(args),
                error: full.then(|| s("e")),
            }
        }

        fn message(full: bool, kind: MessageKind) -> Message {
            Message {
                message_id: s("m"),
                chat_id: full.then(|| s("c")),
                sender: s("s"),
                content: s("body"),
                created_at: Timestamp(5),
                reply_to_message_id: full.then(|| s("r")),
                kind,
                tool_calls: if full {
                    vec![record(true), record(false)]
                } else {
                    vec![]
                },
            }
        }

        #[test]
        fn model_types() {
            for full in [true, false] {
                same(&world(full));
                same(&agent(full));
                same(&record(full));
                for kind in [
                    MessageKind::Message,
                    MessageKind::TurnLimit,
                    MessageKind::Pass,
                    MessageKind::Interrupted,
                ] {
                    same(&message(full, kind));
                }
                for role in [MemoryRole::User, MemoryRole::Assistant, MemoryRole::Tool] {
                    same(&MemoryEntry {
                        role,
                        content: s("c"),
                        sender: full.then(|| s("s")),
                        message_id: s("m"),
                        chat_id: full.then(|| s("c")),
                        created_at: Timestamp(9),
                        tool_calls: if full {
                            vec![ToolCallRef {
                                tool_call_id: s("i"),
                                tool_name: s("t"),
                                args: args(),
                            }]
                        } else {
                            vec![]
                        },
                        tool_call_id: full.then(|| s("i")),
                        tool_name: full.then(|| s("t")),
                    });
                }
                for title_source in [TitleSource::Default, TitleSource::Auto, TitleSource::Manual] {
                    same(&Chat {
                        id: s("c"),
                        world_id: s("w"),
                        name: s("n"),
                        description: full.then(|| s("d")),
                        message_count: u64::MAX,
                        title_source,
                        created_at: Timestamp(1),
                        updated_at: Timestamp(2),
                    });
                }
            }
            for effort in [
                None,
                Some(ReasoningEffort::Low),
                Some(ReasoningEffort::High),
            ] {
                for budget_tokens in [None, Some(0)] {
                    same(&Reasoning {
                        effort,
                        budget_tokens,
                    });
                }
            }
            for t in [None, Some(1e21), Some(-0.0), Some(2.0), Some(1e-7)] {
                same(&Agent {
                    temperature: t,
                    ..agent(true)
                });
            }
        }

        fn usage(full: bool) -> Usage {
            Usage {
                input_tokens: full.then_some(10),
                output_tokens: Some(0),
            }
        }

        fn every_event(full: bool) -> Vec<Event> {
            let o = |x: &str| full.then(|| s(x));
            let mut out = vec![
                Event::Message(message(full, MessageKind::Message)),
                Event::World(WorldEvent::AgentAdded { agent: agent(full) }),
                Event::World(WorldEvent::AgentUpdated { agent: agent(full) }),
                Event::World(WorldEvent::AgentRemoved { agent_id: s("a") }),
                Event::World(WorldEvent::WorldUpdated { world: world(full) }),
                Event::World(WorldEvent::ExternalChange {
                    world_id: s("w"),
                    current_chat_id: o("c"),
                }),
                Event::World(WorldEvent::Idle),
            ];
            for kind in [
                SseType::Start,
                SseType::Chunk,
                SseType::Reasoning,
                SseType::End,
                SseType::Error,
                SseType::ToolCall,
                SseType::ToolResult,
            ] {
                out.push(Event::Sse(SseEvent {
                    kind,
                    agent_name: s("a"),
                    message_id: s("m"),
                    content: o("c"),
                    error: o("e"),
                    partial_content: o("p"),
                    usage: full.then(|| usage(full)),
                    tool_call_id: o("i"),
                    tool_name: o("t"),
                    args: full.then(args),
                    result: full.then(args),
                }));
            }
            let system = [
                SystemEvent::Error {
                    message: s("m"),
                    code: s("c"),
                    agent_name: o("a"),
                    agent_display_name: o("d"),
                    reason: o("r"),
                    message_id: o("i"),
                    reply_to_message_id: o("t"),
                },
                SystemEvent::TurnLimit {
                    agent_name: s("a"),
                    agent_display_name: s("d"),
                    message_id: s("m"),
                    turn_limit: 5,
                },
                SystemEvent::ChatTitleUpdated {
                    chat_id: s("c"),
                    name: s("n"),
                    title_source: TitleSource::Auto,
                },
                SystemEvent::ChatSaved {
                    chat_id: s("c"),
                    message_count: 12,
                },
                SystemEvent::ChatReused { chat_id: s("c") },
                SystemEvent::NewChatCreated { chat_id: s("c") },
                SystemEvent::ChatLoaded { chat_id: s("c") },
                SystemEvent::ChatDeleted {
                    chat_id: s("c"),
                    new_current_chat_id: o("n"),
                },
                SystemEvent::Unanswered {
                    message_id: s("m"),
                    reason: UnansweredReason::MidLineMention,
                    mentions: if full { vec![s("x"), s("y")] } else { vec![] },
                },
                SystemEvent::Unanswered {
                    message_id: s("m"),
                    reason: UnansweredReason::UnknownMention,
                    mentions: vec![],
                },
                SystemEvent::Unanswered {
                    message_id: s("m"),
                    reason: UnansweredReason::NoAgents,
                    mentions: vec![],
                },
                SystemEvent::MessageReplaced {
                    old_message_id: s("o"),
                    message_id: s("m"),
                },
                SystemEvent::StepFinish {
                    agent_name: s("a"),
                    message_id: s("m"),
                    step: 1,
                    finish_reason: o("stop"),
                    usage: full.then(|| usage(false)),
                    tool_calls: if full { vec![record(true)] } else { vec![] },
                },
                SystemEvent::ApprovalRequest {
                    approval_id: s("p"),
                    agent_name: s("a"),
                    message_id: s("m"),
                    tool_call_id: s("i"),
                    tool_name: s("t"),
                    args: args(),
                },
            ];
            out.extend(system.into_iter().map(Event::System));
            for decision in [
                Decision::Respond,
                Decision::Ignore,
                Decision::TurnLimit,
                Decision::QueueFull,
            ] {
                out.push(Event::System(SystemEvent::Debug {
                    agent: s("a"),
                    message_id: s("m"),
                    decision,
                    reason: s("r"),
                }));
            }
            for outcome in [
                ApprovalOutcome::Approved,
                ApprovalOutcome::Denied,
                ApprovalOutcome::Cancelled,
            ] {
                out.push(Event::System(SystemEvent::ApprovalResolved {
                    approval_id: s("p"),
                    outcome,
                }));
            }
            out
        }

        fn chat_message(full: bool, role: Role) -> ChatMessage {
            ChatMessage {
                role,
                content: s("c"),
                tool_calls: if full {
                    vec![part(true), part(false)]
                } else {
                    vec![]
                },
                tool_result: full.then(|| ToolResultPart {
                    tool_call_id: s("i"),
                    tool_name: s("t"),
                }),
                thinking: if full {
                    vec![
                        ThinkingBlock::Thinking {
                            thinking: s("th"),
                            signature: s("sig"),
                        },
                        ThinkingBlock::Redacted { data: s("d") },
                    ]
                } else {
                    vec![]
                },
            }
        }

        fn part(full: bool) -> ToolCallPart {
            ToolCallPart {
                id: s("i"),
                name: s("n"),
                arguments: s("{\"a\":1}"),
                signature: full.then(|| s("sig")),
            }
        }

        #[test]
        fn approval_records() {
            for full in [true, false] {
                for role in [Role::System, Role::User, Role::Assistant] {
                    same(&chat_message(full, role));
                }
                let state = ReplyState {
                    step: 2,
                    messages: vec![
                        chat_message(true, Role::User),
                        chat_message(false, Role::Assistant),
                    ],
                    text: s("t"),
                    usage: full.then(|| usage(true)),
                    tool_calls: if full { vec![record(true)] } else { vec![] },
                    step_text: s("st"),
                    step_finish: full.then(|| s("tool_calls")),
                    step_usage: full.then(|| usage(false)),
                    step_calls: if full { vec![part(true)] } else { vec![] },
                    step_thinking: chat_message(full, Role::Assistant).thinking,
                    step_records: if full { vec![record(false)] } else { vec![] },
                    used_ids: if full { vec![s("a"), s("b")] } else { vec![] },
                };
                same(&state);
                same(&ApprovalRecord {
                    approval_id: s("p"),
                    world_id: s("w"),
                    chat_id: full.then(|| s("c")),
                    agent_id: s("a"),
                    reply_id: s("r"),
                    trigger: message(full, MessageKind::Message),
                    created_at: Timestamp(77),
                    state,
                });
                same(&PendingApproval {
                    approval_id: s("p"),
                    agent_name: s("a"),
                    message_id: s("m"),
                    tool_call_id: s("i"),
                    tool_name: s("t"),
                    args: args(),
                    chat_id: full.then(|| s("c")),
                    created_at: Timestamp(3),
                });
            }
        }

        #[test]
        fn events() {
            for full in [true, false] {
                for e in every_event(full) {
                    same(&e);
                    match &e {
                        Event::Message(m) => same(m),
                        Event::Sse(x) => same(x),
                        Event::System(x) => same(x),
                        Event::World(x) => same(x),
                    }
                }
                same(&usage(full));
            }
            for t in [Topic::Message, Topic::Sse, Topic::System, Topic::World] {
                same(&t);
            }
        }
    }
}
