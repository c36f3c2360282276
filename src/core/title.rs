//! Chat titles (spec §6): the heuristic title of a human message, the prompt for an
//! LLM-written title and the cleaning of the LLM's answer.
//!
//! Invariants: nothing here panics on any `&str`; counts are in characters (`char`s), never
//! bytes; a title is `None` or a non-empty string of at most [`MAX_TITLE_CHARS`] characters
//! with at least one letter (spec §1 letters), ending in `...` exactly when words or characters
//! were cut; the prompt is at most [`MAX_PROMPT_CHARS`] characters.

use super::ids::{is_letter, is_name_char};
use super::mentions::{is_space, strip_leading_mentions};
use super::reply::{inline_code_spans, strip_ascii_ci};

/// A title is never longer than this (characters).
pub const MAX_TITLE_CHARS: usize = 50;
/// A shortened title keeps at most this many characters before its `...`.
const CUT_TITLE_CHARS: usize = 47;
/// A title keeps at most this many words.
const MAX_TITLE_WORDS: usize = 8;
/// The LLM title prompt is cut to this many characters.
pub const MAX_PROMPT_CHARS: usize = 2000;

/// Quote characters removed around an LLM's title.
const QUOTES: [char; 7] = [
    '"', '\'', '\u{201C}', '\u{201D}', '\u{2018}', '\u{2019}', '`',
];

/// Collapses every run of whitespace (newlines included) to one space and trims.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split(is_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// `s` cut to its first `max` characters.
pub(crate) fn truncate_chars(s: &mut String, max: usize) {
    if let Some((i, _)) = s.char_indices().nth(max) {
        s.truncate(i);
    }
}

/// A fence line (```` ```lang ```` or `~~~`): its marker and info string are not title text.
fn is_fence_line(t: &str) -> bool {
    let Some(c) = t.chars().next().filter(|c| *c == '`' || *c == '~') else {
        return false;
    };
    let rest = t.trim_start_matches(c);
    t.len() - rest.len() >= 3 && (c == '~' || !rest.as_bytes().contains(&b'`'))
}

/// Leading block markers of one line: blockquote `>`s and an ATX heading (1–6 `#` followed
/// by whitespace or the end of the line; `#hashtag` is kept).
fn strip_line_markers(line: &str) -> &str {
    let mut t = line.trim_start_matches(is_space);
    while let Some(r) = t.strip_prefix('>') {
        t = r.trim_start_matches(is_space);
    }
    let hashes = t.len() - t.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        if let Some(r) = t.get(hashes..) {
            if r.is_empty() || r.starts_with(is_space) {
                return r.trim_start_matches(is_space);
            }
        }
    }
    t
}

/// Links and images: `[text](url)` → `text`, `![alt](url)` → `alt`. A bracket that does not
/// open a complete link stays as it is.
fn strip_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let (before, from_open) = rest.split_at(open);
        let link = from_open.get(1..).and_then(|inner| {
            let close = inner.find(']')?;
            let text = inner.get(..close)?;
            let after = inner.get(close + 1..)?.strip_prefix('(')?;
            // The URL ends at the `)` that balances the `(` (URLs may hold parentheses).
            let mut depth = 1usize;
            for (i, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some((text, after.get(i + 1..)?));
                        }
                    }
                    _ => {}
                }
            }
            None
        });
        match link {
            Some((text, after)) => {
                out.push_str(before.strip_suffix('!').unwrap_or(before));
                out.push_str(text);
                rest = after;
            }
            None => {
                out.push_str(before);
                out.push('[');
                rest = from_open.get(1..).unwrap_or("");
            }
        }
    }
    out.push_str(rest);
    out
}

