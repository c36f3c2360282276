//! Ids from names (spec §1): the letter classes, `kebab()`, agent/world id validation and the
//! normalisation used to compare a mention or a sender with an id.
//!
//! Invariants: `kebab` never panics, its output is empty or valid kebab-case (no leading,
//! trailing or doubled `-`, only letters and `-`), NFC, lower-case and idempotent
//! (`kebab(kebab(s)) == kebab(s)`); `normalize_id` is idempotent too, so an id compared through
//! it always compares equal to itself. Letters are Unicode letters, not ASCII ones **(differs
//! from the reference)**, so names in any script make ids.

use std::borrow::Cow;
use std::sync::OnceLock;

/// Why a name cannot become an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The name's id would be empty (`invalid_name`).
    #[error("name {0:?} has no letter or digit to make an id from; use a name with at least one letter or digit")]
    InvalidName(String),
    /// The agent id is one of `human`, `user`, `you`, `system`, `world` (`reserved_name`).
    #[error("agent name {0:?} is reserved (human, user, you, system and world are senders); choose another name")]
    ReservedName(String),
}

impl IdError {
    /// The stable snake_case code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            IdError::InvalidName(_) => "invalid_name",
            IdError::ReservedName(_) => "reserved_name",
        }
    }
}

/// Agent ids that are sender names (spec §1, §2) and so cannot name an agent.
pub const RESERVED_AGENT_IDS: [&str; 5] = ["human", "user", "you", "system", "world"];

/// A *letter*: Alphabetic, Numeric (Nd, Nl, No) or a combining Mark (Mn, Mc, Me).
pub fn is_letter(c: char) -> bool {
    c.is_alphabetic() || c.is_numeric() || is_mark(c)
}

