//! The retry policy for LLM calls (spec §7), as pure functions; the web transport runs it.
//!
//! A call is tried at most [`MAX_ATTEMPTS`] times. Only transient failures are retried
//! (no response at all, 408, 429, 5xx, a stream that ended before its terminator), and only
//! before any output reached the user: the
//! caller tracks that, because a retry after text streamed would show the reply twice.
//! The wait before attempt `n + 1` is exponential from [`BASE_DELAY_MS`], doubled per
//! attempt, capped at [`MAX_BACKOFF_MS`], with "equal jitter" (half fixed, half random) so
//! that agents of one world do not retry in lockstep yet never retry immediately. A
//! `Retry-After` from the server is a lower bound, capped at [`MAX_RETRY_AFTER_MS`] so one
//! header cannot park a turn for minutes (the call's overall timeout still applies).

use super::types::LlmError;
use super::types::STREAM_CUT;

/// Attempts per call, the first one included.
pub const MAX_ATTEMPTS: u32 = 3;
/// The wait after the first failed attempt, before jitter.
pub const BASE_DELAY_MS: u64 = 500;
/// The computed backoff never exceeds this (before `Retry-After` is considered).
pub const MAX_BACKOFF_MS: u64 = 8_000;
/// A server's `Retry-After` is honoured up to this.
pub const MAX_RETRY_AFTER_MS: u64 = 30_000;

/// Error types that providers send inside a `200 OK` stream for what would otherwise be a
/// 429/5xx (Anthropic's `overloaded_error`, OpenAI's `server_error`, Gemini's `UNAVAILABLE`
/// ...). The decoders put the type first in the excerpt (`overloaded_error: Overloaded`).
const TRANSIENT_STREAM_ERRORS: [&str; 8] = [
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "server_error",
    "UNAVAILABLE",
    "RESOURCE_EXHAUSTED",
    "INTERNAL",
    "DEADLINE_EXCEEDED",
];

/// Whether `err` is transient: a network failure, 408, 429 or a 5xx, or an error payload of
/// one of those kinds delivered inside a successful response (it failed before the first
/// token just the same; whether output had started is the caller's check). A `200` stream
/// that ended cleanly before its terminator is transient too: a proxy or server that gave up
/// looks like a cut connection, and an empty reply is worth another try.
pub fn is_retryable(err: &LlmError) -> bool {
    match err {
        LlmError::Network { .. } => true,
        LlmError::Decode { message, .. } => message == STREAM_CUT,
        LlmError::Http {
            status,
            body_excerpt,
            ..
        } => {
            *status == 408
                || *status == 429
                || (500..=599).contains(status)
                || ((200..=299).contains(status)
                    && TRANSIENT_STREAM_ERRORS.iter().any(|t| {
                        body_excerpt
                            .strip_prefix(t)
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
                    }))
        }
        _ => false,
    }
}

/// Whether to try again after `attempts_made` attempts ended with `err`.
pub fn should_retry(err: &LlmError, attempts_made: u32, output_started: bool) -> bool {
    !output_started && attempts_made < MAX_ATTEMPTS && is_retryable(err)
}

/// How long to wait after attempt number `attempt` (1 for the first) failed.
///
/// `jitter_unit` is a random number in `[0, 1)` supplied by the caller (the core has no
/// randomness); values outside are clamped, NaN counts as 0. `retry_after_ms` is the parsed
/// `Retry-After`, if the server sent one.
pub fn backoff_ms(attempt: u32, jitter_unit: f64, retry_after_ms: Option<u64>) -> u64 {
    let doublings = attempt.saturating_sub(1).min(16);
    let exp = BASE_DELAY_MS
        .saturating_mul(1u64 << doublings)
        .min(MAX_BACKOFF_MS);
    let unit = if jitter_unit.is_nan() {
        0.0
    } else {
        jitter_unit.clamp(0.0, 1.0)
    };
    let half = exp / 2;
    let jittered = half + ((exp - half) as f64 * unit) as u64;
    match retry_after_ms {
        Some(ra) => jittered.max(ra.min(MAX_RETRY_AFTER_MS)),
        None => jittered,
    }
}

/// Parses a `Retry-After` value into milliseconds from now: delay-seconds (`"120"`, also a
/// decimal such as `"1.5"`, which some APIs send), or an HTTP-date (IMF-fixdate, RFC 850 or
/// asctime form) compared with `now_ms` (Unix milliseconds). A date in the past gives 0.
/// Anything else gives `None`.
pub fn parse_retry_after(value: &str, now_ms: u64) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    // Saturates instead of failing on absurd values: they are capped later anyway.
    if let Some(ms) = decimal_shifted(v, 3) {
        return Some(ms);
    }
    let at = parse_http_date(v)?;
    Some(at.saturating_sub(now_ms))
}

