//! The id rule's cases (spec §1), shared by the native test (`tests/ids.rs`, the built-in
//! `unicode-normalization` + std) and the wasm rings (the host's `normalize`/`toLowerCase`
//! injected at start-up): both must give exactly these ids.

/// `(name, kebab(name))`.
pub const KEBAB: &[(&str, &str)] = &[
    ("My Test World", "my-test-world"),
    ("Agent_007", "agent-007"),
    ("XMLParser", "xmlparser"),
    ("Ünïcode Name", "ünïcode-name"),
    ("myWorld", "my-world"),
    ("éCole", "é-cole"),
    ("ÉCOLE", "école"),
    ("ΣΟΦΙΑ", "σοφια"),
    // Final sigma: a capital sigma at the end of a word lower-cases to ς.
    ("ΟΔΥΣΣΕΥΣ", "οδυσσευς"),
    ("Имя Агента", "имя-агента"),
    // Decomposed input composes: e + U+0301 → é, A + U+030A → Å.
    ("Cafe\u{301} Bot", "caf\u{e9}-bot"),
    ("A\u{30A}sa", "\u{e5}sa"),
    // Singletons: ANGSTROM SIGN and OHM SIGN are not NFC.
    ("\u{212B}ngstr\u{f6}m", "\u{e5}ngstr\u{f6}m"),
    ("\u{2126}hm", "\u{3c9}hm"),
    // Canonical reordering of combining marks (dot below before circumflex) and composition.
    ("a\u{302}\u{323}", "\u{1ead}"),
    // Hangul jamo compose into a syllable.
    ("\u{1112}\u{1161}\u{11AB}", "\u{d55c}"),
    // İ lower-cases to i + combining dot above, which stays decomposed in NFC.
    ("İstanbul", "i\u{307}stanbul"),
    ("ẞtraße", "ßtraße"),
    ("東京 エージェント", "東京-エージェント"),
    ("हिन्दी एजेंट", "हिन्दी-एजेंट"),
    ("Ⅻ ½", "ⅻ-½"),
    ("R2-D2 (droid)", "r2-d2-droid"),
    ("  ", ""),
];

/// `(mention or sender, normalize_id(it))`.
pub const NORMALIZE_ID: &[(&str, &str)] = &[
    ("Test-Agent", "test-agent"),
    ("test_agent", "test_agent"),
    ("E\u{301}cole", "\u{e9}cole"),
    ("\u{212B}", "\u{e5}"),
    ("ΟΔΥΣΣΕΥΣ", "οδυσσευς"),
    ("İ", "i\u{307}"),
    ("a\u{302}\u{323}", "\u{1ead}"),
];
