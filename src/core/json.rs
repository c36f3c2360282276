//! Decoding the crate's JSON documents (stored rows, import documents, the JS API's plain-data
//! arguments) into the model types, by hand instead of `derive(Deserialize)`.
//!
//! Why: every `derive(Deserialize)` type read with `serde_json::from_value` got its own copy of
//! serde_json's `Value` deserializer (the map walk, the array walk, the field visitors): about
//! 110 KB of the wasm module in some forty instances, one per type, for formats this crate
//! writes itself. Here a type's decoder is a plain function over an owned [`Value`] (the
//! crate's own, `crate::core::json_value`, read from text by [`from_str`]): it takes its fields out of the object one by one through
//! [`Fields`], whose helpers are shared by every type ([`FromJson`] for the field kinds:
//! strings, integers, numbers, booleans, timestamps, lists, nested types). A struct's decoder
//! is one `from_json_struct!` list (its fields, their JSON names and getters), the one source
//! of both its reads and the names it knows.
//!
//! Small by design (the decoders are in every build): what does not depend on the decoded
//! type is written once, not generic (taking a field out, missing fields, the first error and
//! its path, walking a list or an object, building the error texts), and the per-type code is
//! a thin shim over it: one field reader per field type, one loop per list item type.
//!
//! The rules are serde's, so every stored row and export document reads exactly as before: a
//! field without a default must be present; `Option` fields read `null` or a missing field as
//! `None`; integers must be JSON integers in range (`1.0` is not an integer); types that deny
//! unknown fields name the first unknown one. Errors carry the path of the offending field
//! (`toolCalls[0].args`) and say what was expected, without printing the value (no float
//! formatting; a long string is never copied into a message).
//!
//! The model types still implement `serde::Deserialize` (`deserialize_via_json!`): by way of
//! a [`Value`], so that any serde deserializer reads them with these same rules and one shared
//! instance of `Value`'s own decoder per deserializer. No shipping path calls it (the tests
//! and serde's derives of the tests' types do), so no serde deserializer is in the module.

use std::fmt;

pub use crate::core::json_parse::{from_str, ParseError};
pub use crate::core::json_value::{Map, Number, Value};

use crate::core::model::Timestamp;

/// Why a JSON value is not the type asked for, and where: a [`JsonProblem`], boxed. Every
/// decoder returns a `Result<T, JsonError>` and passes errors up through each level of the
/// value; boxed, an error moves as one pointer instead of two strings' worth of words, in
/// every decoder and field reader (each copy of them was some 30 bytes of wasm more).
pub type JsonError = Box<JsonProblem>;

/// What [`JsonError`] points to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonProblem {
    /// The path of the offending field below the decoded value (`""` for the value itself):
    /// `name`, `toolCalls[1].args`, `[3]`.
    pub path: String,
    /// What is wrong, phrased to follow the path: `is missing`, `must be a string`.
    pub problem: String,
}

impl JsonProblem {
    pub fn new(problem: impl Into<String>) -> JsonError {
        Box::new(JsonProblem {
            path: String::new(),
            problem: problem.into(),
        })
    }

    /// The same error one level up: inside the field `name`.
    #[must_use]
    pub fn in_field(mut self: Box<Self>, name: &str) -> JsonError {
        self.path = if self.path.is_empty() {
            name.to_string()
        } else if self.path.starts_with('[') {
            format!("{name}{}", self.path)
        } else {
            format!("{name}.{}", self.path)
        };
        self
    }

    /// The same error one level up: at index `i` of a list.
    #[must_use]
    fn in_item(mut self: Box<Self>, i: usize) -> JsonError {
        self.path = if self.path.is_empty() || self.path.starts_with('[') {
            format!("[{i}]{}", self.path)
        } else {
            format!("[{i}].{}", self.path)
        };
        self
    }
}

impl fmt::Display for JsonProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{} {}", self.path, self.problem)
        }
    }
}

impl std::error::Error for JsonProblem {}

/// The kind of a JSON value, for "must be a string (got a number)".
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `must be {expected} (got {kind})`.
#[inline(never)]
pub fn wrong(expected: &str, v: &Value) -> JsonError {
    JsonProblem::new(format!("must be {expected} (got {})", kind(v)))
}

/// A type read from JSON by the crate's own rules (see the module docs).
pub trait FromJson: Sized {
    fn from_json(v: Value) -> Result<Self, JsonError>;

