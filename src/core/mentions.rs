//! Senders (spec §2) and mentions (spec §3): the one sender classification, the mention
//! grammar, mentions anywhere and line-start mentions, plus the small scanners that the reply
//! and title rules share (a leading run of mentions, "starts with a mention").
//!
//! Invariants: nothing here panics on any `&str` (every slice index is a char boundary found
//! by the scanner); returned mentions are non-empty, normalised with [`normalize_id`] (so they
//! compare directly with ids and `normalize_id(m) == m`), in order of first appearance and
//! without duplicates. An `@` that follows a name character or another `@` never starts a
//! mention, so e-mail addresses are not mentions **(differs from the reference)**.

use super::ids::{is_name_char, normalize_id};

/// The single sender classification used everywhere (case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderType {
    Human,
    Agent,
    System,
    World,
}

/// `senderType(sender)`: empty/missing → system; human|user|you → human; system; world; else agent.
///
/// Case-insensitive (Unicode). Surrounding whitespace is ignored, so a blank sender is
/// `system` like an empty one (`send()` rejects blank senders before this matters).
pub fn sender_type(sender: Option<&str>) -> SenderType {
    let Some(s) = sender else {
        return SenderType::System;
    };
    sender_type_of_id(&normalize_id(s.trim_matches(is_space)))
}

/// [`sender_type`] of a sender already normalised ([`normalize_id`]) and without surrounding
/// whitespace: for callers that need the normalised sender anyway (one normalisation, not two).
pub fn sender_type_of_id(id: &str) -> SenderType {
    match id {
        "" | "system" => SenderType::System,
        "human" | "user" | "you" => SenderType::Human,
        "world" => SenderType::World,
        _ => SenderType::Agent,
    }
}

/// Whitespace for the mention and reply rules: Unicode White_Space (NBSP included) plus the
/// invisible U+FEFF (byte-order mark), U+200B (zero-width space) and U+2060 (word joiner).
/// The spec names U+FEFF; the other two are the same kind of invisible character that pasted
/// text carries, and a user cannot see them, so they count as whitespace too.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{FEFF}' | '\u{200B}' | '\u{2060}')
}

/// A separator between mentions of a leading run: whitespace (not a line break) or a comma.
fn is_run_separator(c: char) -> bool {
    c == ',' || (is_space(c) && c != '\n')
}

/// The name of the mention whose `@` is at byte `at` of `s`, and the byte index just after the
/// name, ignoring what precedes the `@`. Grammar: one or more name characters, optionally
/// continued by `-` followed by more of them (`_` is itself a name character); a trailing `-`
/// is not part of the name.
fn mention_body(s: &str, at: usize) -> Option<(&str, usize)> {
    let rest = s.get(at..)?;
    let body = rest.strip_prefix('@')?;
    let start = at + 1;
    let mut end = 0; // bytes of `body` accepted as the name so far
    let mut after_dash = false;
    for (i, c) in body.char_indices() {
        if is_name_char(c) {
            end = i + c.len_utf8();
            after_dash = false;
        } else if c == '-' && end > 0 && !after_dash {
            after_dash = true;
        } else {
            break;
        }
    }
    if end == 0 {
        return None;
    }
    let name = body.get(..end)?;
    Some((name, start + end))
}

/// The mention starting at byte `at` of `s`, if any: `s[at]` is `@`, the character before it
/// (if any) is neither a name character nor `@`, and a name follows. Returns the raw (not
/// normalised) name and the byte index just after it.
pub fn mention_at(s: &str, at: usize) -> Option<(&str, usize)> {
    let before = s.get(..at)?;
    if before
        .chars()
        .next_back()
        .is_some_and(|p| p == '@' || is_name_char(p))
    {
        return None;
    }
    mention_body(s, at)
}

/// The leading run of mentions of `s`, which must start right at the first `@` (no leading
/// whitespace is skipped, and the start of `s` counts as the start of a line). Mentions in the
/// run are separated by whitespace and/or commas; the run stops at a line break. Returns the raw
/// names and the byte index after the last mention and the separators that follow it (so
/// `s[end..]` is the text after the run). No mention → `(vec![], 0)`.
pub fn leading_mention_run(s: &str) -> (Vec<&str>, usize) {
    let mut names = Vec::new();
    let mut end = 0;
    let mut pos = 0;
    while let Some((name, after)) = mention_body(s, pos) {
        names.push(name);
        let rest = s.get(after..).unwrap_or("");
        let seps = rest.len() - rest.trim_start_matches(is_run_separator).len();
        end = after + seps;
        if seps == 0 {
            break;
        }
        pos = end;
    }
    (names, end)
}

/// Whether `s`, after its leading whitespace, starts with a mention.
pub fn starts_with_mention(s: &str) -> bool {
    let t = s.trim_start_matches(is_space);
    mention_body(t, 0).is_some()
}

