//! The JavaScript API: one file per JS class; converts, validates, delegates.
