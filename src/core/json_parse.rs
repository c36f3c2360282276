//! JSON text into a [`Value`]: a recursive-descent parser over the bytes of a `&str`.
//!
//! It reads exactly what serde_json's `from_str::<Value>` reads, into the same value, and
//! refuses exactly what it refuses, with the same error text and position ("trailing comma at
//! line 1 column 5"): these texts reach users (an import that is "not JSON: …", a provider
//! frame with "invalid JSON (…)"), and the differential tests below hold the two together.
//! The rules, all serde_json's:
//! - numbers: an integer that fits is a `u64` (non-negative) or an `i64` (negative); anything
//!   else (a fraction, an exponent, a longer integer, `-0`) is an `f64`, computed as serde_json
//!   computes it (its default, not `float_roundtrip`: the same bits as before, see
//!   `Parser::f64_of_parts`); one out of the `f64` range (`1e400`) is an error, one below it
//!   (`1e-400`) is zero;
//! - strings: control characters (below U+0020) are refused; `\u` escapes must pair their
//!   surrogates (a lone one is an error, the text has no way to hold it);
//! - an object keeps the last value of a repeated key; nesting deeper than 127 arrays and
//!   objects is an error ("recursion limit exceeded"), not a stack overflow;
//! - whitespace is space, tab, `\n` and `\r`; anything but whitespace after the value is
//!   "trailing characters"; an empty text is "EOF while parsing a value".
//!
//! Positions count lines from 1 and columns in bytes from the line's start, as serde_json's do.

use std::fmt;

use crate::core::json_value::{Map, Number, Value};
use crate::core::llm::byte_search::string_stop;

/// How many arrays and objects may be open at once, plus one (serde_json's limit).
const DEPTH: u32 = 128;

/// The entries of an object kept sorted by inserting them one by one; a bigger object is
/// sorted once at its end.
const SORTED_INSERTS: usize = 32;

/// Why a text is not JSON, and where (serde_json's texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    code: Code,
    line: usize,
    column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    EofList,
    EofObject,
    EofString,
    EofValue,
    ExpectedColon,
    ExpectedListCommaOrEnd,
    ExpectedObjectCommaOrEnd,
    ExpectedIdent,
    ExpectedValue,
    InvalidEscape,
    InvalidNumber,
    NumberOutOfRange,
    ControlCharacter,
    KeyMustBeAString,
    LoneLeadingSurrogate,
    TrailingComma,
    TrailingCharacters,
    UnexpectedEndOfHexEscape,
    RecursionLimit,
}

impl Code {
    fn text(self) -> &'static str {
        match self {
            Code::EofList => "EOF while parsing a list",
            Code::EofObject => "EOF while parsing an object",
            Code::EofString => "EOF while parsing a string",
            Code::EofValue => "EOF while parsing a value",
            Code::ExpectedColon => "expected `:`",
            Code::ExpectedListCommaOrEnd => "expected `,` or `]`",
            Code::ExpectedObjectCommaOrEnd => "expected `,` or `}`",
            Code::ExpectedIdent => "expected ident",
            Code::ExpectedValue => "expected value",
            Code::InvalidEscape => "invalid escape",
            Code::InvalidNumber => "invalid number",
            Code::NumberOutOfRange => "number out of range",
            Code::ControlCharacter => {
                "control character (\\u0000-\\u001F) found while parsing a string"
            }
            Code::KeyMustBeAString => "key must be a string",
            Code::LoneLeadingSurrogate => "lone leading surrogate in hex escape",
            Code::TrailingComma => "trailing comma",
            Code::TrailingCharacters => "trailing characters",
            Code::UnexpectedEndOfHexEscape => "unexpected end of hex escape",
            Code::RecursionLimit => "recursion limit exceeded",
        }
    }
}

impl ParseError {
    pub fn line(&self) -> usize {
        self.line
    }

    pub fn column(&self) -> usize {
        self.column
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code.text())?;
        f.write_str(" at line ")?;
        let mut n = String::new();
        crate::core::json_write::write_u64(&mut n, self.line as u64);
        n.push_str(" column ");
        crate::core::json_write::write_u64(&mut n, self.column as u64);
        f.write_str(&n)
    }
}

impl std::error::Error for ParseError {}