/// Removes emphasis delimited by `d` (`**`, `__`, `*` or `_`): an opener followed by a
/// non-space, a closer preceded by a non-space, non-empty text between them. With
/// `word_boundary`, the opener must not follow a letter and the closer must not be followed by
/// one, so `snake_case_name` and `2*3*4` survive.
fn strip_emphasis(s: &str, d: &str, word_boundary: bool) -> String {
    let dc = d.chars().next().unwrap_or('*');
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(rest) = s.get(i..) {
        let Some(c) = rest.chars().next() else {
            break;
        };
        if rest.starts_with(d) {
            let prev = s.get(..i).and_then(|b| b.chars().next_back());
            let inner = rest.get(d.len()..).unwrap_or("");
            let opener_ok = inner
                .chars()
                .next()
                .is_some_and(|n| !is_space(n) && n != dc)
                && !(word_boundary && prev.is_some_and(|p| is_letter(p) || p == dc));
            if opener_ok {
                if let Some(close) = find_closer(inner, d, dc, word_boundary) {
                    out.push_str(inner.get(..close).unwrap_or(""));
                    i += d.len() + close + d.len();
                    continue;
                }
            }
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The byte index in `inner` of the delimiter closing an emphasis opened just before it.
fn find_closer(inner: &str, d: &str, dc: char, word_boundary: bool) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = inner.get(from..).and_then(|r| crate::core::find(r, d)) {
        let j = from + at;
        from = j + d.len();
        let before = inner.get(..j).and_then(|b| b.chars().next_back());
        let after = inner.get(j + d.len()..).and_then(|a| a.chars().next());
        if j > 0
            && before.is_some_and(|b| !is_space(b))
            && !(word_boundary && after.is_some_and(|a| is_letter(a) || a == dc))
        {
            return Some(j);
        }
    }
    None
}

/// Inline markdown of text outside code spans: links, then emphasis (strong before single).
/// A backtick left here opened no code span; it is markup too and goes.
fn strip_inline(s: &str) -> String {
    let mut t = strip_links(&super::replace_char(s, '`', ""));
    t = strip_emphasis(&t, "**", false);
    t = strip_emphasis(&t, "__", true);
    t = strip_emphasis(&t, "*", true);
    strip_emphasis(&t, "_", true)
}

/// Heuristic step 1: markdown removed, `’` as `'`, whitespace collapsed and trimmed. The text of
/// inline code is kept verbatim (only its backticks go); fence lines (```` ```lang ````) go
/// entirely. Where the spec is silent, blockquote markers (`>`) at line starts are removed too.
fn remove_markdown(content: &str) -> String {
    let mut joined = String::with_capacity(content.len());
    let mut first = true;
    for l in content.split('\n') {
        let l = l.trim_matches(is_space);
        if is_fence_line(l) {
            continue;
        }
        if !first {
            joined.push(' ');
        }
        first = false;
        joined.push_str(strip_line_markers(l));
    }
    let mut spans = Vec::new();
    inline_code_spans(&joined, 0, &mut spans);
    let mut out = String::with_capacity(joined.len());
    let mut pos = 0;
    for (a, b) in spans {
        out.push_str(&strip_inline(joined.get(pos..a).unwrap_or("")));
        out.push_str(joined.get(a..b).unwrap_or("").trim_matches('`'));
        pos = b;
    }
    out.push_str(&strip_inline(joined.get(pos..).unwrap_or("")));
    collapse(&super::replace_char(&out, '\u{2019}', "'"))
}

/// `s` without the whole word `w` (ASCII, case-insensitive) at its start: the word must not be
/// followed by a name character, `-` or `'` (`Hi` does not strip `Hint` or `Hi-five`).
fn strip_word<'a>(s: &'a str, w: &str) -> Option<&'a str> {
    let rest = strip_ascii_ci(s, w)?;
    match rest.chars().next() {
        Some(c) if is_name_char(c) || c == '-' || c == '\'' => None,
        _ => Some(rest),
    }
}

/// `s` without the words of `phrase` (separated by whitespace) at its start.
fn strip_phrase<'a>(s: &'a str, phrase: &str) -> Option<&'a str> {
    let mut rest = s;
    for (k, w) in phrase.split(' ').enumerate() {
        if k > 0 {
            let t = rest.trim_start_matches(is_space);
            if t.len() == rest.len() {
                return None;
            }
            rest = t;
        }
        rest = strip_word(rest, w)?;
    }
    Some(rest)
}

fn strip_any<'a>(s: &'a str, phrases: &[&str]) -> Option<&'a str> {
    phrases.iter().find_map(|p| strip_phrase(s, p))
}

fn skip_greeting_punct(s: &str) -> &str {
    s.trim_start_matches([',', '!', '.'])
        .trim_start_matches(is_space)
}

