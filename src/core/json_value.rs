//! The crate's JSON value: what [`crate::core::json_parse`] reads JSON text into, what the
//! decoders of [`crate::core::json`] take apart and what [`crate::core::json_write`] writes.
//!
//! Why not `serde_json::Value`: it brought serde_json's parser, serde's deserializer machinery
//! and a `BTreeMap` per object into the wasm module (some 30 KB raw) for a value this crate
//! only builds, reads and writes by hand. This one has the same shape and the same rules, so
//! everything reads and writes exactly as before:
//! - an object is a [`VecMap`] sorted by key, as serde_json's `Map` (a `BTreeMap` without its
//!   `preserve_order` feature) iterates: every writer's output stays byte-identical;
//! - a [`Number`] is a non-negative integer (`u64`), a negative integer (`i64`) or a finite
//!   float (`f64`), exactly serde_json's three kinds: `3` is not `3.0`, `-0` is the float `-0.0`.
//!
//! `serde::Serialize` and `serde::Deserialize` are implemented for the tests (which compare
//! the hand-written code with serde_json) and for the model types' derives; no shipping path
//! calls them, so none of that code is in the wasm module.

use std::fmt;

use crate::core::vec_map::VecMap;

/// A JSON object: keys in sorted order (serde_json's `Map` without `preserve_order`).
pub type Map<K = String, V = Value> = VecMap<K, V>;

/// Any JSON value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map<String, Value>),
}

/// A JSON number as serde_json keeps it: an integer when the text is one and fits (`u64` for
/// non-negative, `i64` for negative), else a finite `f64`.
#[derive(Clone, Copy, PartialEq)]
pub struct Number(N);

#[derive(Clone, Copy, PartialEq)]
enum N {
    PosInt(u64),
    /// Always below zero.
    NegInt(i64),
    /// Always finite.
    Float(f64),
}

/// Floats are never NaN, so equality is an equivalence (as serde_json's `Number`).
impl Eq for Number {}

impl Number {
    /// The float as a number; `None` when it is not finite (JSON has no NaN or infinity).
    pub fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then_some(Number(N::Float(f)))
    }

    pub(crate) fn from_u64(n: u64) -> Number {
        Number(N::PosInt(n))
    }

    pub(crate) fn from_i64(n: i64) -> Number {
        match u64::try_from(n) {
            Ok(u) => Number(N::PosInt(u)),
            Err(_) => Number(N::NegInt(n)),
        }
    }

    pub fn is_u64(&self) -> bool {
        matches!(self.0, N::PosInt(_))
    }

    pub fn is_i64(&self) -> bool {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).is_ok(),
            N::NegInt(_) => true,
            N::Float(_) => false,
        }
    }

    pub fn is_f64(&self) -> bool {
        matches!(self.0, N::Float(_))
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            N::PosInt(u) => Some(u),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            N::Float(_) => None,
        }
    }

    /// Any number as an `f64` (large integers rounded), as serde_json's `as_f64`.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self.0 {
            N::PosInt(u) => u as f64,
            N::NegInt(i) => i as f64,
            N::Float(f) => f,
        })
    }

    /// Appends the number as serde_json writes it: integers in decimal, floats in the
    /// shortest form that reads back the same (`zmij`, serde_json's own float writer:
    /// `1.0`, `1e-7`, `1.5e300`).
    pub(crate) fn write(&self, out: &mut String) {
        match self.0 {
            N::PosInt(u) => crate::core::json_write::write_u64(out, u),
            N::NegInt(i) => {
                out.push('-');
                crate::core::json_write::write_u64(out, i.unsigned_abs());
            }
            N::Float(f) => out.push_str(zmij::Buffer::new().format_finite(f)),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

macro_rules! number_from {
    ($($t:ty => $via:ident),*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number::$via(n.into())
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from(n))
            }
        }
    )*};
}
number_from!(u8 => from_u64, u16 => from_u64, u32 => from_u64, u64 => from_u64,
    i8 => from_i64, i16 => from_i64, i32 => from_i64, i64 => from_i64);

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Number(Number::from_u64(n as u64))
    }
}

/// A float: `null` when it is not finite, as serde_json's `Value::from(f64)`.
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<Map<String, Value>> for Value {
    fn from(m: Map<String, Value>) -> Value {
        Value::Object(m)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::Null
    }
}

/// What [`Value::get`] and indexing accept: a key (of an object) or an index (of an array).
pub trait Index {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
    /// `v[self] = …`: the slot, made when `v` is an object (or `null`, which becomes one).
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value;
}

impl Index for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        match v {
            Value::Object(m) => m.get(self),
            _ => None,
        }
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        match v {
            Value::Object(m) => m.get_mut(self),
            _ => None,
        }
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        if v.is_null() {
            *v = Value::Object(Map::new());
        }
        match v {
            Value::Object(m) => m.get_or_default(self),
            // serde_json panics here too: indexing a non-object by key for assignment is a
            // programming error, never reached from input.
            _ => panic!("cannot index a JSON {} with a key", kind_name(v)),
        }
    }
}

impl Index for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        self.as_str().index_or_insert(v)
    }
}

impl Index for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        match v {
            Value::Array(a) => a.get(*self),
            _ => None,
        }
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        match v {
            Value::Array(a) => a.get_mut(*self),
            _ => None,
        }
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        let kind = kind_name(v);
        match v {
            Value::Array(a) if *self < a.len() => &mut a[*self],
            // As serde_json: a programming error, never reached from input.
            _ => panic!("cannot index a JSON {kind} at {self}"),
        }
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
    fn index_or_insert<'v>(&self, v: &'v mut Value) -> &'v mut Value {
        (**self).index_or_insert(v)
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An array index in a pointer: decimal digits, no sign, no leading zero (as serde_json).
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() > 1) {
        return None;
    }
    super::parse_usize(token)
}