/// The JSON text `s` as a [`Value`] (serde_json's `from_str::<Value>`).
pub fn from_str(s: &str) -> Result<Value, ParseError> {
    let mut p = Parser {
        text: s,
        bytes: s.as_bytes(),
        i: 0,
        depth: DEPTH,
    };
    let v = p.value().map_err(|e| *e)?;
    match p.whitespace() {
        None => Ok(v),
        Some(_) => Err(*p.peek_error(Code::TrailingCharacters)),
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// The next byte to read.
    i: usize,
    /// How many more arrays or objects may open.
    depth: u32,
}

/// The parser's results: the error boxed, so that a `Result` is one pointer wider than its
/// value and an error moves up the recursion as a pointer.
type Res<T> = Result<T, Box<ParseError>>;

impl Parser<'_> {
    /// An error at the current position (serde_json's `error`: after what was read).
    #[cold]
    #[inline(never)]
    fn error(&self, code: Code) -> Box<ParseError> {
        self.error_at(code, self.i)
    }

    /// An error one byte further (serde_json's `peek_error`: at the byte looked at).
    #[cold]
    #[inline(never)]
    fn peek_error(&self, code: Code) -> Box<ParseError> {
        self.error_at(code, (self.i + 1).min(self.bytes.len()))
    }

    #[cold]
    fn error_at(&self, code: Code, at: usize) -> Box<ParseError> {
        let before = self.bytes.get(..at).unwrap_or(self.bytes);
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
        let line = 1 + before
            .get(..line_start)
            .unwrap_or_default()
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        Box::new(ParseError {
            code,
            line,
            column: at - line_start,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    /// Skips whitespace; the next byte, not consumed.
    fn whitespace(&mut self) -> Option<u8> {
        while let Some(b) = self.peek() {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.i += 1;
        }
        None
    }

    fn value(&mut self) -> Res<Value> {
        let Some(b) = self.whitespace() else {
            return Err(self.peek_error(Code::EofValue));
        };
        match b {
            b'n' => self.ident(b"null").map(|()| Value::Null),
            b't' => self.ident(b"true").map(|()| Value::Bool(true)),
            b'f' => self.ident(b"false").map(|()| Value::Bool(false)),
            b'-' => {
                self.i += 1;
                self.number(false)
            }
            b'0'..=b'9' => self.number(true),
            b'"' => {
                self.i += 1;
                self.string().map(Value::String)
            }
            b'[' | b'{' => {
                self.depth -= 1;
                if self.depth == 0 {
                    return Err(self.peek_error(Code::RecursionLimit));
                }
                self.i += 1;
                let v = if b == b'[' {
                    self.array()
                } else {
                    self.object()
                }?;
                self.depth += 1;
                Ok(v)
            }
            _ => Err(self.peek_error(Code::ExpectedValue)),
        }
    }

    /// The rest of `word`, whose first byte is the one under the cursor.
    fn ident(&mut self, word: &[u8]) -> Res<()> {
        self.i += 1;
        for &want in word.get(1..).unwrap_or_default() {
            let Some(b) = self.peek() else {
                return Err(self.error(Code::EofValue));
            };
            self.i += 1;
            if b != want {
                return Err(self.error(Code::ExpectedIdent));
            }
        }
        Ok(())
    }

    /// After `[`: the items and the closing `]`.
    fn array(&mut self) -> Res<Value> {
        let mut items = Vec::new();
        loop {
            let Some(b) = self.whitespace() else {
                return Err(self.peek_error(Code::EofList));
            };
            if b == b']' {
                break;
            }
            if !items.is_empty() {
                if b != b',' {
                    return Err(self.peek_error(Code::ExpectedListCommaOrEnd));
                }
                self.i += 1;
                match self.whitespace() {
                    Some(b']') => return Err(self.peek_error(Code::TrailingComma)),
                    Some(_) => {}
                    None => return Err(self.peek_error(Code::EofValue)),
                }
            }
            items.push(self.value()?);
        }
        self.i += 1;
        Ok(Value::Array(items))
    }

    /// After `{`: the entries and the closing `}`. A repeated key keeps its last value (as
    /// serde_json's map insert). A small object (a stream frame, a row) is kept sorted as it
    /// is read, one binary-search insert per entry and one allocation in all; past
    /// [`SORTED_INSERTS`] entries the rest are gathered and the whole sorted once, so that a
    /// huge object costs a sort, not a quadratic number of moves.
    fn object(&mut self) -> Res<Value> {
        let mut map: Map<String, Value> = Map::new();
        let mut many: Vec<(String, Value)> = Vec::new();
        let mut first = true;
        loop {
            let Some(b) = self.whitespace() else {
                return Err(self.peek_error(Code::EofObject));
            };
            if b == b'}' {
                break;
            }
            if first {
                if b != b'"' {
                    return Err(self.peek_error(Code::KeyMustBeAString));
                }
                first = false;
            } else {
                if b != b',' {
                    return Err(self.peek_error(Code::ExpectedObjectCommaOrEnd));
                }
                self.i += 1;
                match self.whitespace() {
                    Some(b'"') => {}
                    Some(b'}') => return Err(self.peek_error(Code::TrailingComma)),
                    Some(_) => return Err(self.peek_error(Code::KeyMustBeAString)),
                    None => return Err(self.peek_error(Code::EofValue)),
                }
            }
            self.i += 1;
            let key = self.string()?;
            match self.whitespace() {
                Some(b':') => self.i += 1,
                Some(_) => return Err(self.peek_error(Code::ExpectedColon)),
                None => return Err(self.peek_error(Code::EofObject)),
            }
            let v = self.value()?;
            if many.is_empty() && map.len() < SORTED_INSERTS {
                map.insert(key, v);
            } else {
                if many.is_empty() {
                    many.extend(std::mem::take(&mut map));
                }
                many.push((key, v));
            }
        }
        self.i += 1;
        if !many.is_empty() {
            // Sorted once, stably: of a repeated key the last value wins.
            map = many.into_iter().collect();
        }
        Ok(Value::Object(map))
    }

    /// After the opening `"`: the string's text, through its closing `"`. The plain runs are
    /// found eight bytes at a time and copied whole; a string without escapes is one copy.
    fn string(&mut self) -> Res<String> {
        let mut out = String::new();
        loop {
            let rest = self.bytes.get(self.i..).unwrap_or_default();
            let Some(n) = string_stop(rest) else {
                self.i = self.bytes.len();
                return Err(self.error(Code::EofString));
            };
            // The stop is an ASCII byte: a character boundary, and so is the byte after it.
            let run = self.text.get(self.i..self.i + n).unwrap_or_default();
            self.i += n;
            match rest.get(n) {
                Some(b'"') => {
                    self.i += 1;
                    if out.is_empty() {
                        return Ok(run.to_owned());
                    }
                    out.push_str(run);
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(run);
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                _ => {
                    self.i += 1;
                    return Err(self.error(Code::ControlCharacter));
                }
            }
        }
    }

    /// After a `\`: one escape, appended to `out`.
    fn escape(&mut self, out: &mut String) -> Res<()> {
        let Some(b) = self.peek() else {
            return Err(self.error(Code::EofString));
        };
        self.i += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(out),
            _ => return Err(self.error(Code::InvalidEscape)),
        };
        out.push(c);
        Ok(())
    }

    /// After `\u`: a code unit, or a surrogate pair written as two escapes.
    #[inline(never)]
    fn unicode_escape(&mut self, out: &mut String) -> Res<()> {
        let n = self.hex4()?;
        let code = match n {
            0xDC00..=0xDFFF => return Err(self.error(Code::LoneLeadingSurrogate)),
            0xD800..=0xDBFF => {
                for want in [b'\\', b'u'] {
                    let Some(b) = self.peek() else {
                        return Err(self.error(Code::EofString));
                    };
                    self.i += 1;
                    if b != want {
                        return Err(self.error(Code::UnexpectedEndOfHexEscape));
                    }
                }
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.error(Code::LoneLeadingSurrogate));
                }
                0x1_0000 + ((u32::from(n) - 0xD800) << 10 | (u32::from(low) - 0xDC00))
            }
            n => u32::from(n),
        };
        // Every value here is a scalar value (surrogates were handled above).
        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(())
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Res<u16> {
        let Some(digits) = self.bytes.get(self.i..self.i + 4) else {
            self.i = self.bytes.len();
            return Err(self.error(Code::EofString));
        };
        self.i += 4;
        let mut n = 0u16;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error(Code::InvalidEscape)),
            };
            n = n << 4 | u16::from(v);
        }
        Ok(n)
    }

    /// A number, its `-` (when `!positive`) read: serde_json's `parse_integer`, digit by
    /// digit, with its error positions and number kinds (see the module docs).
    fn number(&mut self, positive: bool) -> Res<Value> {
        let Some(first) = self.peek() else {
            return Err(self.error(Code::EofValue));
        };
        self.i += 1;
        let mut significand: u64 = match first {
            b'0' => {
                // There can be only one leading '0'.
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.peek_error(Code::InvalidNumber));
                }
                0
            }
            b'1'..=b'9' => u64::from(first - b'0'),
            _ => return Err(self.error(Code::InvalidNumber)),
        };
        if first != b'0' {
            while let Some(c @ b'0'..=b'9') = self.peek() {
                match with_digit(significand, c) {
                    Some(s) => significand = s,
                    // Too long for a `u64`: a float; the digits past it only count as tens.
                    None => return self.long_integer(positive, significand).map(float),
                }
                self.i += 1;
            }
        }
        match self.peek() {
            Some(b'.') => self.decimal(positive, significand, 0).map(float),
            Some(b'e' | b'E') => self.exponent(positive, significand, 0).map(float),
            _ if positive => Ok(Value::Number(Number::from(significand))),
            _ => {
                // `-0` and integers below `i64::MIN` are floats, as in serde_json.
                let neg = (significand as i64).wrapping_neg();
                if neg >= 0 {
                    Ok(float(-(significand as f64)))
                } else {
                    Ok(Value::Number(Number::from(neg)))
                }
            }
        }
    }

    /// The integer digits past a `u64`: each one a power of ten more.
    #[cold]
    #[inline(never)]
    fn long_integer(&mut self, positive: bool, significand: u64) -> Res<f64> {
        let mut exponent: i32 = 0;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
            exponent = exponent.saturating_add(1);
        }
        match self.peek() {
            Some(b'.') => self.decimal(positive, significand, exponent),
            Some(b'e' | b'E') => self.exponent(positive, significand, exponent),
            _ => self.f64_of_parts(positive, significand, exponent),
        }
    }

    /// At `.`: the fraction's digits (at least one), then an exponent if any.
    fn decimal(&mut self, positive: bool, mut significand: u64, before: i32) -> Res<f64> {
        self.i += 1;
        let from = self.i;
        let mut after: i32 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            match with_digit(significand, c) {
                Some(s) => significand = s,
                None => {
                    // The digits past a `u64` are dropped (serde_json's precision).
                    while let Some(b'0'..=b'9') = self.peek() {
                        self.i += 1;
                    }
                    break;
                }
            }
            self.i += 1;
            after -= 1;
        }
        if self.i == from {
            return Err(match self.peek() {
                Some(_) => self.peek_error(Code::InvalidNumber),
                None => self.peek_error(Code::EofValue),
            });
        }
        let exponent = before.saturating_add(after);
        match self.peek() {
            Some(b'e' | b'E') => self.exponent(positive, significand, exponent),
            _ => self.f64_of_parts(positive, significand, exponent),
        }
    }

    /// At `e`/`E`: a sign, at least one digit; an exponent past an `i32` is zero (a negative
    /// exponent or a zero number) or out of range.
    fn exponent(&mut self, positive: bool, significand: u64, starting: i32) -> Res<f64> {
        self.i += 1;
        let positive_exp = match self.peek() {
            Some(b'+') => {
                self.i += 1;
                true
            }
            Some(b'-') => {
                self.i += 1;
                false
            }
            _ => true,
        };
        let Some(first) = self.peek() else {
            return Err(self.error(Code::EofValue));
        };
        self.i += 1;
        if !first.is_ascii_digit() {
            return Err(self.error(Code::InvalidNumber));
        }
        let mut exp = i32::from(first - b'0');
        while let Some(c @ b'0'..=b'9') = self.peek() {
            self.i += 1;
            match exp
                .checked_mul(10)
                .and_then(|e| e.checked_add(i32::from(c - b'0')))
            {
                Some(e) => exp = e,
                None => {
                    if significand != 0 && positive_exp {
                        return Err(self.error(Code::NumberOutOfRange));
                    }
                    while let Some(b'0'..=b'9') = self.peek() {
                        self.i += 1;
                    }
                    return Ok(if positive { 0.0 } else { -0.0 });
                }
            }
        }
        let exponent = if positive_exp {
            starting.saturating_add(exp)
        } else {
            starting.saturating_sub(exp)
        };
        self.f64_of_parts(positive, significand, exponent)
    }

    /// `significand × 10^exponent` as serde_json computes it (one multiplication or division
    /// by a power of ten from its table): the same float, bit for bit, as every document this
    /// crate read before. Not `str::parse`: its correctly rounded algorithm brings 18 KB of
    /// tables and code (15 KB gzip) into the module.
    fn f64_of_parts(&self, positive: bool, significand: u64, mut exponent: i32) -> Res<f64> {
        let mut f = significand as f64;
        loop {
            match POW10.get(exponent.unsigned_abs() as usize) {
                Some(&pow) => {
                    if exponent >= 0 {
                        f *= pow;
                        if f.is_infinite() {
                            return Err(self.error(Code::NumberOutOfRange));
                        }
                    } else {
                        f /= pow;
                    }
                    break;
                }
                None => {
                    if f == 0.0 {
                        break;
                    }
                    if exponent >= 0 {
                        return Err(self.error(Code::NumberOutOfRange));
                    }
                    f /= 1e308;
                    exponent += 308;
                }
            }
        }
        Ok(if positive { f } else { -f })
    }
}