/// A decimal number (`"120"`, `"1.5"`, `".5"`, `"2."`: digits with at most one `.`, at least
/// one digit) times 10^`shift`, rounded down, saturating. Exact decimal arithmetic on the
/// digits: no float parsing, whose code and tables cost the wasm module about 15 KB for these
/// two headers, and no binary rounding (`"1.005"` s is 1,005 ms, where `1.005 * 1000.0` is
/// 1004.99…).
fn decimal_shifted(v: &str, shift: usize) -> Option<u64> {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let frac = frac.bytes().chain(std::iter::repeat(b'0')).take(shift);
    let mut n: u64 = 0;
    for b in int.bytes().chain(frac) {
        n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Some(n)
}

/// Parses a `retry-after-ms` value (OpenAI's: milliseconds, possibly with a fraction) into
/// whole milliseconds; anything but a non-negative decimal gives `None`.
pub fn parse_retry_after_ms(value: &str) -> Option<u64> {
    decimal_shifted(value.trim(), 0)
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn month(s: &str) -> Option<u32> {
    let i = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(s))?;
    u32::try_from(i + 1).ok()
}

fn hms(s: &str) -> Option<(u32, u32, u32)> {
    let mut it = s.split(':').map(crate::core::parse_u32);
    let (h, m, sec) = (it.next()??, it.next()??, it.next()??);
    (it.next().is_none() && h < 24 && m < 60 && sec <= 60).then_some((h, m, sec))
}

/// An HTTP-date (RFC 9110 §5.6.7) as Unix milliseconds.
pub fn parse_http_date(s: &str) -> Option<u64> {
    // At most six tokens (IMF-fixdate's); more is no date.
    let mut tokens = [""; 6];
    let mut n = 0;
    for t in s.split_whitespace() {
        *tokens.get_mut(n)? = t;
        n += 1;
    }
    let (year, mon, day, time) = match tokens.get(..n)? {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [_, d, mo, y, t, "GMT"] => (
            crate::core::parse_i64(y)?,
            month(mo)?,
            crate::core::parse_u32(d)?,
            *t,
        ),
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        [_, dmy, t, "GMT"] => {
            let mut p = dmy.split('-');
            let (d, mo, y) = (p.next()?, p.next()?, p.next()?);
            let y = crate::core::parse_i64(y)?;
            // Two-digit years: RFC 9110 says pick the most recent past century; for a
            // retry delay any date before 1970 ends up as "now" anyway.
            let y = if y < 100 {
                if y < 70 {
                    2000 + y
                } else {
                    1900 + y
                }
            } else {
                y
            };
            (y, month(mo)?, crate::core::parse_u32(d)?, *t)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [_, mo, d, t, y] => (
            crate::core::parse_i64(y)?,
            month(mo)?,
            crate::core::parse_u32(d)?,
            *t,
        ),
        _ => return None,
    };
    let (h, m, sec) = hms(time)?;
    // Four-digit years only: keeps the arithmetic below far from overflow on hostile input.
    if !(1..=31).contains(&day) || !(1..=9999).contains(&year) {
        return None;
    }
    let days = days_from_civil(year, mon, day);
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(sec);
    u64::try_from(secs).ok()?.checked_mul(1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

// Native only: the property tests use proptest, a host dev-dependency (the core's rules are
// tested natively; the wasm rings test the adapters).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn http(status: u16) -> LlmError {
        LlmError::Http {
            provider: "openai".into(),
            status,
            status_text: String::new(),
            body_excerpt: String::new(),
            retry_after_ms: None,
        }
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable(&http(s)), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!is_retryable(&http(s)), "{s}");
        }
        let net = LlmError::Network {
            provider: "ollama".into(),
            message: "x".into(),
        };
        assert!(is_retryable(&net));
        assert!(!is_retryable(&LlmError::Aborted {
            provider: "x".into()
        }));
        assert!(!is_retryable(&LlmError::Decode {
            provider: "x".into(),
            message: "x".into()
        }));
        // A stream that ended before its terminator (an empty 200 among them), as the
        // decoders report it: retried before output like a cut connection.
        let mut cut = crate::core::llm::decoder_for(crate::core::llm::ProviderKind::OpenAi, true);
        let (events, err) = cut.close();
        assert!(events.is_empty());
        assert!(err.as_ref().is_some_and(is_retryable), "{err:?}");
        assert!(err.as_ref().is_some_and(|e| should_retry(e, 1, false)));
        assert!(!err.as_ref().is_some_and(|e| should_retry(e, 1, true)));
        let in_stream = |excerpt: &str| LlmError::Http {
            provider: "anthropic".into(),
            status: 200,
            status_text: "OK".into(),
            body_excerpt: excerpt.into(),
            retry_after_ms: None,
        };
        assert!(is_retryable(&in_stream("overloaded_error: Overloaded")));
        assert!(is_retryable(&in_stream(
            "UNAVAILABLE: The model is overloaded."
        )));
        assert!(!is_retryable(&in_stream("invalid_request_error: bad")));
        assert!(!is_retryable(&in_stream("server_errors are fun")));
        assert!(should_retry(&net, 1, false));
        assert!(should_retry(&net, 2, false));
        assert!(!should_retry(&net, 3, false));
        assert!(!should_retry(&net, 1, true));
    }

    #[test]
    fn backoff_grows_is_jittered_capped_and_honours_retry_after() {
        assert_eq!(backoff_ms(1, 0.0, None), 250);
        assert_eq!(backoff_ms(1, 1.0, None), 500);
        assert_eq!(backoff_ms(2, 0.0, None), 500);
        assert_eq!(backoff_ms(2, 1.0, None), 1000);
        assert_eq!(backoff_ms(3, 0.5, None), 1500);
        assert_eq!(backoff_ms(30, 1.0, None), MAX_BACKOFF_MS);
        assert_eq!(backoff_ms(u32::MAX, 1.0, None), MAX_BACKOFF_MS);
        assert_eq!(backoff_ms(1, f64::NAN, None), 250);
        assert_eq!(backoff_ms(1, 7.0, None), 500);
        assert_eq!(backoff_ms(1, 0.0, Some(2_000)), 2_000);
        assert_eq!(backoff_ms(1, 1.0, Some(100)), 500);
        assert_eq!(backoff_ms(1, 0.0, Some(3_600_000)), MAX_RETRY_AFTER_MS);
    }

    #[test]
    fn retry_after_forms() {
        let now = 784_111_777_000; // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("120", now), Some(120_000));
        assert_eq!(parse_retry_after(" 0 ", now), Some(0));
        assert_eq!(parse_retry_after("1.5", now), Some(1_500));
        // Exact decimal: 1.005 s is 1,005 ms (a float product truncates it to 1,004).
        assert_eq!(parse_retry_after("1.005", now), Some(1_005));
        assert_eq!(parse_retry_after("0.0019", now), Some(1));
        assert_eq!(parse_retry_after(".25", now), Some(250));
        assert_eq!(parse_retry_after("2.", now), Some(2_000));
        assert_eq!(parse_retry_after(".", now), None);
        assert_eq!(parse_retry_after("1.2.3", now), None);
        assert_eq!(parse_retry_after_ms(" 1500 "), Some(1_500));
        assert_eq!(parse_retry_after_ms("20.9"), Some(20));
        assert_eq!(parse_retry_after_ms("-1"), None);
        assert_eq!(parse_retry_after_ms("soon"), None);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(10_000)
        );
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:50:37 GMT", now),
            Some(60_000)
        );
        assert_eq!(
            parse_retry_after("Sun Nov  6 08:49:39 1994", now),
            Some(2_000)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(0)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(u64::MAX)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Sat, 29 Feb 2020 12:00:00 GMT"),
            Some(1_582_977_600_000)
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 25:49:37 GMT"), None);
        // The three forms RFC 9110 allows (IMF-fixdate, RFC 850, asctime), and nothing with
        // a token more than the longest of them.
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(date), Some(784_111_777_000), "{date}");
        }
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT now"), None);
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT GMT GMT"),
            None
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 9223372036854775807 08:49:37 GMT"),
            None
        );
    }

    proptest::proptest! {
        #[test]
        fn retry_after_never_panics(s in "\\PC{0,40}", now in proptest::prelude::any::<u64>()) {
            let _ = parse_retry_after(&s, now);
        }

        #[test]
        fn http_date_shapes_never_panic(
            d in proptest::prelude::any::<i64>(),
            y in proptest::prelude::any::<i64>(),
            t in "[0-9:]{0,10}",
        ) {
            let _ = parse_http_date(&format!("Sun, {d} Nov {y} {t} GMT"));
            let _ = parse_http_date(&format!("Sunday, {d}-Nov-{y} {t} GMT"));
            let _ = parse_http_date(&format!("Sun Nov {d} {t} {y}"));
        }
    }
}
