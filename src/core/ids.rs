//! Ids from names (spec §1): `kebab()`, the letter classes, and agent/world id validation.
//! PLACEHOLDER BODIES: replaced by the text-rules work.

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
    pub fn code(&self) -> &'static str {
        match self {
            IdError::InvalidName(_) => "invalid_name",
            IdError::ReservedName(_) => "reserved_name",
        }
    }
}

/// A *letter*: Alphabetic, Numeric (Nd, Nl, No) or a combining Mark (Mn, Mc, Me).
pub fn is_letter(c: char) -> bool {
    c.is_alphanumeric()
}

/// A *name character*: a letter or `_`.
pub fn is_name_char(c: char) -> bool {
    is_letter(c) || c == '_'
}

/// `kebab(s)` exactly as spec §1 defines it.
pub fn kebab(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
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
    if matches!(id.as_str(), "human" | "user" | "you" | "system" | "world") {
        return Err(IdError::ReservedName(name.to_string()));
    }
    Ok(id)
}

/// NFC + Unicode lowercase: how a mention or sender is compared to an id.
pub fn normalize_id(s: &str) -> String {
    s.to_lowercase()
}