/// A parsed float as a number (always finite here: the parser refuses what overflows).
fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// 10^0 to 10^308, each the nearest `f64` (serde_json's table).
#[rustfmt::skip]
static POW10: [f64; 309] = [
    1e000, 1e001, 1e002, 1e003, 1e004, 1e005, 1e006, 1e007, 1e008, 1e009,
    1e010, 1e011, 1e012, 1e013, 1e014, 1e015, 1e016, 1e017, 1e018, 1e019,
    1e020, 1e021, 1e022, 1e023, 1e024, 1e025, 1e026, 1e027, 1e028, 1e029,
    1e030, 1e031, 1e032, 1e033, 1e034, 1e035, 1e036, 1e037, 1e038, 1e039,
    1e040, 1e041, 1e042, 1e043, 1e044, 1e045, 1e046, 1e047, 1e048, 1e049,
    1e050, 1e051, 1e052, 1e053, 1e054, 1e055, 1e056, 1e057, 1e058, 1e059,
    1e060, 1e061, 1e062, 1e063, 1e064, 1e065, 1e066, 1e067, 1e068, 1e069,
    1e070, 1e071, 1e072, 1e073, 1e074, 1e075, 1e076, 1e077, 1e078, 1e079,
    1e080, 1e081, 1e082, 1e083, 1e084, 1e085, 1e086, 1e087, 1e088, 1e089,
    1e090, 1e091, 1e092, 1e093, 1e094, 1e095, 1e096, 1e097, 1e098, 1e099,
    1e100, 1e101, 1e102, 1e103, 1e104, 1e105, 1e106, 1e107, 1e108, 1e109,
    1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119,
    1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
    1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139,
    1e140, 1e141, 1e142, 1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149,
    1e150, 1e151, 1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158, 1e159,
    1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168, 1e169,
    1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179,
    1e180, 1e181, 1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189,
    1e190, 1e191, 1e192, 1e193, 1e194, 1e195, 1e196, 1e197, 1e198, 1e199,
    1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207, 1e208, 1e209,
    1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219,
    1e220, 1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229,
    1e230, 1e231, 1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239,
    1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246, 1e247, 1e248, 1e249,
    1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
    1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269,
    1e270, 1e271, 1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279,
    1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287, 1e288, 1e289,
    1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299,
    1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
];

