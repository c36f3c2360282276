//! Turning an LLM's raw answer into the published reply (spec §5 steps 6–9).
//! PLACEHOLDER BODIES: replaced by the text-rules work.

/// A world tag found in a reply (spec §5 step 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldTag {
    Pass,
    Stop,
    Done,
    /// `<world>to: a, b</world>` with the names split, trimmed and without a leading `@`.
    To(Vec<String>),
}

/// Step 6: remove trailing whitespace and leading blank lines (first line's indentation kept).
pub fn clean_reply(raw: &str) -> String {
    raw.trim_end().trim_start_matches(['\n', '\r']).to_string()
}

/// Step 7: find the first world tag outside fenced code blocks. When there is one, returns it
/// with the text after removing the tag, then the leading run of mentions, then trimming.
/// `to:` with an empty list is returned as `Done`. Without a tag: `(None, reply unchanged)`.
pub fn extract_world_tag(reply: &str) -> (Option<WorldTag>, String) {
    (None, reply.to_string())
}

/// Applies a `to:` tag: `@a\n@b\n\n` + text.
pub fn apply_to_tag(names: &[String], text: &str) -> String {
    let mut out = String::new();
    for n in names {
        out.push('@');
        out.push_str(n);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(text);
    out
}

/// Step 8: remove the leading run(s) of whole-name self-mentions of `agent_id` (after the
/// indentation, which is kept); if nothing would remain, the reply is returned as it was.
pub fn remove_self_mentions(reply: &str, agent_id: &str) -> String {
    let prefix = format!("@{agent_id}");
    match reply.strip_prefix(&prefix) {
        Some(rest) if !rest.trim().is_empty() => rest.trim_start().to_string(),
        _ => reply.to_string(),
    }
}

/// Step 9 (the text part): `@<sender> ` + the trimmed reply, unless the reply already has a
/// line-start mention, in which case it is returned unchanged. The caller decides whether
/// auto-mention applies at all (sender not human, not self, no world tag).
pub fn auto_mention(reply: &str, sender: &str) -> String {
    if reply.trim_start().starts_with('@') {
        reply.to_string()
    } else {
        format!("@{sender} {}", reply.trim())
    }
}
