//! Turning an LLM's raw answer into the published reply (spec §5 steps 6–9): cleaning, world
//! tags, self-mention removal and auto-mention. The engine calls them in that order and decides
//! *whether* a step applies (e.g. auto-mention only for agent senders); these functions only
//! transform text.
//!
//! Invariants: pure string functions that never panic on any `&str` (all slicing happens at
//! char boundaries found by scanning); a step that has nothing to do returns its input
//! unchanged; self-mention removal never turns a non-blank reply into a blank one.

use super::ids::normalize_id;
use super::mentions::{is_space, line_start_mentions, mention_at, mention_prefix_len};

/// A world tag found in a reply (spec §5 step 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldTag {
    Pass,
    Stop,
    Done,
    /// `<world>to: a, b</world>` with the names split, trimmed and without a leading `@`.
    To(Vec<String>),
}

/// Whitespace that does not end a line.
fn is_hspace(c: char) -> bool {
    is_space(c) && c != '\n'
}

fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// Step 6: remove trailing whitespace and leading blank lines (first line's indentation kept).
/// A blank line is one holding only whitespace ([`is_space`]); an all-blank reply becomes `""`.
pub fn clean_reply(raw: &str) -> String {
    let mut start = 0;
    for line in raw.split_inclusive('\n') {
        if !is_blank(line) {
            break;
        }
        start += line.len();
    }
    raw.get(start..)
        .unwrap_or("")
        .trim_end_matches(is_space)
        .to_string()
}

/// If `t` (a line without its indentation) opens or closes a fence, the fence character and
/// the length of its run (at least 3 backticks or tildes).
fn fence_run(t: &str) -> Option<(char, usize)> {
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.len() - t.trim_start_matches(c).len();
    (n >= 3).then_some((c, n))
}

/// Byte ranges of inline code spans in one line: a run of N backticks up to the next run of
/// exactly N backticks (CommonMark, limited to one line).
pub(super) fn inline_code_spans(line: &str, base: usize, out: &mut Vec<(usize, usize)>) {
    // Backtick runs as (start, len). A backtick is ASCII, so byte scanning is exact.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, b) in line.bytes().enumerate() {
        if b != b'`' {
            continue;
        }
        match runs.last_mut() {
            Some((start, len)) if *start + *len == i => *len += 1,
            _ => runs.push((i, 1)),
        }
    }
    let mut i = 0;
    while i < runs.len() {
        let (open, n) = runs.get(i).copied().unwrap_or((0, 0));
        let close = runs
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, r)| r.1 == n)
            .map(|(j, r)| (j, r.0 + r.1));
        match close {
            Some((j, end)) => {
                out.push((base + open, base + end));
                i = j + 1;
            }
            None => i += 1,
        }
    }
}

/// Byte ranges of `s` that are code: fenced blocks (``` or ~~~, fence lines included, an
/// unclosed fence runs to the end, as in CommonMark) and inline code spans outside them.
/// The ranges come out sorted by start and non-overlapping.
fn code_ranges(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize, usize)> = None; // (char, run length, block start)
    let mut offset = 0;
    for line in s.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let t = body.trim_start_matches([' ', '\t']);
        let run = fence_run(t);
        match (fence, run) {
            (Some((fc, fl, start)), Some((c, n))) if c == fc && n >= fl => {
                if t.get(n..).is_some_and(is_blank) {
                    out.push((start, offset));
                    fence = None;
                }
            }
            (Some(_), _) => {}
            (None, Some((c, n)))
                if c == '~' || !t.get(n..).unwrap_or("").as_bytes().contains(&b'`') =>
            {
                fence = Some((c, n, line_start));
            }
            (None, _) => inline_code_spans(body, line_start, &mut out),
        }
    }
    if let Some((_, _, start)) = fence {
        out.push((start, s.len()));
    }
    out
}

/// `s` without a leading ASCII word `word`, compared case-insensitively.
pub(super) fn strip_ascii_ci<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let head = s.get(..word.len())?;
    if head.eq_ignore_ascii_case(word) {
        s.get(word.len()..)
    } else {
        None
    }
}