/// The byte length of the mention prefix of `s` (which must start right at the `@`): the
/// leading run of mentions ([`leading_mention_run`]) with the separators after it, and, when
/// the run ends at a `:` (`@alice: ...`), that colon and the whitespace after it. The spec only
/// names whitespace and commas; the colon is included because an address such as
/// `@alice: thanks` would otherwise leave a stray `:` at the start of a stripped reply or a
/// title. 0 when `s` does not start with a mention.
pub fn mention_prefix_len(s: &str) -> usize {
    let (names, end) = leading_mention_run(s);
    if names.is_empty() {
        return 0;
    }
    match s.get(end..).and_then(|r| r.strip_prefix(':')) {
        Some(r) => s.len() - r.trim_start_matches(is_run_separator).len(),
        None => end,
    }
}

/// `s` without its leading whitespace and the mention prefix of its first line
/// ([`mention_prefix_len`]). When `s` does not start with a mention it is returned unchanged.
pub fn strip_leading_mentions(s: &str) -> &str {
    let t = s.trim_start_matches(is_space);
    match mention_prefix_len(t) {
        0 => s,
        n => t.get(n..).unwrap_or(""),
    }
}

fn push_unique(out: &mut Vec<String>, name: &str) {
    let n = normalize_id(name);
    if !n.is_empty() && !out.contains(&n) {
        out.push(n);
    }
}

/// Every mention anywhere in `content`, normalised (NFC + lowercase), in order of appearance,
/// without duplicates. `bob@example.com` and `@@x` contain none.
pub fn all_mentions(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, c) in content.char_indices() {
        if c == '@' {
            if let Some((name, _)) = mention_at(content, i) {
                push_unique(&mut out, name);
            }
        }
    }
    out
}

/// The line-start mentions of `content`, normalised, in order, without duplicates.
///
/// Every line counts (split on `\n`, a `\r` before it ignored); leading whitespace is skipped
/// (see [`is_space`]); if the line then begins with mentions, each mention of that leading run
/// counts (`@alice @bob what now?` → `[alice, bob]`). Text before the `@` means none.
pub fn line_start_mentions(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in content.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let t = line.trim_start_matches(is_space);
        for name in leading_mention_run(t).0 {
            push_unique(&mut out, name);
        }
    }
    out
}