/// General_Category=Mark (Mn, Mc, Me). std has no General Category; this compact range table
/// (333 ranges, about 2.7 KB) replaces `unicode_normalization::char::is_combining_mark`, whose
/// per-character hash table would add about 15 KB to the wasm. It is generated from that table
/// (same Unicode version as the NFC tables), and a test checks that both agree on every `char`.
pub fn is_mark(c: char) -> bool {
    let c = u32::from(c);
    MARK_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Inclusive, sorted, non-overlapping ranges of General_Category=Mark.
#[rustfmt::skip]
const MARK_RANGES: [(u32, u32); 333] = [
    (0x300, 0x36F), (0x483, 0x489), (0x591, 0x5BD), (0x5BF, 0x5BF), (0x5C1, 0x5C2),
    (0x5C4, 0x5C5), (0x5C7, 0x5C9), (0x610, 0x61A), (0x64B, 0x65F), (0x670, 0x670),
    (0x6D6, 0x6DC), (0x6DF, 0x6E4), (0x6E7, 0x6E8), (0x6EA, 0x6ED), (0x711, 0x711),
    (0x730, 0x74A), (0x7A6, 0x7B0), (0x7EB, 0x7F3), (0x7FD, 0x7FD), (0x816, 0x819),
    (0x81B, 0x823), (0x825, 0x827), (0x829, 0x82D), (0x859, 0x85B), (0x897, 0x89F),
    (0x8CA, 0x8E1), (0x8E3, 0x903), (0x93A, 0x93C), (0x93E, 0x94F), (0x951, 0x957),
    (0x962, 0x963), (0x981, 0x983), (0x9BC, 0x9BC), (0x9BE, 0x9C4), (0x9C7, 0x9C8),
    (0x9CB, 0x9CD), (0x9D7, 0x9D7), (0x9E2, 0x9E3), (0x9FE, 0x9FE), (0xA01, 0xA03),
    (0xA3C, 0xA3C), (0xA3E, 0xA42), (0xA47, 0xA48), (0xA4B, 0xA4D), (0xA51, 0xA51),
    (0xA70, 0xA71), (0xA75, 0xA75), (0xA81, 0xA83), (0xABC, 0xABC), (0xABE, 0xAC5),
    (0xAC7, 0xAC9), (0xACB, 0xACD), (0xAE2, 0xAE3), (0xAFA, 0xAFF), (0xB01, 0xB03),
    (0xB3C, 0xB3C), (0xB3E, 0xB44), (0xB47, 0xB48), (0xB4B, 0xB4D), (0xB53, 0xB57),
    (0xB62, 0xB63), (0xB82, 0xB82), (0xBBE, 0xBC2), (0xBC6, 0xBC8), (0xBCA, 0xBCD),
    (0xBD7, 0xBD7), (0xC00, 0xC04), (0xC3C, 0xC3C), (0xC3E, 0xC44), (0xC46, 0xC48),
    (0xC4A, 0xC4D), (0xC55, 0xC56), (0xC62, 0xC63), (0xC81, 0xC83), (0xCBC, 0xCBC),
    (0xCBE, 0xCC4), (0xCC6, 0xCC8), (0xCCA, 0xCCD), (0xCD5, 0xCD6), (0xCE2, 0xCE3),
    (0xCF3, 0xCF3), (0xD00, 0xD03), (0xD3B, 0xD3C), (0xD3E, 0xD44), (0xD46, 0xD48),
    (0xD4A, 0xD4D), (0xD57, 0xD57), (0xD62, 0xD63), (0xD81, 0xD83), (0xDCA, 0xDCA),
    (0xDCF, 0xDD4), (0xDD6, 0xDD6), (0xDD8, 0xDDF), (0xDF2, 0xDF3), (0xE31, 0xE31),
    (0xE34, 0xE3A), (0xE47, 0xE4E), (0xEB1, 0xEB1), (0xEB4, 0xEBC), (0xEC8, 0xECE),
    (0xF18, 0xF19), (0xF35, 0xF35), (0xF37, 0xF37), (0xF39, 0xF39), (0xF3E, 0xF3F),
    (0xF71, 0xF84), (0xF86, 0xF87), (0xF8D, 0xF97), (0xF99, 0xFBC), (0xFC6, 0xFC6),
    (0x102B, 0x103E), (0x1056, 0x1059), (0x105E, 0x1060), (0x1062, 0x1064), (0x1067, 0x106D),
    (0x1071, 0x1074), (0x1082, 0x108D), (0x108F, 0x108F), (0x109A, 0x109D), (0x135D, 0x135F),
    (0x1712, 0x1715), (0x1732, 0x1734), (0x1752, 0x1753), (0x1772, 0x1773), (0x17B4, 0x17D3),
    (0x17DD, 0x17DD), (0x180B, 0x180D), (0x180F, 0x180F), (0x1885, 0x1886), (0x18A9, 0x18A9),
    (0x1920, 0x192B), (0x1930, 0x193B), (0x1A17, 0x1A1B), (0x1A55, 0x1A5E), (0x1A60, 0x1A7C),
    (0x1A7F, 0x1A7F), (0x1AB0, 0x1AF0), (0x1B00, 0x1B04), (0x1B34, 0x1B44), (0x1B6B, 0x1B73),
    (0x1B80, 0x1B82), (0x1BA1, 0x1BAD), (0x1BE6, 0x1BF3), (0x1C24, 0x1C37), (0x1CD0, 0x1CD2),
    (0x1CD4, 0x1CE8), (0x1CED, 0x1CED), (0x1CF4, 0x1CF4), (0x1CF7, 0x1CF9), (0x1DC0, 0x1DFF),
    (0x20D0, 0x20F0), (0x2CEF, 0x2CF1), (0x2D7F, 0x2D7F), (0x2DE0, 0x2DFF), (0x302A, 0x302F),
    (0x3099, 0x309A), (0xA66F, 0xA672), (0xA674, 0xA67D), (0xA69E, 0xA69F), (0xA6F0, 0xA6F1),
    (0xA802, 0xA802), (0xA806, 0xA806), (0xA80B, 0xA80B), (0xA823, 0xA827), (0xA82C, 0xA82C),
    (0xA880, 0xA881), (0xA8B4, 0xA8C5), (0xA8E0, 0xA8F1), (0xA8FF, 0xA8FF), (0xA926, 0xA92D),
    (0xA947, 0xA953), (0xA980, 0xA983), (0xA9B3, 0xA9C0), (0xA9E5, 0xA9E5), (0xAA29, 0xAA36),
    (0xAA43, 0xAA43), (0xAA4C, 0xAA4D), (0xAA7B, 0xAA7D), (0xAAB0, 0xAAB0), (0xAAB2, 0xAAB4),
    (0xAAB7, 0xAAB8), (0xAABE, 0xAABF), (0xAAC1, 0xAAC1), (0xAAEB, 0xAAEF), (0xAAF5, 0xAAF6),
    (0xABE3, 0xABEA), (0xABEC, 0xABED), (0xFB1E, 0xFB1E), (0xFE00, 0xFE0F), (0xFE20, 0xFE2F),
    (0x101FD, 0x101FD), (0x102E0, 0x102E0), (0x10376, 0x1037A), (0x10A01, 0x10A03),
    (0x10A05, 0x10A06), (0x10A0C, 0x10A0F), (0x10A38, 0x10A3A), (0x10A3F, 0x10A3F),
    (0x10AE5, 0x10AE6), (0x10D24, 0x10D27), (0x10D69, 0x10D6D), (0x10EAB, 0x10EAC),
    (0x10ECB, 0x10ECF), (0x10EF0, 0x10EFF), (0x10F46, 0x10F50), (0x10F82, 0x10F85),
    (0x11000, 0x11002), (0x11038, 0x11046), (0x11070, 0x11070), (0x11073, 0x11074),
    (0x1107F, 0x11082), (0x110B0, 0x110BA), (0x110C2, 0x110C2), (0x11100, 0x11102),
    (0x11127, 0x11134), (0x11145, 0x11146), (0x11173, 0x11173), (0x11180, 0x11182),
    (0x111B3, 0x111C0), (0x111C9, 0x111CC), (0x111CE, 0x111CF), (0x1122C, 0x11237),
    (0x1123E, 0x1123E), (0x11241, 0x11241), (0x112DF, 0x112EA), (0x11300, 0x11303),
    (0x1133B, 0x1133C), (0x1133E, 0x11344), (0x11347, 0x11348), (0x1134B, 0x1134D),
    (0x11357, 0x11357), (0x11362, 0x11363), (0x11366, 0x1136C), (0x11370, 0x11374),
    (0x113B8, 0x113C0), (0x113C2, 0x113C2), (0x113C5, 0x113C5), (0x113C7, 0x113CA),
    (0x113CC, 0x113D0), (0x113D2, 0x113D2), (0x113E1, 0x113E2), (0x11435, 0x11446),
    (0x1145E, 0x1145E), (0x114B0, 0x114C3), (0x115AF, 0x115B5), (0x115B8, 0x115C0),
    (0x115DC, 0x115DD), (0x11630, 0x11640), (0x116AB, 0x116B7), (0x1171D, 0x1172B),
    (0x1182C, 0x1183A), (0x11930, 0x11935), (0x11937, 0x11938), (0x1193B, 0x1193E),
    (0x11940, 0x11940), (0x11942, 0x11943), (0x119D1, 0x119D7), (0x119DA, 0x119E0),
    (0x119E4, 0x119E4), (0x11A01, 0x11A0A), (0x11A33, 0x11A39), (0x11A3B, 0x11A3E),
    (0x11A47, 0x11A47), (0x11A51, 0x11A5B), (0x11A8A, 0x11A99), (0x11B60, 0x11B67),
    (0x11C2F, 0x11C36), (0x11C38, 0x11C3F), (0x11C92, 0x11CA7), (0x11CA9, 0x11CB6),
    (0x11D31, 0x11D36), (0x11D3A, 0x11D3A), (0x11D3C, 0x11D3D), (0x11D3F, 0x11D45),
    (0x11D47, 0x11D47), (0x11D8A, 0x11D8E), (0x11D90, 0x11D91), (0x11D93, 0x11D97),
    (0x11DF0, 0x11DF0), (0x11EF3, 0x11EF6), (0x11F00, 0x11F01), (0x11F03, 0x11F03),
    (0x11F34, 0x11F3A), (0x11F3E, 0x11F42), (0x11F5A, 0x11F5A), (0x13440, 0x13440),
    (0x13447, 0x13455), (0x1611E, 0x1612F), (0x16AF0, 0x16AF4), (0x16B30, 0x16B36),
    (0x16F4F, 0x16F4F), (0x16F51, 0x16F87), (0x16F8F, 0x16F92), (0x16FE4, 0x16FE4),
    (0x16FF0, 0x16FF1), (0x1BC9D, 0x1BC9E), (0x1CF00, 0x1CF2D), (0x1CF30, 0x1CF46),
    (0x1D127, 0x1D128), (0x1D165, 0x1D169), (0x1D16D, 0x1D172), (0x1D17B, 0x1D182),
    (0x1D185, 0x1D18B), (0x1D1AA, 0x1D1AD), (0x1D242, 0x1D244), (0x1D250, 0x1D252),
    (0x1D25B, 0x1D25C), (0x1D25F, 0x1D25F), (0x1D280, 0x1D281), (0x1DA00, 0x1DA36),
    (0x1DA3B, 0x1DA6C), (0x1DA75, 0x1DA75), (0x1DA84, 0x1DA84), (0x1DA9B, 0x1DA9F),
    (0x1DAA1, 0x1DAAF), (0x1E000, 0x1E006), (0x1E008, 0x1E018), (0x1E01B, 0x1E021),
    (0x1E023, 0x1E024), (0x1E026, 0x1E02A), (0x1E08F, 0x1E08F), (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF), (0x1E4EC, 0x1E4EF), (0x1E5EE, 0x1E5EF),
    (0x1E6E3, 0x1E6E3), (0x1E6E6, 0x1E6E6), (0x1E6EE, 0x1E6EF), (0x1E6F5, 0x1E6F5),
    (0x1E8D0, 0x1E8D6), (0x1E944, 0x1E94A), (0xE0100, 0xE01EF),
];

/// A *name character*: a letter or `_`.
pub fn is_name_char(c: char) -> bool {
    is_letter(c) || c == '_'
}

/// The Unicode text operations of the id rule: NFC, and the Unicode lower case followed by NFC.
///
/// They are injected like the clock: on wasm32 the normalisation and case tables would be
/// about 100 KB of the `.wasm`, and every supported runtime has `String.prototype.normalize`
/// and `toLowerCase`, so the web adapter sets the host's before a world is created or opened
/// ([`set_text_ops`]) and the wasm build does not contain the tables. Native builds and tests
/// use `unicode-normalization` and std (`builtin_text_ops`, native builds only). Both follow the Unicode standard
/// (full lower-casing with the final-sigma rule); they can only differ on characters assigned
/// in a Unicode version one side does not know yet. Strings a cheap check proves unchanged
/// never reach them (see the module's `nfc` and `lower_nfc`).
#[derive(Debug, Clone, Copy)]
pub struct TextOps {
    /// `s` in NFC.
    pub nfc: fn(&str) -> String,
    /// The Unicode lower case of `s` (as `str::to_lowercase`), then NFC.
    pub lower_nfc: fn(&str) -> String,
}

static TEXT_OPS: OnceLock<TextOps> = OnceLock::new();

/// Injects the text operations for the whole process; the first call wins (`false` after).
pub fn set_text_ops(ops: TextOps) -> bool {
    TEXT_OPS.set(ops).is_ok()
}

/// The built-in text operations: `unicode-normalization` and std (native builds only).
#[cfg(not(target_arch = "wasm32"))]
pub fn builtin_text_ops() -> TextOps {
    use unicode_normalization::UnicodeNormalization;
    TextOps {
        nfc: |s| s.nfc().collect(),
        lower_nfc: |s| s.to_lowercase().nfc().collect(),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn text_ops() -> TextOps {
    *TEXT_OPS.get_or_init(builtin_text_ops)
}

/// The web adapter injects the host's before any world exists; without it (core functions
/// called directly on wasm32) text stays as given apart from ASCII lower-casing.
#[cfg(target_arch = "wasm32")]
fn text_ops() -> TextOps {
    TEXT_OPS.get().copied().unwrap_or(TextOps {
        nfc: str::to_string,
        lower_nfc: str::to_ascii_lowercase,
    })
}

/// `s` in NFC. A string whose code points are all below U+0300 is already NFC: U+0300 is the
/// first code point that is not NFC_Quick_Check=Yes with canonical combining class 0, so
/// nothing before it composes, decomposes or reorders. In UTF-8 that is every byte below
/// 0xCC (the lead byte of U+0300), so ASCII and Latin-1 names skip the normaliser.
fn nfc(s: &str) -> Cow<'_, str> {
    if s.bytes().all(|b| b < 0xCC) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned((text_ops().nfc)(s))
    }
}

/// The Unicode lower case of `s`, then NFC; ASCII needs no tables.
fn lower_nfc(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        (text_ops().lower_nfc)(s)
    }
}

