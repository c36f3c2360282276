//! The pure engine. Nothing in here may touch JavaScript, the web platform (fetch, IndexedDB),
//! a clock or randomness (the exact list is in `scripts/check-purity.sh`): the adapters inject
//! time and ids. `scripts/check-purity.sh` enforces this, and the whole module is tested
//! natively with `cargo test`.

pub mod approval;
pub mod clock;
pub mod engine;
pub mod error;
pub mod events;
pub mod ids;
pub mod json;
pub mod json_parse;
pub mod json_value;
pub mod json_write;
pub mod llm;
pub mod llm_client;
pub(crate) mod lock;
pub mod memory_store;
pub mod mentions;
pub mod model;
pub(crate) mod path;
pub mod reply;
pub mod sort;
pub mod store;
#[doc(hidden)]
pub mod store_contract;
pub mod store_rules;
#[doc(hidden)]
pub mod testing;
pub mod title;
pub mod tools;
pub mod vec_map;

/// The byte index of the first `needle` in `hay`: what `str::find` with a `&str` pattern
/// does, as a plain loop over the few short needles the crate searches for (std's two-way
/// searcher, behind every `&str` pattern of `find`, `contains`, `split_once`, `replace` and
/// `match_indices`, is about 2.5 KB of the wasm module).
pub(crate) fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return Some(0);
    };
    let mut i = 0;
    while i + n.len() <= h.len() {
        if h.get(i) == Some(&first) && h.get(i..i + n.len()) == Some(n) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether `hay` contains `needle` (see [`find`]).
pub(crate) fn contains(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// `parts` with `sep` between them: what `[S]::join` does, as a small loop (std's `join` is
/// about a kilobyte of the wasm module per instance, for error texts and titles).
pub(crate) fn join<S: AsRef<str>>(parts: &[S], sep: &str) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(p.as_ref());
    }
    out
}

#[cfg(test)]
mod tests {
    /// [`super::find`] and [`super::contains`] answer as `str::find` / `str::contains` do,
    /// multi-byte text, repeated prefixes and empty needles included.
    #[test]
    fn find_is_str_find() {
        let hays = [
            "",
            "a",
            "abc",
            "aab",
            "ababac",
            "x://y://z",
            "héllo wörld",
            "日本語の本",
            "~~1~0",
        ];
        let needles = [
            "", "a", "ab", "abac", "://", "ö", "wörld", "本", "の本", "~1", "~0", "zz",
        ];
        for h in hays {
            for n in needles {
                assert_eq!(super::find(h, n), h.find(n), "find({h:?}, {n:?})");
                assert_eq!(
                    super::contains(h, n),
                    h.contains(n),
                    "contains({h:?}, {n:?})"
                );
            }
        }
    }
}