    /// The field `name` of `f` as this type (missing is an error when `required`), or the
    /// placeholder `Self::default()` with the error kept: [`Fields::req`] and [`Fields::opt`].
    /// `Option<T>` reads its fields through `T`'s decoder, so an optional field costs no
    /// decoder and no field reader of its own beside `T`'s.
    #[inline(always)]
    fn field(f: &mut Fields, name: &str, required: bool) -> Self
    where
        Self: Default,
    {
        f.get(name, required)
    }
}

impl FromJson for Value {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        Ok(v)
    }
}

impl FromJson for String {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        match v {
            Value::String(s) => Ok(s),
            v => Err(wrong("a string", &v)),
        }
    }
}

impl FromJson for bool {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        v.as_bool().ok_or_else(|| wrong("true or false", &v))
    }
}

impl FromJson for u64 {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        v.as_u64()
            .ok_or_else(|| wrong("an integer from 0 to 18446744073709551615", &v))
    }
}

impl FromJson for u32 {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| wrong("an integer from 0 to 4294967295", &v))
    }
}

impl FromJson for i64 {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        v.as_i64().ok_or_else(|| {
            wrong(
                "an integer from -9223372036854775808 to 9223372036854775807",
                &v,
            )
        })
    }
}

impl FromJson for f64 {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        v.as_f64().ok_or_else(|| wrong("a number", &v))
    }
}

impl FromJson for Timestamp {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        let s = String::from_json(v)?;
        Timestamp::parse_iso(&s).ok_or_else(|| bad_timestamp(&s))
    }
}

#[inline(never)]
fn bad_timestamp(s: &str) -> JsonError {
    JsonProblem::new(format!(
        "must be an ISO-8601 UTC timestamp such as 2026-11-22T07:30:00.000Z (got {:?})",
        excerpt(s)
    ))
}

/// At most 40 characters of `s`, for an error message.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// `null` is `None` (as serde reads an `Option`).
impl<T: FromJson> FromJson for Option<T> {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        match v {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }

    #[inline(always)]
    fn field(f: &mut Fields, name: &str, required: bool) -> Self {
        f.read(name, required, true)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        let items = items(v)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            match T::from_json(item) {
                Ok(t) => out.push(t),
                Err(e) => return Err(e.in_item(i)),
            }
        }
        Ok(out)
    }
}

/// The items of a list, once for every item type.
#[inline(never)]
fn items(v: Value) -> Result<Vec<Value>, JsonError> {
    match v {
        Value::Array(items) => Ok(items),
        v => Err(wrong("an array", &v)),
    }
}

/// An object of `T` values, keys in order.
impl<T: FromJson> FromJson for crate::core::vec_map::VecMap<String, T> {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        let mut out = Self::new();
        entries(v, &mut |k, v| {
            let item = T::from_json(v)?;
            // The object iterates in key order, so each insert appends.
            out.insert(std::mem::take(k), item);
            Ok(())
        })?;
        Ok(out)
    }
}

/// The walk of an object's entries, once for every value type: `each` decodes the value and
/// keeps the entry (taking the key); its error gets the key.
#[inline(never)]
fn entries(
    v: Value,
    each: &mut dyn FnMut(&mut String, Value) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    let Value::Object(map) = v else {
        return Err(wrong("an object", &v));
    };
    for (mut k, v) in map {
        each(&mut k, v).map_err(|e| e.in_field(&excerpt(&k)))?;
    }
    Ok(())
}

/// A string-valued enum: the index in `names` of the string `v` (the caller maps it to its
/// variant), or an error listing the names.
pub fn one_of(v: Value, names: &[&str]) -> Result<usize, JsonError> {
    match v.as_str().and_then(|s| names.iter().position(|n| *n == s)) {
        Some(i) => Ok(i),
        None => Err(not_one_of(&v, names)),
    }
}

#[inline(never)]
fn not_one_of(v: &Value, names: &[&str]) -> JsonError {
    let mut list = String::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            list.push_str(", ");
        }
        list.push_str(&format!("{n:?}"));
    }
    match v.as_str() {
        Some(s) => JsonProblem::new(format!("must be one of {list} (got {:?})", excerpt(s))),
        None => wrong(&format!("one of {list}"), v),
    }
}