/// How many times a normalisation is re-applied at most to reach its fixed point. Real text
/// needs one pass; a second is only needed for exotic characters (e.g. an upper-case letter
/// without a lower-case mapping after one that lowercases), and the loop never needs more.
const MAX_PASSES: usize = 6;

/// One pass of the spec §1 steps, in the spec's order, plus a final NFC (lower-casing can
/// produce a non-NFC sequence, and ids must be NFC to compare with normalised mentions).
fn kebab_pass(s: &str) -> String {
    let nfc = nfc(s);
    let mut out = String::with_capacity(nfc.len());
    // `prev` is the last character pushed, used for the lower→upper rule; `-` marks a
    // pending separator so that runs collapse and no `-` leads.
    let mut prev: Option<char> = None;
    let mut pending_dash = false;
    for c in nfc.chars() {
        // Whitespace, `-` and every non-letter all become `-`; runs collapse.
        if !is_letter(c) {
            pending_dash = true;
            continue;
        }
        // A `-` between a lower-case and the following upper-case letter (`myWorld`).
        if c.is_uppercase() && prev.is_some_and(char::is_lowercase) {
            pending_dash = true;
        }
        if pending_dash && prev.is_some() {
            out.push('-');
        }
        pending_dash = false;
        out.push(c);
        prev = Some(c);
    }
    // Trailing `-` is never pushed (a pending dash is only written before a letter).
    lower_nfc(&out)
}

