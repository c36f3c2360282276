//! The id rule's shared cases with the built-in normaliser (the wasm rings check the host's).

mod id_cases;

use agent_world_wasm::core::ids::{kebab, normalize_id};

#[test]
fn kebab_gives_the_id_rule_cases() {
    for &(name, id) in id_cases::KEBAB {
        assert_eq!(kebab(name), id, "kebab({name:?})");
    }
}

#[test]
fn normalize_id_gives_the_id_rule_cases() {
    for &(s, id) in id_cases::NORMALIZE_ID {
        assert_eq!(normalize_id(s), id, "normalize_id({s:?})");
    }
}