/// The fields of one JSON object, taken out one at a time by the type's decoder.
///
/// The getters do not fail: the first error is kept (with its field's path) and the getter
/// returns a placeholder (`T::default()`), and [`Fields::done`] returns the error in place of
/// the assembled value. A decoder is then one straight line of getter calls, with no early
/// return (and no cleanup of the fields read so far) after each field: that is what keeps
/// one decoder per type small. The work that does not depend on the field's type (taking
/// the field out, missing, keeping the first error with its path, dropping what is left) is
/// done by functions that are not generic, so a field type costs one small `Fields::read`.
pub struct Fields {
    map: Map<String, Value>,
    err: Option<JsonError>,
}

impl Fields {
    /// [`Fields::of`] with its first error returned at once: what the tests of the getters
    /// start from (the decoders use `of`).
    #[cfg(test)]
    pub fn new(v: Value, known: &[&str], deny_unknown: bool) -> Result<Self, JsonError> {
        let mut f = Fields::of(v, known, deny_unknown);
        match f.err.take() {
            Some(e) => Err(e),
            None => Ok(f),
        }
    }

    /// The fields of `v`, which must be an object. With `deny_unknown`, a key outside `known`
    /// is an error naming it (serde's `deny_unknown_fields`); otherwise unknown keys are
    /// ignored. An error (not an object, an unknown field) is kept as the first one, so the
    /// getters read nothing and [`Fields::done`] returns it; the decoder has no early return
    /// to clean up after.
    #[inline(never)]
    pub fn of(v: Value, known: &[&str], deny_unknown: bool) -> Self {
        let (map, err) = match v {
            Value::Object(map) => {
                let mut unknown = None;
                if deny_unknown {
                    for k in map.keys() {
                        if !known.contains(&k.as_str()) {
                            unknown = Some(unknown_field(k, known));
                            break;
                        }
                    }
                }
                (map, unknown)
            }
            v => (Map::new(), Some(wrong("an object", &v))),
        };
        Fields { map, err }
    }

    /// The value of `name`, taken out; `None` when missing (kept as an error when `required`),
    /// when `null` and `null_is_none`, or once an error was kept.
    #[inline(never)]
    fn take(&mut self, name: &str, required: bool, null_is_none: bool) -> Option<Value> {
        if self.err.is_some() {
            return None;
        }
        match self.map.remove(name) {
            None if required => {
                self.fail(JsonProblem::new("is missing"), name);
                None
            }
            Some(Value::Null) if null_is_none => None,
            v => v,
        }
    }

    /// Keeps the first error, at the field `name`.
    #[inline(never)]
    pub fn fail(&mut self, e: JsonError, name: &str) {
        if self.err.is_none() {
            self.err = Some(e.in_field(name));
        }
    }

    /// The field `name` decoded (see [`Fields::take`] for `required` and `null_is_none`), or
    /// `None` with its error kept: the one generic reader of a field type, which every getter
    /// below is a thin shim over (a getter of its own per field type and kind, each with the
    /// decoder's call and its error path, cost some 200 bytes apiece).
    #[inline(never)]
    fn read<T: FromJson>(&mut self, name: &str, required: bool, null_is_none: bool) -> Option<T> {
        let v = self.take(name, required, null_is_none)?;
        match T::from_json(v) {
            Ok(t) => Some(t),
            Err(e) => {
                self.fail(e, name);
                None
            }
        }
    }

    /// The field `name` (missing is an error when `required`), or the placeholder
    /// `T::default()` with the error kept.
    #[inline(never)]
    fn get<T: FromJson + Default>(&mut self, name: &str, required: bool) -> T {
        self.read(name, required, false).unwrap_or_default()
    }

    /// A field without a default: missing is an error.
    #[inline(always)]
    pub fn req<T: FromJson + Default>(&mut self, name: &str) -> T {
        T::field(self, name, true)
    }

    /// A required field of a type without a placeholder (`Default`): its error, or one kept
    /// before, is returned at once.
    pub fn need<T: FromJson>(&mut self, name: &str) -> Result<T, JsonError> {
        match self.read(name, true, false) {
            Some(t) => Ok(t),
            None => Err(self.kept(name)),
        }
    }

    /// The error kept (for [`Fields::need`]: there is one when its field was not read).
    #[inline(never)]
    fn kept(&mut self, name: &str) -> JsonError {
        self.err
            .take()
            .unwrap_or_else(|| JsonProblem::new("is missing").in_field(name))
    }

    /// A field with a default (serde's `#[serde(default)]`, and every `Option` field): missing
    /// is `T::default()`; `null` is only accepted where `T` accepts it (an `Option`).
    #[inline(always)]
    pub fn opt<T: FromJson + Default>(&mut self, name: &str) -> T {
        T::field(self, name, false)
    }