/// After `<`: optional whitespace, an optional `/` (when `closing`), `world`, whitespace, `>`.
fn tag_rest(s: &str, closing: bool) -> Option<&str> {
    let mut r = s.strip_prefix('<')?.trim_start_matches(is_space);
    if closing {
        r = r.strip_prefix('/')?.trim_start_matches(is_space);
    }
    let r = strip_ascii_ci(r, "world")?;
    r.trim_start_matches(is_space).strip_prefix('>')
}

/// The tag keyword inside `<world>…</world>`.
fn parse_tag_content(content: &str) -> Option<WorldTag> {
    let t = content.trim_matches(is_space);
    if t.eq_ignore_ascii_case("pass") {
        return Some(WorldTag::Pass);
    }
    if t.eq_ignore_ascii_case("stop") {
        return Some(WorldTag::Stop);
    }
    if t.eq_ignore_ascii_case("done") {
        return Some(WorldTag::Done);
    }
    let list = strip_ascii_ci(t, "to")?
        .trim_start_matches(is_space)
        .strip_prefix(':')?;
    let mut names = Vec::new();
    for n in list.split(|c: char| c == ',' || is_space(c)) {
        let n = n.strip_prefix('@').unwrap_or(n);
        if !n.is_empty() {
            names.push(n.to_string());
        }
    }
    if names.is_empty() {
        Some(WorldTag::Done)
    } else {
        Some(WorldTag::To(names))
    }
}

/// The world tag whose `<` is at byte `p` of `s`, and the byte index after its closing tag.
fn tag_at(s: &str, p: usize) -> Option<(WorldTag, usize)> {
    let inner = tag_rest(s.get(p..)?, false)?;
    for (i, _) in inner.match_indices('<') {
        if let Some(after) = inner.get(i..).and_then(|r| tag_rest(r, true)) {
            let tag = parse_tag_content(inner.get(..i)?)?;
            return Some((tag, s.len() - after.len()));
        }
    }
    // No closing tag at all: not a tag.
    None
}

/// `s` without its leading whitespace and its leading run of mentions; when that run fills its
/// line, the run continues over the following lines that hold only mentions (blank lines in
/// between are skipped). When `s` does not start with a mention, `s` without leading whitespace.
fn strip_leading_mention_block(s: &str) -> &str {
    let t = s.trim_start_matches(is_space);
    let first = mention_prefix_len(t);
    if first == 0 {
        return t;
    }
    let mut rest = t.get(first..).unwrap_or("");
    // The first line held more than mentions: the run ends on it.
    if !(rest.is_empty() || rest.starts_with('\n')) {
        return rest;
    }
    while let Some(next) = rest.strip_prefix('\n') {
        let line_len = next.find('\n').unwrap_or(next.len());
        let line = next.get(..line_len).unwrap_or("");
        let lt = line.trim_matches(is_space);
        let only_mentions = lt.is_empty() || mention_prefix_len(lt) == lt.len();
        if !only_mentions {
            return next;
        }
        rest = next.get(line_len..).unwrap_or("");
    }
    rest
}

/// Step 7: find the first world tag outside fenced code blocks. When there is one, returns it
/// with the text after removing the tag, then the leading run of mentions, then trimming.
/// `to:` with an empty list is returned as `Done`. Without a tag: `(None, reply unchanged)`.
///
/// Tags are matched case-insensitively with optional whitespace inside the brackets
/// (`< World >PASS</ world >`). Where the spec is silent: a `<world>…</world>` whose content is
/// not one of the four keywords is not a tag and stays in the text (a later valid tag can still
/// count); a tag inside an inline code span (`` `<world>pass</world>` ``) is quoted, not used,
/// like one in a fenced block. `to:` names are split on commas and on whitespace (spec §5.7;
/// an id has none), so `to: @a @b` names two agents.
pub fn extract_world_tag(reply: &str) -> (Option<WorldTag>, String) {
    let code = code_ranges(reply);
    for (p, _) in reply.match_indices('<') {
        // `code` is sorted and non-overlapping: the only candidate is the last range that
        // starts at or before `p`.
        let k = code.partition_point(|&(a, _)| a <= p);
        if k > 0 && code.get(k - 1).is_some_and(|&(_, b)| p < b) {
            continue;
        }
        let Some((tag, end)) = tag_at(reply, p) else {
            continue;
        };
        let mut without = String::with_capacity(reply.len());
        without.push_str(reply.get(..p).unwrap_or(""));
        without.push_str(reply.get(end..).unwrap_or(""));
        let text = strip_leading_mention_block(&without)
            .trim_matches(is_space)
            .to_string();
        return (Some(tag), text);
    }
    (None, reply.to_string())
}