static NULL: Value = Value::Null;

/// `v["key"]`, `v[0]`: the value there, or `null` when there is none (as serde_json).
impl<I: Index> std::ops::Index<I> for Value {
    type Output = Value;
    fn index(&self, i: I) -> &Value {
        i.index_into(self).unwrap_or(&NULL)
    }
}

/// `v["key"] = …` on an object (or `null`), `v[0] = …` within an array (as serde_json).
impl<I: Index> std::ops::IndexMut<I> for Value {
    fn index_mut(&mut self, i: I) -> &mut Value {
        i.index_or_insert(self)
    }
}

/// A JSON pointer token unescaped (RFC 6901: `~1` is `/`, then `~0` is `~`), in one pass: the
/// same text as the two `replace`s, without std's substring searcher in the wasm module.
fn unescape_token(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('~', Some('1')) => {
                chars.next();
                out.push('/');
            }
            ('~', Some('0')) => {
                chars.next();
                out.push('~');
            }
            _ => out.push(c),
        }
    }
    out
}

impl Value {
    /// The value at a key of an object or an index of an array.
    pub fn get<I: Index>(&self, i: I) -> Option<&Value> {
        i.index_into(self)
    }

    pub fn get_mut<I: Index>(&mut self, i: I) -> Option<&mut Value> {
        i.index_into_mut(self)
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_u64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_u64())
    }

    pub fn is_i64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_i64())
    }

    pub fn is_f64(&self) -> bool {
        matches!(self, Value::Number(n) if n.is_f64())
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The value at a JSON Pointer (RFC 6901: `/message/content`, `/choices/0`; `~1` is `/`
    /// and `~0` is `~` in a token), as serde_json's `pointer`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut at = self;
        for token in rest.split('/') {
            // Unescaped only when it has a `~`: the crate's pointers never do, and they are
            // looked up on every streamed frame.
            let owned;
            let token = if token.as_bytes().contains(&b'~') {
                owned = unescape_token(token);
                owned.as_str()
            } else {
                token
            };
            at = match at {
                Value::Object(m) => m.get(token)?,
                Value::Array(a) => a.get(array_index(token)?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// The value, leaving `null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// Compact JSON text, as serde_json's `Value` prints (through [`crate::core::json_write`]).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::core::json_write::ToJson::to_json(self))
    }
}

impl std::str::FromStr for Value {
    type Err = crate::core::json_parse::ParseError;
    fn from_str(s: &str) -> Result<Value, Self::Err> {
        crate::core::json_parse::from_str(s)
    }
}

macro_rules! eq_via {
    ($($t:ty => $get:ident $(($conv:ty))?),*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                self.$get().is_some_and(|v| v == (*other $(as $conv)?))
            }
        }
        impl PartialEq<Value> for $t {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }
    )*};
}
eq_via!(bool => as_bool, u64 => as_u64, u32 => as_u64(u64), i64 => as_i64, i32 => as_i64(i64),
    f64 => as_f64, usize => as_u64(u64));

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Value {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<Value> for &str {
    fn eq(&self, other: &Value) -> bool {
        other.as_str() == Some(*self)
    }
}

impl PartialEq<Value> for String {
    fn eq(&self, other: &Value) -> bool {
        other.as_str() == Some(self.as_str())
    }
}

impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            N::PosInt(u) => s.serialize_u64(u),
            N::NegInt(i) => s.serialize_i64(i),
            N::Float(f) => s.serialize_f64(f),
        }
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(v) => s.serialize_str(v),
            Value::Array(a) => s.collect_seq(a),
            Value::Object(m) => s.collect_map(m.iter()),
        }
    }
}

/// Any self-describing serde format into a `Value` (serde_json's `Value` visitor's rules).
impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
                Ok(Value::Bool(b))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
                Ok(Value::from(i))
            }
            fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
                Ok(Value::from(u))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
                Ok(Value::from(f))
            }
            fn visit_str<E>(self, s: &str) -> Result<Value, E> {
                Ok(Value::String(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<Value, E> {
                Ok(Value::String(s))
            }
            fn visit_none<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                serde::Deserialize::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = a.next_element()? {
                    items.push(v);
                }
                Ok(Value::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Value, A::Error> {
                let mut pairs: Vec<(String, Value)> = Vec::new();
                while let Some(kv) = a.next_entry()? {
                    pairs.push(kv);
                }
                Ok(Value::Object(pairs.into_iter().collect()))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::{unescape_token, Value};

    /// One pass gives what the two `replace`s of RFC 6901 (`~1` first, then `~0`) gave.
    #[test]
    fn pointer_tokens_unescape_as_the_two_replaces() {
        for t in [
            "", "a", "~", "~0", "~1", "~01", "~10", "~~1", "~~10", "a~1b~0c", "~2", "é~1ü", "~0~1~",
        ] {
            assert_eq!(
                unescape_token(t),
                t.replace("~1", "/").replace("~0", "~"),
                "{t:?}"
            );
        }
        let v = crate::core::json::json!({"a/b": 1, "m~n": 2, "~1": 3});
        assert_eq!(v.pointer("/a~1b"), Some(&Value::from(1u64)));
        assert_eq!(v.pointer("/m~0n"), Some(&Value::from(2u64)));
        assert_eq!(v.pointer("/~01"), Some(&Value::from(3u64)));
    }
}