/// The prefixes of heuristic step 3, in the spec's order.
fn strip_prefix_rule(rule: usize, s: &str) -> Option<&str> {
    match rule {
        0 => {
            let r = skip_greeting_punct(strip_any(s, &["hello", "hi", "hey"])?);
            Some(
                strip_any(r, &["there", "all", "everyone", "team"])
                    .map(skip_greeting_punct)
                    .unwrap_or(r),
            )
        }
        1 => strip_any(s, &["can you", "could you", "would you"]),
        2 => {
            let r = strip_phrase(s, "help me")?.trim_start_matches(is_space);
            Some(strip_word(r, "with").unwrap_or(r))
        }
        3 => strip_any(s, &["i am", "i'm"]),
        4 => strip_any(s, &["let me", "i'll", "i will"]),
        _ => None,
    }
}

const PREFIX_RULES: usize = 5;

/// Heuristic steps 2 and 3: the leading mentions, then the prefixes, each at most once,
/// repeating the list while one matches. Mentions right after a stripped prefix go too (spec
/// §6 step 2: `Hi @alice, how are you?` → `how are you?`); where the spec is silent, the
/// greeting's punctuation may be a run (`Hello!! how` → `how`).
fn strip_prefixes(s: &str) -> &str {
    let mut t = strip_leading_mentions(s).trim_start_matches(is_space);
    let mut used = [false; PREFIX_RULES];
    'outer: loop {
        for (rule, done) in used.iter_mut().enumerate() {
            if *done {
                continue;
            }
            if let Some(r) = strip_prefix_rule(rule, t) {
                *done = true;
                t = strip_leading_mentions(r).trim_start_matches(is_space);
                continue 'outer;
            }
        }
        return t;
    }
}

/// Heuristic steps 4 and 5 on collapsed text: at most 8 words and 50 characters, `...` exactly
/// when something was cut, one trailing `,` `;` or `:` dropped; `None` without a letter.
fn cut_title(text: &str) -> Option<String> {
    let mut kept = Vec::new();
    let mut dropped_words = false;
    for w in text.split(is_space).filter(|w| !w.is_empty()) {
        if kept.len() == MAX_TITLE_WORDS {
            dropped_words = true;
            break;
        }
        kept.push(w);
    }
    let mut title = crate::core::join(&kept, " ");
    let len = title.chars().count();
    let mut cut = dropped_words;
    if len > MAX_TITLE_CHARS || (dropped_words && len + 3 > MAX_TITLE_CHARS) {
        // The longest prefix of whole words of at most 47 characters.
        let mut short = String::new();
        let mut short_len = 0;
        for w in &kept {
            let sep = usize::from(!short.is_empty());
            let wl = w.chars().count();
            if short_len + sep + wl > CUT_TITLE_CHARS {
                break;
            }
            if sep == 1 {
                short.push(' ');
            }
            short.push_str(w);
            short_len += sep + wl;
        }
        if short.is_empty() {
            // A single word longer than 47 characters is cut inside it.
            short = title.clone();
            truncate_chars(&mut short, CUT_TITLE_CHARS);
        }
        title = short;
        cut = true;
    }
    if title.ends_with([',', ';', ':']) {
        title.pop();
        // A lone `,` word leaves a space behind (`Hello ,`).
        title.truncate(title.trim_end_matches(is_space).len());
    }
    if cut {
        title.push_str("...");
    }
    title.chars().any(is_letter).then_some(title)
}

/// The heuristic title of a human message, or `None` when it would be empty (no letter).
///
/// Spec §6: (1) markdown removed, `’` as `'`, whitespace collapsed; (2) the leading mentions
/// removed; (3) greeting/request prefixes stripped; (4) at most 8 words and 50 characters, cut
/// at a word boundary to 47 characters when needed; (5) one trailing `,;:` dropped, `...`
/// appended exactly when something was cut.
///
/// `Hello, how do I learn React?` → `how do I learn React?`; `Can you help me write a poem` →
/// `write a poem`.
pub fn heuristic_title(content: &str) -> Option<String> {
    let text = remove_markdown(content);
    cut_title(strip_prefixes(&text))
}

/// The prompt for an LLM title (spec §6 "LLM title"), already cut to 2,000 characters.
///
/// Where the spec is silent: when no agent replied (`first_reply` blank), the agent line is
/// left out rather than sent as `<agent id>: ` with nothing after it.
pub fn llm_title_prompt(human_message: &str, agent_id: &str, first_reply: &str) -> String {
    let mut s = format!(
        "Write a short title (at most 6 words) for a chat that starts with:\nUser: {human_message}"
    );
    if !first_reply.trim_matches(is_space).is_empty() {
        s.push('\n');
        s.push_str(agent_id);
        s.push_str(": ");
        s.push_str(first_reply);
    }
    truncate_chars(&mut s, MAX_PROMPT_CHARS);
    s
}