    /// A field with the default `default` when missing.
    pub fn or<T: FromJson>(&mut self, name: &str, default: T) -> T {
        self.read(name, false, false).unwrap_or(default)
    }

    /// A patch field: missing is `None` (keep), `null` is `Some(None)` (clear), a value is
    /// `Some(Some(v))`.
    pub fn patch<T: FromJson>(&mut self, name: &str) -> Option<Option<T>> {
        if !self.map.contains_key(name) {
            return None;
        }
        Some(self.read(name, false, true))
    }

    /// The decoded value, or the first error a getter kept. By reference: taking `self` moved
    /// the fields into a copy in every decoder, for nothing (they are dropped either way).
    #[inline(always)]
    pub fn done<T>(&mut self, value: T) -> Result<T, JsonError> {
        match self.finish() {
            None => Ok(value),
            Some(e) => Err(e),
        }
    }

    /// The first error kept, taken out.
    #[inline(never)]
    fn finish(&mut self) -> Option<JsonError> {
        self.err.take()
    }
}

#[inline(never)]
fn unknown_field(name: &str, known: &[&str]) -> JsonError {
    JsonProblem::new(format!(
        "is not a known field; the fields are {}",
        crate::core::join(known, ", ")
    ))
    .in_field(&excerpt(name))
}

/// [`FromJson`] for a struct read field by field through [`Fields`]: the one list of its
/// fields gives both the names it knows (the unknown-field check and its error, which lists
/// them in this order) and the reads, in the same order (the first error is the first bad
/// field of the list).
///
/// `from_json_struct!(Type, deny | allow, { field: "jsonName" getter, … })` where `deny`
/// refuses unknown fields and `allow` ignores them, and the getter is one of [`Fields`]'
/// `req`, `opt`, `patch`, `or(default)`, or `need` (a type without a placeholder: read last,
/// its error returns at once).
macro_rules! from_json_struct {
    ($ty:ident, $unknown:ident, { $($field:ident: $name:literal $get:ident $(($default:expr))?),* $(,)? }) => {
        impl $crate::core::json::FromJson for $ty {
            fn from_json(
                v: $crate::core::json::Value,
            ) -> Result<Self, $crate::core::json::JsonError> {
                let mut f = $crate::core::json::Fields::of(
                    v,
                    &[$($name),*],
                    $crate::core::json::from_json_struct!(@$unknown),
                );
                let value = $ty {
                    $($field: $crate::core::json::from_json_struct!(@get f $get $name $(, $default)?),)*
                };
                f.done(value)
            }
        }
    };
    (@deny) => { true };
    (@allow) => { false };
    (@get $f:ident need $name:literal) => { $f.need($name)? };
    (@get $f:ident $get:ident $name:literal $(, $default:expr)?) => { $f.$get($name $(, $default)?) };
}
pub(crate) use from_json_struct;

/// `serde::Deserialize` for types that implement [`FromJson`]: read a [`Value`],
/// then decode it by the crate's rules. Every serde entry point (`from_str`, `from_value`, a
/// field of a derived type) then reads these types the same way.
macro_rules! deserialize_via_json {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <$crate::core::json::Value as serde::Deserialize>::deserialize(d)?;
                <$t as $crate::core::json::FromJson>::from_json(v)
                    .map_err(<D::Error as serde::de::Error>::custom)
            }
        }
    )*};
}
pub(crate) use deserialize_via_json;

/// Tests: serde_json's `json!` syntax (and its interpolation through `serde::Serialize`),
/// as the crate's [`Value`].
#[cfg(test)]
macro_rules! json {
    ($($t:tt)+) => {
        $crate::core::json::from_serde(serde_json::json!($($t)+))
    };
}
#[cfg(test)]
pub(crate) use json;

/// Tests: a serde_json value as the crate's [`Value`], kind for kind (`3` stays an integer,
/// `3.0` a float).
#[cfg(test)]
pub(crate) fn from_serde(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Value::from(u),
            (None, Some(i), _) => Value::from(i),
            (None, None, Some(f)) => Value::from(f),
            _ => Value::Null,
        },
        serde_json::Value::String(s) => Value::String(s),
        serde_json::Value::Array(a) => Value::Array(a.into_iter().map(from_serde).collect()),
        serde_json::Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, from_serde(v))).collect())
        }
    }
}