// Native only: the generated cases use proptest, a host dev-dependency.
/// `significand` with the decimal digit `c` appended, or `None` past a `u64`.
fn with_digit(significand: u64, c: u8) -> Option<u64> {
    significand
        .checked_mul(10)
        .and_then(|s| s.checked_add(u64::from(c - b'0')))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::core::json_write::ToJson;
    use proptest::prelude::*;

    /// What serde_json makes of `text`: its value written back, or its error text.
    fn theirs(text: &str) -> Result<String, String> {
        serde_json::from_str::<serde_json::Value>(text)
            .map(|v| serde_json::to_string(&v).unwrap_or_default())
            .map_err(|e| e.to_string())
    }

    /// The same from this parser and the crate's writer.
    fn ours(text: &str) -> Result<String, String> {
        from_str(text)
            .map(|v| v.to_json())
            .map_err(|e| e.to_string())
    }

    fn same(text: &str) {
        assert_eq!(ours(text), theirs(text), "{text:?}");
    }

    /// Also the number kinds: `1` an integer, `1.0` a float (serde_json's `is_u64`, ...).
    fn same_kinds(text: &str) {
        same(text);
        let (Ok(a), Ok(b)) = (
            from_str(text),
            serde_json::from_str::<serde_json::Value>(text),
        ) else {
            return;
        };
        assert_eq!(
            (a.is_u64(), a.is_i64(), a.is_f64()),
            (b.is_u64(), b.is_i64(), b.is_f64()),
            "{text:?}"
        );
    }

    #[test]
    fn values_as_serde_json_reads_them() {
        for text in [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "-0.0",
            "1",
            "-1",
            "0.5",
            "1.0",
            "1e2",
            "1E+2",
            "1e-2",
            "-1.5e-3",
            "2.5E-1",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "9223372036854775807",
            "123456789012345678901234567890",
            "-123456789012345678901234567890.5e-3",
            "1e308",
            "1.7976931348623157e308",
            "-1.7976931348623157e308",
            "5e-324",
            "2.2250738585072014e-308",
            "1.5e-400",
            "-1.5e-400",
            "0e99999999999999",
            "1e-99999999999999",
            "0.1",
            "0.30000000000000004",
            "3.141592653589793238462643383",
            "9007199254740993",
            "9007199254740993.0",
            "1.00000000000000011102230246251565",
            "\"\"",
            "\"plain\"",
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u0000\u001f\u007f\u00e9""#,
            r#""\u20AC\uFFFF\uD83D\uDE00""#,
            r#""\ud83d\ude00 mixed \u00E9""#,
            "\"é東😀\"",
            "\"\u{2028}\u{2029}\"",
            "[]",
            "{}",
            " [ 1 , 2 ] ",
            "\t\n\r [ ]\n",
            r#"{"b":1,"a":2,"c":{"z":[],"y":{}}}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"x":1},"a":3}"#,
            r#"[1,"x",null,true,{"k":[-1.25e10]}]"#,
            r#"{"":0,"é":1,"E":2,"e":3}"#,
        ] {
            same_kinds(text);
        }
    }

    /// Objects past the sorted inserts: keys in every order, repeated on both sides of the
    /// switch to one sort at the end; the last value of a key wins, keys in order.
    #[test]
    fn big_objects_with_repeated_keys_as_serde_json() {
        for n in [31, 32, 33, 34, 64, 500] {
            let mut x: u32 = 7;
            let entries: Vec<String> = (0..n)
                .map(|i| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    format!("\"k{}\":{i}", (x >> 16) % (n as u32 / 2))
                })
                .collect();
            same(&format!("{{{}}}", entries.join(",")));
            let reversed: Vec<String> = (0..n).rev().map(|i| format!("\"{i:04}\":{i}")).collect();
            same(&format!("{{{}}}", reversed.join(",")));
        }
        // The first entry past the sorted inserts repeats one before it, and so does a later.
        let mut entries: Vec<String> = (0..32).map(|i| format!("\"k{i}\":{i}")).collect();
        entries.extend([
            "\"k0\":\"last\"".into(),
            "\"k9\":1".into(),
            "\"k9\":2".into(),
        ]);
        let text = format!("{{{}}}", entries.join(","));
        same(&text);
        let v = from_str(&text).unwrap_or_default();
        assert_eq!(
            (v["k0"].as_str(), v["k9"].as_u64()),
            (Some("last"), Some(2))
        );
    }

    /// Every refusal of serde_json, with its text and position.
    #[test]
    fn errors_as_serde_json_reports_them() {
        for text in [
            "",
            " ",
            "\n\n  ",
            "n",
            "nul",
            "nulx",
            "tru",
            "trUe",
            "f",
            "falsey",
            "x",
            "-",
            "-a",
            "+1",
            "01",
            "-01",
            "00",
            "1.",
            "1.e5",
            "1.x",
            ".5",
            "1e",
            "1e+",
            "1e-",
            "1ex",
            "1e400",
            "-1e400",
            "1e99999999999999",
            "1.5e4000000000",
            "123e999",
            "1797693134862315800000000000000000000000000000000000000000000000000000000000\
             0000000000000000000000000000000000000000000000000000000000000000000000000000\
             0000000000000000000000000000000000000000000000000000000000000000000000000000\
             0000000000000000000000000000000000000000000000000000000000000000000000000000\
             000000000000.0",
            "\"",
            "\"abc",
            "\"a\\",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12",
            "\"\\u12g4\"",
            "\"\\uDC00\"",
            "\"\\uD800\"",
            "\"\\uD800x\"",
            "\"\\uD800\\n\"",
            "\"\\uD800\\u0041\"",
            "\"\\uD800\\uD800\"",
            "\"\\uD800\\",
            "\"\\uD800\\u",
            "\"a\u{1}b\"",
            "\"tab\tin\"",
            "\"nl\nin\"",
            "[",
            "[1",
            "[1,",
            "[1,]",
            "[1 2]",
            "[,1]",
            "[1}",
            "]",
            "{",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "{\"a\":1 \"b\":2}",
            "{,}",
            "{\"a\":1}}",
            "1 2",
            "[] x",
            "{}\n\n  ,",
            "null\n x",
            "\"a\"\"b\"",
            "[1]\n]",
            "[\n1,\n2,\n]",
            "{\n  \"a\": tru\n}",
            "é",
            "[é]",
            "  \u{a0}1",
            "1\u{feff}",
            "{\"a\":1,\"a\":}",
            "[\"\u{7f}\", \"x\" 1]",
        ] {
            same(text);
        }
    }

    /// Nesting up to serde_json's limit is read; one more level is an error, not a crash.
    #[test]
    fn depth_limit_as_serde_json() {
        for depth in [1, 2, 126, 127, 128, 129, 1000, 100_000] {
            let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            same(&arrays);
            let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
            same(&objects);
            let mixed = format!("{}null{}", "[{\"k\":".repeat(depth), "}]".repeat(depth));
            same(&mixed);
            let open = "[".repeat(depth);
            same(&open);
        }
    }

    /// Pieces the generated texts are made of: valid JSON tokens and near misses.
    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("null".to_string()),
            Just("true".to_string()),
            Just("fals".to_string()),
            "\"[a-z\\\\\"/é😀\u{1}\t]{0,6}\"",
            "\"(\\\\u[0-9a-fA-FdD]{4}|\\\\[nrtbf\"/\\\\x]|[a-z]){0,4}\"",
            "-?(0|[1-9][0-9]{0,22})(\\.[0-9]{0,20})?([eE][+-]?[0-9]{1,4})?",
            any::<f64>().prop_map(|f| format!("{f:e}")),
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|u| u.to_string()),
        ]
    }

    /// A valid JSON value, written by serde_json.
    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-dé]{0,3}", inner), 0..8)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Token soup: mostly not JSON; both parsers must agree on the value or the error.
        #[test]
        fn token_soup_agrees(tokens in prop::collection::vec(token(), 0..24)) {
            let text = tokens.concat();
            prop_assert_eq!(ours(&text), theirs(&text), "{:?}", text);
        }

        /// Any valid document, compact or pretty, reads back to serde_json's value.
        #[test]
        fn documents_agree(v in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                serde_json::to_string(&v).unwrap_or_default()
            };
            prop_assert_eq!(ours(&text), theirs(&text), "{:?}", text);
        }

        /// A valid document with one byte cut off or one character inserted.
        #[test]
        fn damaged_documents_agree(v in json_value(), at in any::<prop::sample::Index>(),
                                   c in prop::sample::select(vec![',', ']', '}', '"', ':', 'x', '\\', '\u{1}', '1', ' '])) {
            let text = serde_json::to_string(&v).unwrap_or_default();
            let mut cut = at.index(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let truncated = text.get(..cut).unwrap_or_default();
            prop_assert_eq!(ours(truncated), theirs(truncated), "{:?}", truncated);
            let inserted = format!("{}{c}{}", truncated, text.get(cut..).unwrap_or_default());
            prop_assert_eq!(ours(&inserted), theirs(&inserted), "{:?}", inserted);
        }

        /// Any float, written as serde_json writes it or in any exponent form, reads back to
        /// the same bits (both compute it the same way).
        #[test]
        fn floats_agree(f in any::<f64>(), digits in 0usize..20) {
            for text in [format!("{f:e}"), format!("{f:.digits$e}"), format!("{f}"), format!("{f:?}")] {
                same_kinds(&text);
            }
        }
    }
}
