//! Chat titles (spec §6): the heuristic title and the cleaning of an LLM-written title.
//! PLACEHOLDER BODIES: replaced by the text-rules work.

/// The heuristic title of a human message, or `None` when it would be empty (no letter).
pub fn heuristic_title(content: &str) -> Option<String> {
    let t: String = content
        .split_whitespace()
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    if t.chars().any(char::is_alphanumeric) {
        Some(t.chars().take(50).collect())
    } else {
        None
    }
}

/// The prompt for an LLM title (spec §6 "LLM title"), already cut to 2,000 characters.
pub fn llm_title_prompt(human_message: &str, agent_id: &str, first_reply: &str) -> String {
    let s = format!(
        "Write a short title (at most 6 words) for a chat that starts with:\nUser: {human_message}\n{agent_id}: {first_reply}"
    );
    s.chars().take(2000).collect()
}

/// Cleans an LLM's title answer (trim, strip quotes, collapse whitespace, cut as the heuristic's
/// steps 4 and 5); `None` when blank or without a letter.
pub fn clean_llm_title(answer: &str) -> Option<String> {
    heuristic_title(answer.trim().trim_matches('"'))
}
