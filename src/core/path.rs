//! The path of a value inside a JSON document (`agents[1].historyLimit`,
//! `args.items[2].name`), for the errors of the code that walks one: the import's document
//! parser and the tool-schema checks.
//!
//! A path is a chain of borrowed steps on the walker's stack, written out only when an error
//! names it. Building the text for every field and item walked cost a `format!` (an
//! allocation) per step, on valid input too, and the wasm module a call site each.

use std::fmt;

/// Where a value sits: the document itself, a field of an object, or an item of an array.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The document (its text is empty: a field below it is named bare).
    Top,
    Field(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The field `name` of the object at `self`.
    pub(crate) fn field(&'a self, name: &'a str) -> Path<'a> {
        Path::Field(self, name)
    }

    /// Item `i` of the array at `self`.
    pub(crate) fn item(&'a self, i: usize) -> Path<'a> {
        Path::Item(self, i)
    }
}

/// `a.b[2].c`: fields joined by `.` (bare below the top), items as `[i]`.
impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Path::Top => Ok(()),
            Path::Field(Path::Top, name) => f.write_str(name),
            Path::Field(obj, name) => write!(f, "{obj}.{name}"),
            Path::Item(list, i) => write!(f, "{list}[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn paths_are_written_as_dotted_fields_and_indexed_items() {
        let top = Path::Top;
        let agents = top.field("agents");
        let a1 = agents.item(1);
        assert_eq!(
            a1.field("historyLimit").to_string(),
            "agents[1].historyLimit"
        );
        let args = top.field("args");
        let items = args.field("items");
        assert_eq!(
            items.item(2).field("name").to_string(),
            "args.items[2].name"
        );
        assert_eq!(top.to_string(), "");
    }
}