/// Tests: what serde's derived `Serialize` of `t` writes, as the crate's [`Value`].
#[cfg(test)]
pub(crate) fn to_value<T: serde::Serialize + ?Sized>(t: &T) -> Value {
    from_serde(serde_json::to_value(t).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_serde() {
        assert_eq!(u32::from_json(json!(7)), Ok(7));
        assert!(u32::from_json(json!(1.0)).is_err(), "1.0 is not an integer");
        assert!(u32::from_json(json!(-1)).is_err());
        assert!(u32::from_json(json!(4_294_967_296u64)).is_err());
        assert_eq!(u64::from_json(json!(u64::MAX)), Ok(u64::MAX));
        assert_eq!(i64::from_json(json!(-3)), Ok(-3));
        assert!(i64::from_json(json!(u64::MAX)).is_err());
        assert_eq!(f64::from_json(json!(3)), Ok(3.0));
        assert_eq!(
            u32::from_json(json!(1.5)).map_err(|e| e.to_string()),
            Err("must be an integer from 0 to 4294967295 (got a fractional number)".into())
        );
    }

    #[test]
    fn paths_name_the_field() {
        let e = Vec::<Vec<u32>>::from_json(json!([[1], [2, "x"]])).unwrap_err();
        assert_eq!(e.path, "[1][1]");
        let mut f = Fields::new(json!({"a": [{"b": 1}]}), &["a"], true).unwrap();
        let _ = f.req::<Vec<Vec<u32>>>("a");
        let e = f.done(()).unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.problem.as_str()),
            ("a[0]", "must be an array (got an object)")
        );
        let e = Fields::new(json!({"a": 1, "zz": 2}), &["a"], true)
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "zz is not a known field; the fields are a");
        assert!(Fields::new(json!({"zz": 2}), &["a"], false).is_ok());
    }

    #[test]
    fn options_and_patches() {
        let mut f = Fields::new(json!({"a": null, "b": null, "c": 2}), &[], false).unwrap();
        assert_eq!(f.opt::<Option<u32>>("a"), None);
        assert_eq!(f.patch::<u32>("b"), Some(None));
        assert_eq!(f.patch::<u32>("c"), Some(Some(2)));
        assert_eq!(f.patch::<u32>("d"), None);
        assert_eq!(f.opt::<Vec<u32>>("d"), Vec::<u32>::new());
        assert!(f.done(()).is_ok());
        let mut g = Fields::new(json!({"v": null}), &[], false).unwrap();
        assert_eq!(g.opt::<Vec<u32>>("v"), Vec::<u32>::new());
        assert_eq!(
            g.done(()).map_err(|e| e.to_string()),
            Err("v must be an array (got null)".into())
        );
        let mut h = Fields::new(json!({"x": "s", "y": true}), &[], false).unwrap();
        let _ = (
            h.req::<u32>("x"),
            h.req::<u32>("missing"),
            h.req::<String>("y"),
        );
        assert_eq!(
            h.done(()).map_err(|e| e.to_string()),
            Err("x must be an integer from 0 to 4294967295 (got a string)".into()),
            "the first error is kept"
        );
    }

    /// A `from_json_struct!` type: the unknown-field error lists the fields in the list's
    /// order, it comes before any field's error, and of two bad fields the first listed wins.
    #[test]
    fn struct_decoders_check_in_list_order() {
        use crate::core::model::{Agent, Reasoning, DEFAULT_MAX_STEPS};
        use crate::core::store_contract as tpl;
        let text = |r: Result<Reasoning, JsonError>| r.map_err(|e| e.to_string());
        assert_eq!(
            text(Reasoning::from_json(json!({"effort": 1, "zz": 1}))),
            Err("zz is not a known field; the fields are effort, budgetTokens".into())
        );
        assert_eq!(
            text(Reasoning::from_json(
                json!({"budgetTokens": -1, "effort": "x"})
            )),
            Err(r#"effort must be one of "low", "medium", "high" (got "x")"#.into())
        );
        assert_eq!(
            text(Reasoning::from_json(json!([]))),
            Err("must be an object (got an array)".into())
        );
        assert_eq!(
            text(Reasoning::from_json(json!({"budgetTokens": null}))),
            Ok(Reasoning::default())
        );
        let mut agent = to_value(&tpl::agent("a"));
        agent["maxSteps"] = json!("many");
        agent["status"] = json!(7);
        assert_eq!(
            Agent::from_json(agent.clone()).map_err(|e| e.to_string()),
            Err("maxSteps must be an integer from 0 to 4294967295 (got a string)".into())
        );
        agent.as_object_mut().map(|o| o.remove("maxSteps"));
        agent["status"] = json!("active");
        assert_eq!(
            Agent::from_json(agent).map(|a| a.max_steps),
            Ok(DEFAULT_MAX_STEPS),
            "a missing maxSteps is its default"
        );
    }

    /// Every decoded type reads back what its `Serialize` wrote, with every optional field set
    /// (the stored rows and export documents are written by serde and read here).
    #[test]
    fn every_model_type_round_trips() {
        use crate::core::model::*;
        use crate::core::store::AgentChatState;
        use crate::core::store_contract as tpl;
        fn again<T: serde::Serialize + FromJson + PartialEq + std::fmt::Debug>(t: &T) {
            let text = serde_json::to_string(t).unwrap_or_default();
            let back = from_str(&text).map_err(|e| e.to_string());
            assert_eq!(
                back.and_then(|v| T::from_json(v).map_err(|e| e.to_string()))
                    .as_ref(),
                Ok(t),
                "{text}"
            );
        }
        let mut world = tpl::world("w");
        world.description = Some("d".into());
        world.current_chat_id = Some("c".into());
        world.chat_llm_provider = Some("openai".into());
        world.chat_llm_model = Some("m".into());
        again(&world);
        let mut agent = tpl::agent("a");
        agent.system_prompt = Some("p".into());
        agent.temperature = Some(0.25);
        agent.max_tokens = Some(9);
        agent.history_limit = Some(3);
        agent.tools = vec!["t".into()];
        agent.max_steps = 7;
        agent.reasoning = Some(Reasoning {
            effort: Some(ReasoningEffort::High),
            budget_tokens: Some(5),
        });
        agent.llm_call_count = 4;
        agent.last_llm_call = Some(Timestamp(99));
        again(&agent);
        again(&tpl::agent("b"));
        let mut chat = tpl::chat("w", "c");
        chat.description = Some("d".into());
        chat.title_source = TitleSource::Manual;
        again(&chat);
        let approval = tpl::approval("w", "c", "x", "a", 5);
        again(&approval);
        let mut trigger = approval.trigger.clone();
        trigger.reply_to_message_id = Some("m0".into());
        trigger.kind = MessageKind::TurnLimit;
        trigger.tool_calls = approval.state.tool_calls.clone();
        again(&trigger);
        again(&MemoryEntry {
            role: MemoryRole::Assistant,
            content: String::new(),
            sender: Some("a".into()),
            message_id: "m".into(),
            chat_id: Some("c".into()),
            created_at: Timestamp(-1),
            tool_calls: vec![ToolCallRef {
                tool_call_id: "1".into(),
                tool_name: "t".into(),
                args: json!([1, "2"]),
            }],
            tool_call_id: Some("1".into()),
            tool_name: Some("t".into()),
        });
        again(&AgentChatState {
            agent_id: "a".into(),
            llm_call_count: 2,
            last_llm_call: Some(Timestamp(3)),
        });
    }

    /// serde's rules for what a stored row may leave out or carry extra, kept.
    #[test]
    fn defaults_and_unknown_fields_as_before() {
        use crate::core::approval::ReplyState;
        use crate::core::model::{Message, WorldData};
        // `currentChatId` has no default but is an `Option`: missing reads as `None`.
        let w = json!({"id": "w", "name": "w", "turnLimit": 5, "historyLimit": 10,
            "createdAt": "2026-01-01T00:00:00.000Z", "lastUpdated": "2026-01-01T00:00:00.000Z"});
        assert_eq!(WorldData::from_json(w).map(|w| w.current_chat_id), Ok(None));
        // A required field, and a field the type denies.
        let m = json!({"messageId": "m", "sender": "s", "content": "c", "kind": "pass",
            "createdAt": "2026-01-01T00:00:00.000Z"});
        assert!(Message::from_json(m.clone()).is_ok());
        let mut extra = m.clone();
        extra["bogus"] = json!(1);
        assert_eq!(
            Message::from_json(extra).map_err(|e| e.path),
            Err("bogus".into())
        );
        let mut missing = m;
        missing.as_object_mut().map(|o| o.remove("sender"));
        assert_eq!(
            Message::from_json(missing).map_err(|e| e.to_string()),
            Err("sender is missing".into())
        );
        // Reply states ignore unknown fields (they never denied them).
        let s = json!({"step": 1, "messages": [], "text": "", "stepCalls": [], "later": true});
        assert!(ReplyState::from_json(s).is_ok());
    }
}