/// `kebab(s)` as spec §1 defines it: NFC-normalise; runs of whitespace → `-`; a `-` between a
/// lower-case and the following upper-case letter; every non-letter → `-` (so `_` too); runs of
/// `-` collapse; strip leading/trailing `-`; lower-case (Unicode).
///
/// Examples: `My Test World` → `my-test-world`, `Agent_007` → `agent-007`, `XMLParser` →
/// `xmlparser`, `Ünïcode Name` → `ünïcode-name`.
///
/// The steps are repeated until the result no longer changes, so `kebab` is idempotent even
/// for exotic characters (for ordinary text the first pass is already the fixed point).
pub fn kebab(s: &str) -> String {
    let mut cur = kebab_pass(s);
    for _ in 1..MAX_PASSES {
        let next = kebab_pass(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

/// The id of a world named `name` (`invalid_name` when empty).
pub fn world_id(name: &str) -> Result<String, IdError> {
    let id = kebab(name);
    if id.is_empty() {
        return Err(IdError::InvalidName(name.to_string()));
    }
    Ok(id)
}

/// The id of an agent named `name` (`invalid_name` when empty, `reserved_name` when reserved).
pub fn agent_id(name: &str) -> Result<String, IdError> {
    let id = world_id(name)?;
    if RESERVED_AGENT_IDS.contains(&id.as_str()) {
        return Err(IdError::ReservedName(name.to_string()));
    }
    Ok(id)
}

fn nfc_lower(s: &str) -> String {
    lower_nfc(&nfc(s))
}

/// NFC + Unicode lower-case: how a mention or a sender is compared with an id. Nothing else
/// changes (no trimming, no kebab). Idempotent: re-applied until stable, like [`kebab`].
pub fn normalize_id(s: &str) -> String {
    // The common case (every sender and mention while routing): ASCII is NFC, its lower case
    // is ASCII and one pass is the fixed point.
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut cur = nfc_lower(s);
    for _ in 1..MAX_PASSES {
        let next = nfc_lower(&cur);
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

// Native only: the property tests use proptest, a host dev-dependency (the core's rules are
// tested natively; the wasm rings test the adapters).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn kebab_spec_examples() {
        assert_eq!(kebab("My Test World"), "my-test-world");
        assert_eq!(kebab("Agent_007"), "agent-007");
        assert_eq!(kebab("XMLParser"), "xmlparser");
        assert_eq!(kebab("Ünïcode Name"), "ünïcode-name");
        assert_eq!(kebab("myWorld"), "my-world");
    }

    #[test]
    fn kebab_empty_is_empty() {
        assert_eq!(kebab(""), "");
        assert_eq!(kebab("   "), "");
        assert_eq!(kebab("--__!!"), "");
    }

    #[test]
    fn kebab_whitespace_runs_become_one_dash() {
        assert_eq!(kebab("a \t\n  b"), "a-b");
        assert_eq!(kebab("a\u{00A0}b"), "a-b");
    }

    #[test]
    fn kebab_dash_between_lower_and_upper() {
        assert_eq!(kebab("camelCaseName"), "camel-case-name");
        assert_eq!(kebab("HTTPServer"), "httpserver");
        assert_eq!(kebab("agent7B"), "agent7b");
        assert_eq!(kebab("éCole"), "é-cole");
    }

    #[test]
    fn kebab_non_letters_become_dash() {
        assert_eq!(kebab("a_b.c/d@e"), "a-b-c-d-e");
        assert_eq!(kebab("R2-D2 (droid)"), "r2-d2-droid");
    }

    #[test]
    fn kebab_dash_runs_collapse_and_ends_strip() {
        assert_eq!(kebab("--a---b--"), "a-b");
        assert_eq!(kebab(" _a_ "), "a");
    }

    #[test]
    fn kebab_lowercases_unicode() {
        assert_eq!(kebab("ÉCOLE"), "école");
        assert_eq!(kebab("ΣΟΦΙΑ"), "σοφια");
        assert_eq!(kebab("Имя Агента"), "имя-агента");
    }

    #[test]
    fn kebab_nfc_normalises() {
        // `e` + combining acute becomes the precomposed `é`.
        assert_eq!(kebab("Cafe\u{301} Bot"), "caf\u{e9}-bot");
    }

    #[test]
    fn kebab_keeps_letters_of_every_script() {
        assert_eq!(kebab("東京 エージェント"), "東京-エージェント");
        assert_eq!(kebab("हिन्दी एजेंट"), "हिन्दी-एजेंट");
        assert_eq!(kebab("Ⅻ ½"), "ⅻ-½");
    }

    #[test]
    fn mark_table_matches_unicode_normalization() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            assert_eq!(
                is_mark(c),
                unicode_normalization::char::is_combining_mark(c),
                "U+{:04X}",
                u32::from(c)
            );
        }
        assert!(MARK_RANGES.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(MARK_RANGES.iter().all(|&(lo, hi)| lo <= hi));
    }

    #[test]
    fn below_u0300_every_string_is_nfc() {
        use unicode_normalization::{char::canonical_combining_class, is_nfc_quick, IsNormalized};
        // The fast path of `nfc`: each such code point is a starter that is NFC_QC=Yes, so any
        // string of them is NFC; U+0300 itself is not (it combines).
        for c in (0..0x300u32).filter_map(char::from_u32) {
            assert_eq!(canonical_combining_class(c), 0, "U+{:04X}", u32::from(c));
            assert_eq!(is_nfc_quick(std::iter::once(c)), IsNormalized::Yes);
        }
        assert_ne!(canonical_combining_class('\u{300}'), 0);
        // In UTF-8, U+0300 is the first code point whose lead byte is 0xCC.
        assert_eq!("\u{2FF}".as_bytes()[0], 0xCB);
        assert_eq!("\u{300}".as_bytes()[0], 0xCC);
    }

    #[test]
    fn letter_classes() {
        assert!(is_letter('a'));
        assert!(is_letter('7'));
        assert!(is_letter('Ⅻ')); // Nl
        assert!(is_letter('½')); // No
        assert!(is_letter('\u{301}')); // Mn
        assert!(is_letter('\u{903}')); // Mc
        assert!(is_letter('\u{20DD}')); // Me
        assert!(!is_letter('_'));
        assert!(!is_letter('-'));
        assert!(!is_letter(' '));
        assert!(is_name_char('_'));
        assert!(!is_name_char('-'));
        assert!(!is_name_char('@'));
    }

    #[test]
    fn world_id_rejects_empty_ids() {
        assert_eq!(world_id("My World"), Ok("my-world".to_string()));
        let err = world_id("!!!");
        assert_eq!(err, Err(IdError::InvalidName("!!!".into())));
        assert_eq!(err.map_err(|e| e.code()), Err("invalid_name"));
    }

    #[test]
    fn agent_id_rejects_reserved_names() {
        for name in ["human", "User", " YOU ", "System", "world"] {
            let code = agent_id(name).map_err(|e| e.code());
            assert_eq!(code, Err("reserved_name"), "{name}");
        }
        assert_eq!(agent_id("").map_err(|e| e.code()), Err("invalid_name"));
        assert_eq!(agent_id("Human Helper"), Ok("human-helper".to_string()));
    }

    #[test]
    fn normalize_id_is_nfc_and_lowercase() {
        assert_eq!(normalize_id("Test-Agent"), "test-agent");
        assert_eq!(normalize_id("E\u{301}cole"), "\u{e9}cole");
        assert_eq!(normalize_id("test_agent"), "test_agent");
    }

    fn name_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 _\\-.@ÉéİıΣσςẞß\u{301}\u{345}\u{0130}\u{1D400}\u{1D41A}]{0,24}",
        ]
    }

    proptest! {
        #[test]
        fn kebab_output_is_valid_kebab_case(s in name_strategy()) {
            let k = kebab(&s);
            prop_assert!(!k.starts_with('-'));
            prop_assert!(!k.ends_with('-'));
            prop_assert!(!k.contains("--"));
            prop_assert!(k.chars().all(|c| c == '-' || is_letter(c)));
            prop_assert_eq!(normalize_id(&k), k.clone());
            prop_assert_eq!(kebab(&k), k);
        }

        #[test]
        fn normalize_id_is_idempotent(s in name_strategy()) {
            let n = normalize_id(&s);
            prop_assert_eq!(normalize_id(&n), n);
        }
    }
}