/// Cleans an LLM's title answer (trim, strip quotes, collapse whitespace, cut as the heuristic's
/// steps 4 and 5); `None` when blank or without a letter.
///
/// Surrounding quotes are removed in pairs (any two of `"` `'` `“ ”` `‘ ’` and backticks, as
/// models mix them), repeatedly, so `"'Title'"` → `Title` while `'90s Music` keeps its
/// apostrophe. Where the spec is silent: markdown is removed first as in heuristic step 1
/// (models often answer `**Title**` or `# Title`); no prefix is stripped, since the LLM wrote
/// a title, not a message.
pub fn clean_llm_title(answer: &str) -> Option<String> {
    let text = remove_markdown(answer);
    let mut t = text.as_str();
    loop {
        let mut chars = t.chars();
        match (chars.next(), chars.next_back()) {
            (Some(a), Some(b)) if QUOTES.contains(&a) && QUOTES.contains(&b) => {
                t = chars.as_str().trim_matches(is_space);
            }
            _ => break,
        }
    }
    cut_title(&collapse(t))
}

// Native only: the property tests use proptest, a host dev-dependency (the core's rules are
// tested natively; the wasm rings test the adapters).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(s: &str) -> Option<String> {
        heuristic_title(s)
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn title_spec_examples() {
        assert_eq!(
            h("Hello, how do I learn React?"),
            some("how do I learn React?")
        );
        assert_eq!(h("Can you help me write a poem"), some("write a poem"));
        assert_eq!(
            h("**Bold** request about *italics*"),
            some("Bold request about italics")
        );
        assert_eq!(h("What is 2+2?"), some("What is 2+2?"));
        assert_eq!(
            h("Hi there! Can you explain async/await?"),
            some("explain async/await?")
        );
    }

    #[test]
    fn markdown_emphasis_removed() {
        assert_eq!(
            h("__strong__ and _em_ and ***both***"),
            some("strong and em and both")
        );
        assert_eq!(h("a **b c** d"), some("a b c d"));
    }

    #[test]
    fn markdown_snake_case_survives() {
        assert_eq!(
            h("rename snake_case_name please"),
            some("rename snake_case_name please")
        );
        assert_eq!(h("compute 2*3*4 now"), some("compute 2*3*4 now"));
        assert_eq!(h("a * b * c"), some("a * b * c"));
    }

    #[test]
    fn markdown_heading_markers_removed() {
        assert_eq!(h("## Deploy plan\nsteps"), some("Deploy plan steps"));
        assert_eq!(h("#hashtag stays"), some("#hashtag stays"));
        assert_eq!(h("####### seven"), some("####### seven"));
    }

    #[test]
    fn markdown_inline_code_backticks_removed() {
        assert_eq!(
            h("why does `__init__` fail"),
            some("why does __init__ fail")
        );
        assert_eq!(h("run ``a ` b`` now"), some("run a ` b now"));
        assert_eq!(h("a stray ` tick"), some("a stray tick"));
        assert_eq!(h("```python\nprint(1)\n```"), some("print(1)"));
    }

    #[test]
    fn markdown_links_become_text() {
        assert_eq!(
            h("see [the docs](https://x.dev/a_(b)) and ![logo](l.png)"),
            some("see the docs and logo")
        );
        assert_eq!(h("[not a link] (x)"), some("[not a link] (x)"));
    }

    #[test]
    fn markdown_blockquote_markers_removed() {
        assert_eq!(h("> > quoted idea"), some("quoted idea"));
    }

    #[test]
    fn curly_apostrophe_is_plain() {
        assert_eq!(
            h("I\u{2019}m stuck on lifetimes"),
            some("stuck on lifetimes")
        );
        assert_eq!(h("it\u{2019}s fine"), some("it's fine"));
    }

    #[test]
    fn whitespace_collapsed_and_trimmed() {
        assert_eq!(
            h("  many\n\n  spaces\there \u{A0} "),
            some("many spaces here")
        );
    }

    #[test]
    fn leading_mentions_removed() {
        assert_eq!(h("@alice @bob what now?"), some("what now?"));
        assert_eq!(h("@pro, what do you think?"), some("what do you think?"));
        assert_eq!(h("@pro: review this"), some("review this"));
        assert_eq!(h("ask @pro later"), some("ask @pro later"));
    }

    #[test]
    fn prefix_greeting() {
        assert_eq!(h("Hey team, ship it"), some("ship it"));
        assert_eq!(h("hello everyone. status?"), some("status?"));
        assert_eq!(h("Hi all! plan"), some("plan"));
        assert_eq!(h("Hello!! how"), some("how"));
        assert_eq!(h("Hint: use a map"), some("Hint: use a map"));
        assert_eq!(h("Hi-five everyone"), some("Hi-five everyone"));
        assert_eq!(h("Hi @alice, how are you?"), some("how are you?"));
    }

    #[test]
    fn prefix_can_could_would_you() {
        assert_eq!(h("Could you sort this list"), some("sort this list"));
        assert_eq!(h("WOULD YOU check"), some("check"));
        assert_eq!(h("Canyon trip ideas"), some("Canyon trip ideas"));
    }

    #[test]
    fn prefix_help_me_with() {
        assert_eq!(h("help me with my taxes"), some("my taxes"));
        assert_eq!(h("Help me plan a trip"), some("plan a trip"));
        assert_eq!(h("helpme now"), some("helpme now"));
    }

    #[test]
    fn prefix_i_am() {
        assert_eq!(h("I am learning Rust"), some("learning Rust"));
        assert_eq!(h("I'm lost"), some("lost"));
    }

    #[test]
    fn prefix_let_me_i_will() {
        assert_eq!(h("Let me explain the bug"), some("explain the bug"));
        assert_eq!(h("I'll describe it"), some("describe it"));
        assert_eq!(h("I will try"), some("try"));
    }

    #[test]
    fn prefixes_each_at_most_once_repeating() {
        assert_eq!(
            h("Hello! I'm new. Can you help me with Rust?"),
            some("new. Can you help me with Rust?")
        );
        assert_eq!(h("Hi, hi there"), some("hi there"));
        assert_eq!(
            h("Hey, I am sure can you help me with this"),
            some("sure can you help me with this")
        );
        assert_eq!(h("Hey can you help me with I'll"), None);
    }

    #[test]
    fn eight_word_rule_appends_dots() {
        assert_eq!(
            h("one two three four five six seven eight nine ten"),
            some("one two three four five six seven eight...")
        );
        assert_eq!(
            h("one two three four five six seven eight"),
            some("one two three four five six seven eight")
        );
    }

    #[test]
    fn fifty_char_rule_cuts_at_word_boundary_to_47() {
        // 8 words, 53 characters: cut at a word boundary to at most 47, then `...`.
        let s = "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeee ff gg";
        assert_eq!(s.chars().count(), 51);
        let t = h(s).unwrap_or_default();
        assert_eq!(t, "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeee...");
        assert!(t.chars().count() <= 50);
        // Exactly 50 characters, nothing dropped: kept as is.
        let s50 = "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee";
        assert_eq!(s50.chars().count(), 49);
        assert_eq!(h(s50), some(s50));
        let s50 = "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeeee";
        assert_eq!(s50.chars().count(), 50);
        assert_eq!(h(s50), some(s50));
    }

    #[test]
    fn dropped_words_need_room_for_dots() {
        // 8 words of 48 characters plus a ninth: 48 + 3 > 50, so cut to 47 at a word boundary.
        let s = "aaaaa bbbbb ccccc ddddd eeeee fffff ggggg hhhhhh iii";
        let t = h(s).unwrap_or_default();
        assert_eq!(t, "aaaaa bbbbb ccccc ddddd eeeee fffff ggggg...");
        // 8 words of 47 characters plus a ninth: 47 + 3 = 50 fits.
        let s = "aaaaa bbbbb ccccc ddddd eeeee fffff ggggg hhhhh iii";
        assert_eq!(
            h(s),
            some("aaaaa bbbbb ccccc ddddd eeeee fffff ggggg hhhhh...")
        );
    }

    #[test]
    fn single_long_word_cut_at_47() {
        let w = "x".repeat(60);
        let t = h(&w).unwrap_or_default();
        assert_eq!(t, format!("{}...", "x".repeat(47)));
        let w = "é".repeat(60);
        assert_eq!(h(&w).map(|t| t.chars().count()), Some(50));
    }

    #[test]
    fn trailing_punctuation_dropped_without_dots() {
        assert_eq!(h("Plan for today:"), some("Plan for today"));
        assert_eq!(h("first; "), some("first"));
        assert_eq!(h("a b c d e f g h, i"), some("a b c d e f g h..."));
        assert_eq!(h("a,,"), some("a,"));
        assert_eq!(clean_llm_title("Hello ,"), some("Hello"));
    }

    #[test]
    fn dots_exactly_when_cut() {
        assert_eq!(h("short one"), some("short one"));
        assert!(h("w1 w2 w3 w4 w5 w6 w7 w8 w9").is_some_and(|t| t.ends_with("...")));
        assert_eq!(h("Wait..."), some("Wait..."));
    }

    #[test]
    fn no_letter_is_none() {
        assert_eq!(h("?"), None);
        assert_eq!(h(""), None);
        assert_eq!(h("   \n "), None);
        assert_eq!(h("Hello!"), None);
        assert_eq!(h("@alice"), None);
        assert_eq!(h("** __ --"), None);
        assert_eq!(h("42"), some("42"));
    }

    #[test]
    fn counts_are_chars_not_bytes() {
        let s = "日本語のタイトル です これ は 長い 文章 かも";
        assert_eq!(h(s), some(s));
        let long = "東".repeat(49);
        assert_eq!(h(&long), some(&long));
    }

    #[test]
    fn llm_prompt_format_and_cut() {
        assert_eq!(
            llm_title_prompt("How do I learn React?", "pro", "Start with the docs."),
            "Write a short title (at most 6 words) for a chat that starts with:\nUser: How do I learn React?\npro: Start with the docs."
        );
        assert_eq!(
            llm_title_prompt("hi", "pro", "  "),
            "Write a short title (at most 6 words) for a chat that starts with:\nUser: hi"
        );
        let p = llm_title_prompt(&"é".repeat(3000), "pro", "x");
        assert_eq!(p.chars().count(), MAX_PROMPT_CHARS);
    }

    #[test]
    fn llm_title_trimmed_and_unquoted() {
        assert_eq!(
            clean_llm_title("  \"Learning React\"\n"),
            some("Learning React")
        );
        assert_eq!(
            clean_llm_title("\u{201C}Rust Lifetimes\u{201D}"),
            some("Rust Lifetimes")
        );
        assert_eq!(clean_llm_title("'\u{2018}Nested\u{2019}'"), some("Nested"));
        assert_eq!(clean_llm_title("`Code Title`"), some("Code Title"));
        assert_eq!(clean_llm_title("'90s Music"), some("'90s Music"));
    }

    #[test]
    fn llm_title_whitespace_collapsed() {
        assert_eq!(
            clean_llm_title("A\n\n  title\tsplit"),
            some("A title split")
        );
    }

    #[test]
    fn llm_title_cut_like_heuristic() {
        assert_eq!(
            clean_llm_title("One two three four five six seven eight nine"),
            some("One two three four five six seven eight...")
        );
        assert_eq!(
            clean_llm_title("Hello there friend"),
            some("Hello there friend")
        );
        assert_eq!(clean_llm_title("Summary:"), some("Summary"));
    }

    #[test]
    fn llm_title_markdown_removed() {
        assert_eq!(
            clean_llm_title("**React Hooks Basics**"),
            some("React Hooks Basics")
        );
        assert_eq!(clean_llm_title("# Trip Plan"), some("Trip Plan"));
    }

    #[test]
    fn llm_title_blank_or_no_letter_is_none() {
        assert_eq!(clean_llm_title(""), None);
        assert_eq!(clean_llm_title("  \"\" "), None);
        assert_eq!(clean_llm_title("..."), None);
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 _*#`\\[\\]()!,.;:'\"@\n\t\u{A0}\u{FEFF}\u{2019}\u{301}é東]{0,80}",
            "((Hello|Hi|Hey|there|Can you|help me|with|I'm|I will|@al|\\*\\*|_|`|,|:|!|  )[ ]?){0,12}",
        ]
    }

    proptest! {
        #[test]
        fn titles_bounded_and_have_a_letter(s in text_strategy()) {
            for t in [heuristic_title(&s), clean_llm_title(&s)].into_iter().flatten() {
                prop_assert!(t.chars().count() <= MAX_TITLE_CHARS, "{t:?}");
                prop_assert!(t.chars().any(is_letter), "{t:?}");
                prop_assert_eq!(t.trim(), t.as_str());
            }
            let p = llm_title_prompt(&s, "pro", &s);
            prop_assert!(p.chars().count() <= MAX_PROMPT_CHARS);
        }
    }
}