/// Applies a `to:` tag: `@a\n@b\n\n` + text. With no text left the reply is just the mention
/// lines (`@a\n@b`), without the trailing blank line, so that it still hands the turn over.
pub fn apply_to_tag(names: &[String], text: &str) -> String {
    let mut out = String::new();
    for n in names {
        out.push('@');
        out.push_str(n);
        out.push('\n');
    }
    if text.trim_matches(is_space).is_empty() {
        return out.trim_end_matches(is_space).to_string();
    }
    out.push('\n');
    out.push_str(text);
    out
}

/// Step 8: remove the leading run(s) of whole-name self-mentions of `agent_id` (after the
/// indentation, which is kept); if nothing would remain, the reply is returned as it was.
///
/// Each removed mention takes the whitespace, commas and colons after it (spec §5.8:
/// `@alice: I can help.` → `I can help.`). When a line
/// holds only self-mentions the run continues on the next non-blank line, and the indentation
/// kept is that of the line where the text resumes. A mention of another agent ends the run:
/// `@alice @bob hi` (by `alice`) → `@bob hi`.
pub fn remove_self_mentions(reply: &str, agent_id: &str) -> String {
    let me = normalize_id(agent_id);
    let mut line_start = 0;
    let mut removed_any = false;
    loop {
        let line = reply.get(line_start..).unwrap_or("");
        let indent_end = line_start + (line.len() - line.trim_start_matches(is_hspace).len());
        let mut pos = indent_end;
        while let Some((name, after)) = mention_at(reply, pos) {
            if normalize_id(name) != me {
                break;
            }
            removed_any = true;
            let rest = reply.get(after..).unwrap_or("");
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            let rest = rest.trim_start_matches(|c: char| c == ',' || is_hspace(c));
            pos = reply.len() - rest.len();
        }
        let rest = reply.get(pos..).unwrap_or("");
        if pos > indent_end && rest.starts_with('\n') {
            // The line held only self-mentions: go on after it and any blank lines.
            let mut next = pos;
            for l in rest.split_inclusive('\n').skip(1) {
                if !is_blank(l) {
                    break;
                }
                next += l.len();
            }
            line_start = next + 1;
            if line_start >= reply.len() {
                return reply.to_string();
            }
            continue;
        }
        if !removed_any {
            return reply.to_string();
        }
        let out = if pos == indent_end {
            reply.get(line_start..).unwrap_or("").to_string()
        } else {
            let mut s = reply.get(line_start..indent_end).unwrap_or("").to_string();
            s.push_str(rest);
            s
        };
        if is_blank(&out) {
            return reply.to_string();
        }
        return out;
    }
}

/// Step 9 (the text part): `@<sender> ` + the trimmed reply, unless the reply already has a
/// line-start mention, in which case it is returned unchanged. The caller decides whether
/// auto-mention applies at all (sender not human, not self, no world tag).
pub fn auto_mention(reply: &str, sender: &str) -> String {
    if !line_start_mentions(reply).is_empty() {
        return reply.to_string();
    }
    let body = reply.trim_matches(is_space);
    if body.is_empty() {
        return format!("@{sender}");
    }
    format!("@{sender} {body}")
}

