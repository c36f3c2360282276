//! Ids from names (spec §1): the letter classes, `kebab()`, agent/world id validation and the
//! normalisation used to compare a mention or a sender with an id.
//!
//! Invariants: `kebab` never panics, its output is empty or valid kebab-case (no leading,
//! trailing or doubled `-`, only letters and `-`), NFC, lower-case and idempotent
//! (`kebab(kebab(s)) == kebab(s)`); `normalize_id` is idempotent too, so an id compared through
//! it always compares equal to itself. Letters are Unicode letters, not ASCII ones **(differs
//! from the reference)**, so names in any script make ids.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

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
///
/// The mark test is `unicode-normalization`'s General_Category=Mark table, which the crate
/// already carries for NFC, so it costs no extra dependency.
pub fn is_letter(c: char) -> bool {
    c.is_alphabetic() || c.is_numeric() || is_combining_mark(c)
}

/// A *name character*: a letter or `_`.
pub fn is_name_char(c: char) -> bool {
    is_letter(c) || c == '_'
}

/// How many times a normalisation is re-applied at most to reach its fixed point. Real text
/// needs one pass; a second is only needed for exotic characters (e.g. an upper-case letter
/// without a lower-case mapping after one that lowercases), and the loop never needs more.
const MAX_PASSES: usize = 6;

/// One pass of the spec §1 steps, in the spec's order, plus a final NFC (lower-casing can
/// produce a non-NFC sequence, and ids must be NFC to compare with normalised mentions).
fn kebab_pass(s: &str) -> String {
    let nfc: String = s.nfc().collect();
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
    out.to_lowercase().nfc().collect()
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
    s.nfc().collect::<String>().to_lowercase().nfc().collect()
}

/// NFC + Unicode lower-case: how a mention or a sender is compared with an id. Nothing else
/// changes (no trimming, no kebab). Idempotent: re-applied until stable, like [`kebab`].
pub fn normalize_id(s: &str) -> String {
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

#[cfg(test)]
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
