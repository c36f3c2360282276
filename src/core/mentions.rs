//! Senders (spec §2) and mentions (spec §3).
//! PLACEHOLDER BODIES: replaced by the text-rules work.

/// The single sender classification used everywhere (case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderType {
    Human,
    Agent,
    System,
    World,
}

/// `senderType(sender)`: empty/missing → system; human|user|you → human; system; world; else agent.
pub fn sender_type(sender: Option<&str>) -> SenderType {
    match sender.map(|s| s.trim().to_lowercase()) {
        None => SenderType::System,
        Some(s) if s.is_empty() || s == "system" => SenderType::System,
        Some(s) if s == "human" || s == "user" || s == "you" => SenderType::Human,
        Some(s) if s == "world" => SenderType::World,
        Some(_) => SenderType::Agent,
    }
}

/// Every mention anywhere in `content`, normalised (NFC + lowercase), in order of appearance,
/// without duplicates.
pub fn all_mentions(content: &str) -> Vec<String> {
    content
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The line-start mentions of `content`, normalised, in order, without duplicates.
pub fn line_start_mentions(content: &str) -> Vec<String> {
    content
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('@'))
        .map(|w| {
            w.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                .next()
                .unwrap_or_default()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}