// Native only: the property tests use proptest, a host dev-dependency (the core's rules are
// tested natively; the wasm rings test the adapters).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tag(s: &str) -> (Option<WorldTag>, String) {
        extract_world_tag(s)
    }

    #[test]
    fn clean_reply_trims_end_and_leading_blank_lines() {
        assert_eq!(
            clean_reply("\n  \n\t\n  indented\nnext  \n\n "),
            "  indented\nnext"
        );
        assert_eq!(clean_reply("text"), "text");
        assert_eq!(clean_reply(" \n \r\n"), "");
        assert_eq!(clean_reply("\r\n\u{FEFF}\nHi"), "Hi");
    }

    #[test]
    fn world_tag_keywords() {
        assert_eq!(
            tag("Ok. <world>pass</world>"),
            (Some(WorldTag::Pass), "Ok.".into())
        );
        assert_eq!(
            tag("<world>stop</world>"),
            (Some(WorldTag::Stop), "".into())
        );
        assert_eq!(
            tag("All set <world>done</world>"),
            (Some(WorldTag::Done), "All set".into())
        );
        assert_eq!(
            tag("Over to you. <world>to: a, b</world>"),
            (
                Some(WorldTag::To(vec!["a".into(), "b".into()])),
                "Over to you.".into()
            )
        );
    }

    #[test]
    fn world_tag_is_case_insensitive() {
        assert_eq!(tag("<WORLD>Pass</World>").0, Some(WorldTag::Pass));
        assert_eq!(
            tag("<World>TO: @x</WORLD>").0,
            Some(WorldTag::To(vec!["x".into()]))
        );
    }

    #[test]
    fn world_tag_allows_whitespace_inside_brackets() {
        assert_eq!(tag("< world > pass </ world >").0, Some(WorldTag::Pass));
        assert_eq!(tag("<world>\n  done\n</world>").0, Some(WorldTag::Done));
        assert_eq!(tag("< / world>").0, None);
    }

    #[test]
    fn world_tag_only_first_counts() {
        let (t, text) = tag("a <world>stop</world> b <world>pass</world>");
        assert_eq!(t, Some(WorldTag::Stop));
        assert_eq!(text, "a  b <world>pass</world>");
    }

    #[test]
    fn world_tag_unknown_content_is_not_a_tag() {
        let (t, text) = tag("x <world>maybe</world> y <world>done</world>");
        assert_eq!(t, Some(WorldTag::Done));
        assert_eq!(text, "x <world>maybe</world> y");
        assert_eq!(tag("<world>pass").0, None);
    }

    #[test]
    fn world_tag_in_fenced_block_is_ignored() {
        let s = "Use it like this:\n```\n<world>pass</world>\n```\nThat is all.";
        assert_eq!(tag(s), (None, s.to_string()));
        let s = "~~~~\n<world>pass</world>\n~~~~\nthen <world>done</world>";
        assert_eq!(tag(s).0, Some(WorldTag::Done));
        // An unclosed fence runs to the end.
        assert_eq!(tag("```rust\n<world>pass</world>").0, None);
        // Inline code is quoted too.
        assert_eq!(tag("write `<world>pass</world>` to pass").0, None);
        assert_eq!(tag("a ``x`` <world>pass</world>").0, Some(WorldTag::Pass));
    }

    #[test]
    fn world_tag_after_code_is_found() {
        let s = "`a` and `b`\n```\n<world>stop</world>\n```\n`c` <world>pass</world>";
        assert_eq!(tag(s).0, Some(WorldTag::Pass));
        assert_eq!(
            code_ranges("`a` x\n```\ny\n```\n`b`"),
            vec![(0, 3), (6, 16), (16, 19)]
        );
    }

    #[test]
    fn world_tag_to_with_empty_list_is_done() {
        assert_eq!(tag("bye <world>to:</world>").0, Some(WorldTag::Done));
        assert_eq!(tag("bye <world>to: , @ </world>").0, Some(WorldTag::Done));
    }

    #[test]
    fn world_tag_to_names_trimmed_without_at() {
        assert_eq!(
            tag("<world>to: @Alice , bob,@carol-x</world>").0,
            Some(WorldTag::To(vec![
                "Alice".into(),
                "bob".into(),
                "carol-x".into()
            ]))
        );
    }

    #[test]
    fn world_tag_removes_leading_mention_run_over_mention_only_lines() {
        assert_eq!(
            tag("@human\n@gm,\n\n@con\nThe plan is ready.\n@x later <world>done</world>").1,
            "The plan is ready.\n@x later"
        );
        assert_eq!(tag("@human <world>pass</world>").1, "");
        assert_eq!(tag("@human: <world>pass</world>").1, "");
        assert_eq!(tag("@a @b thanks\n@c <world>done</world>").1, "thanks\n@c");
        assert_eq!(
            tag("<world>pass</world>\n@human over to you").1,
            "over to you"
        );
    }

    #[test]
    fn world_tag_absent_leaves_reply_unchanged() {
        assert_eq!(tag("  @a hi  "), (None, "  @a hi  ".into()));
    }

    #[test]
    fn apply_to_tag_prefixes_mention_lines() {
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(apply_to_tag(&names, "text"), "@a\n@b\n\ntext");
        assert_eq!(apply_to_tag(&names, ""), "@a\n@b");
    }

    #[test]
    fn self_mentions_spec_examples() {
        assert_eq!(
            remove_self_mentions("@alice @ALICE I can help.", "alice"),
            "I can help."
        );
        assert_eq!(
            remove_self_mentions("@gmail is down", "gm"),
            "@gmail is down"
        );
    }

    #[test]
    fn self_mentions_whole_name_only() {
        assert_eq!(remove_self_mentions("@gm-2 hi", "gm"), "@gm-2 hi");
        // The trailing `-` is not part of the name, and only whitespace and commas go with it.
        assert_eq!(remove_self_mentions("@gm- hi", "gm"), "- hi");
        assert_eq!(remove_self_mentions("@gm_x hi", "gm"), "@gm_x hi");
    }

    #[test]
    fn self_mentions_keep_indentation() {
        assert_eq!(remove_self_mentions("  @alice, done.", "alice"), "  done.");
        assert_eq!(remove_self_mentions("\t@alice: done.", "alice"), "\tdone.");
    }

    #[test]
    fn self_mentions_later_in_text_stay() {
        assert_eq!(
            remove_self_mentions("Sure, @alice here. @alice", "alice"),
            "Sure, @alice here. @alice"
        );
        assert_eq!(
            remove_self_mentions("@bob @alice hi", "alice"),
            "@bob @alice hi"
        );
        assert_eq!(remove_self_mentions("@alice @bob hi", "alice"), "@bob hi");
    }

    #[test]
    fn self_mentions_run_over_mention_only_lines() {
        assert_eq!(
            remove_self_mentions("@alice\n\n  Hello", "alice"),
            "  Hello"
        );
        assert_eq!(remove_self_mentions("@alice\r\n@alice, ok", "alice"), "ok");
    }

    #[test]
    fn self_mentions_nothing_left_keeps_reply() {
        assert_eq!(remove_self_mentions("@alice", "alice"), "@alice");
        assert_eq!(
            remove_self_mentions("@alice ,\n\n", "alice"),
            "@alice ,\n\n"
        );
    }

    #[test]
    fn self_mentions_case_and_nfc_insensitive() {
        assert_eq!(
            remove_self_mentions("@E\u{301}COLE salut", "\u{e9}cole"),
            "salut"
        );
    }

    #[test]
    fn auto_mention_spec_examples() {
        assert_eq!(
            auto_mention("Thank you!", "other-agent"),
            "@other-agent Thank you!"
        );
        let step8 = remove_self_mentions("@pro I will handle it", "pro");
        assert_eq!(auto_mention(&step8, "gm"), "@gm I will handle it");
        assert_eq!(
            auto_mention("@con please handle this", "gm"),
            "@con please handle this"
        );
    }

    #[test]
    fn auto_mention_trims_and_keeps_sender_spelling() {
        assert_eq!(
            auto_mention("  hi there \n", "Other_Agent"),
            "@Other_Agent hi there"
        );
    }

    #[test]
    fn auto_mention_any_line_start_mention_blocks_it() {
        let r = "Here is the plan.\n@bob you take step 2.";
        assert_eq!(auto_mention(r, "gm"), r);
        let r = "Ask bob@example.com";
        assert_eq!(auto_mention(r, "gm"), "@gm Ask bob@example.com");
    }

    proptest! {
        #[test]
        fn reply_steps_never_panic(s in prop_oneof![
            any::<String>(),
            "[a-z @<>/:,`~\n\r\t\u{A0}\u{FEFF}]{0,60}",
            "(<world>|</world>|```|`|@alice|@bob|pass|to: a|\n| |,){0,12}",
        ]) {
            let code = code_ranges(&s);
            prop_assert!(code.windows(2).all(|w| w[0].1 <= w[1].0), "{code:?}");
            prop_assert!(code.iter().all(|&(a, b)| a < b && b <= s.len()));
            let c = clean_reply(&s);
            prop_assert!(!c.ends_with(char::is_whitespace));
            let _ = extract_world_tag(&s);
            let r = remove_self_mentions(&s, "alice");
            if !s.trim().is_empty() {
                prop_assert!(!r.trim().is_empty());
            }
            let _ = auto_mention(&s, "bob");
        }
    }
}