// Native only: the property tests use proptest, a host dev-dependency (the core's rules are
// tested natively; the wasm rings test the adapters).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sender_type_classifies_case_insensitively() {
        assert_eq!(sender_type(None), SenderType::System);
        assert_eq!(sender_type(Some("")), SenderType::System);
        assert_eq!(sender_type(Some("  ")), SenderType::System);
        assert_eq!(sender_type(Some("SYSTEM")), SenderType::System);
        for h in ["human", "HUMAN", "User", "you", "You"] {
            assert_eq!(sender_type(Some(h)), SenderType::Human, "{h}");
        }
        assert_eq!(sender_type(Some("World")), SenderType::World);
        assert_eq!(sender_type(Some("test-agent")), SenderType::Agent);
        assert_eq!(sender_type(Some("humans")), SenderType::Agent);
    }

    #[test]
    fn mention_grammar_names_with_dash_and_underscore() {
        assert_eq!(
            all_mentions("hi @test-agent and @agent_7"),
            v(&["test-agent", "agent_7"])
        );
        assert_eq!(all_mentions("@a-b-c"), v(&["a-b-c"]));
    }

    #[test]
    fn mention_trailing_dash_is_not_part_of_the_name() {
        assert_eq!(all_mentions("@test-"), v(&["test"]));
        assert_eq!(all_mentions("@test--x"), v(&["test"]));
        assert_eq!(all_mentions("@test-."), v(&["test"]));
    }

    #[test]
    fn mention_needs_a_name() {
        assert_eq!(all_mentions("@ alone, @-x, @."), Vec::<String>::new());
    }

    #[test]
    fn mention_not_after_name_char_or_at() {
        assert_eq!(all_mentions("bob@example.com"), Vec::<String>::new());
        assert_eq!(all_mentions("@@x"), Vec::<String>::new());
        assert_eq!(all_mentions("x_@y"), Vec::<String>::new());
        assert_eq!(all_mentions("(@y) -@z"), v(&["y", "z"]));
    }

    #[test]
    fn mention_is_normalised_nfc_lowercase() {
        assert_eq!(all_mentions("@Test-Agent"), v(&["test-agent"]));
        assert_eq!(all_mentions("@E\u{301}cole"), v(&["\u{e9}cole"]));
        assert_eq!(all_mentions("@Ünïcode-Name"), v(&["ünïcode-name"]));
        // Matched against ids only: `test_agent` stays `test_agent`.
        assert_eq!(all_mentions("@test_agent"), v(&["test_agent"]));
    }

    #[test]
    fn all_mentions_in_order_without_duplicates() {
        assert_eq!(all_mentions("@b then @a, then @B again"), v(&["b", "a"]));
    }

    #[test]
    fn line_start_spec_examples() {
        assert_eq!(line_start_mentions("@pro, what do you think?"), v(&["pro"]));
        assert_eq!(
            line_start_mentions("Hello everyone!\n@pro, please respond."),
            v(&["pro"])
        );
        assert_eq!(
            line_start_mentions("hi @pro, what do you think?"),
            Vec::<String>::new()
        );
        assert_eq!(
            line_start_mentions("Text\n\t@alice with tab"),
            v(&["alice"])
        );
        assert_eq!(
            line_start_mentions("@alice, please start. Then ask @bob.\n@charlie, you finish."),
            v(&["alice", "charlie"])
        );
        assert_eq!(
            line_start_mentions("@alice @bob what now?"),
            v(&["alice", "bob"])
        );
    }

    #[test]
    fn routing_examples_mention_side() {
        // Spec §4 examples, the part these functions decide.
        assert_eq!(
            line_start_mentions("@test-agent, please help"),
            v(&["test-agent"])
        );
        assert_eq!(
            line_start_mentions("Hello @test-agent, how are you?"),
            Vec::<String>::new()
        );
        assert_eq!(
            all_mentions("Hello @test-agent, how are you?"),
            v(&["test-agent"])
        );
        assert_eq!(all_mentions("Hello everyone!"), Vec::<String>::new());
        assert_eq!(
            line_start_mentions("I think @test-agent should handle this."),
            Vec::<String>::new()
        );
        assert_eq!(line_start_mentions("@Test-Agent, hi"), v(&["test-agent"]));
        assert_eq!(line_start_mentions("@other-agent hi"), v(&["other-agent"]));
    }

    #[test]
    fn line_start_text_before_at_means_none() {
        for s in ["Hi @x", "> @x", "- @x", "bob@x"] {
            assert_eq!(line_start_mentions(s), Vec::<String>::new(), "{s}");
        }
    }

    #[test]
    fn line_start_skips_unicode_leading_whitespace() {
        assert_eq!(line_start_mentions("\u{00A0}@alice hi"), v(&["alice"]));
        assert_eq!(line_start_mentions("\u{FEFF}@alice hi"), v(&["alice"]));
        assert_eq!(
            line_start_mentions("x\n \u{3000}\u{FEFF}\t@bob hi"),
            v(&["bob"])
        );
    }

    #[test]
    fn line_start_handles_crlf() {
        assert_eq!(
            line_start_mentions("hello\r\n@alice\r\n@bob, go"),
            v(&["alice", "bob"])
        );
    }

    #[test]
    fn line_start_run_separators_are_whitespace_and_commas() {
        assert_eq!(
            line_start_mentions("@a,@b , @c\t@d: go @e"),
            v(&["a", "b", "c", "d"])
        );
        assert_eq!(line_start_mentions("@a @@b @c"), v(&["a"]));
        assert_eq!(line_start_mentions("@a-, @b"), v(&["a"]));
    }

    #[test]
    fn line_start_every_line_counts() {
        assert_eq!(line_start_mentions("a\nb\n@x\nc\n@y"), v(&["x", "y"]));
    }

    #[test]
    fn leading_run_reports_rest() {
        let (names, end) = leading_mention_run("@a, @b what");
        assert_eq!(names, vec!["a", "b"]);
        assert_eq!(&"@a, @b what"[end..], "what");
        assert_eq!(leading_mention_run("x @a"), (vec![], 0));
        assert_eq!(strip_leading_mentions("  @a @b hi"), "hi");
        assert_eq!(strip_leading_mentions("hi @a"), "hi @a");
        assert_eq!(strip_leading_mentions("@a: @b, go"), "@b, go");
        assert_eq!(strip_leading_mentions("@a, @b: go"), "go");
        assert_eq!(mention_prefix_len("@a:"), 3);
        assert!(starts_with_mention(" \u{FEFF}@a"));
        assert!(!starts_with_mention("a@b"));
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 _\\-,.:@\n\r\t\u{A0}\u{FEFF}\u{301}\u{130}ÉéΣ東]{0,40}",
        ]
    }

    proptest! {
        #[test]
        fn mentions_never_panic_and_round_trip(s in text_strategy()) {
            let all = all_mentions(&s);
            let start = line_start_mentions(&s);
            for m in all.iter().chain(start.iter()) {
                prop_assert!(!m.is_empty());
                prop_assert_eq!(&normalize_id(m), m);
            }
            for m in &start {
                prop_assert!(all.contains(m), "line-start mention {m:?} not in {all:?}");
            }
            let _ = strip_leading_mentions(&s);
            let _ = starts_with_mention(&s);
            let _ = sender_type(Some(&s));
        }

        #[test]
        fn sender_type_of_a_normalised_id_is_the_sender_type(
            s in prop_oneof![
                text_strategy(),
                "(HUMAN|User|yOu|World|SYSTEM|Ｈuman|hum\u{0301}an|İ)",
            ]
        ) {
            let trimmed = s.trim_matches(is_space);
            prop_assert_eq!(
                sender_type_of_id(&normalize_id(trimmed)),
                sender_type(Some(&s))
            );
        }
    }
}
