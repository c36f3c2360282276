//! One stable sort for the whole crate.
//!
//! `slice::sort_by` is generic over the element type and the comparator, so every call site
//! compiled its own copy of the standard library's sort (about 2.3 KB of wasm each, a dozen
//! sites: agents by order, chats by date, approvals by creation, listed keys). Here the sort
//! itself runs once over positions with a comparator behind a `dyn` reference, the only
//! instance in the module; what stays generic per element type is moving the elements into
//! the sorted order, a few instructions. The lists sorted are small (a world's agents and
//! chats, pending approvals, a range of keys), so the extra indirection costs nothing a user
//! would notice.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably (equal elements keep their order), like `slice::sort_by`.
pub fn sort_by<T>(v: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = positions_sorted(v.len(), &|a, b| match (v.get(a), v.get(b)) {
        (Some(x), Some(y)) => cmp(x, y),
        _ => Ordering::Equal,
    });
    let mut items: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(
        order
            .into_iter()
            .filter_map(|i| items.get_mut(i).and_then(Option::take)),
    );
}

/// `0..n` sorted stably by `cmp` over positions: the one instance of the standard sort.
#[inline(never)]
fn positions_sorted(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut positions: Vec<usize> = (0..n).collect();
    positions.sort_by(|&a, &b| cmp(a, b));
    positions
}

#[cfg(test)]
mod tests {
    use super::sort_by;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        // Pairs (key, original position): equal keys must keep their original order.
        let keys = [5, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 0, 1];
        let mut v: Vec<(i32, usize)> = keys.iter().copied().zip(0..).collect();
        let mut expected = v.clone();
        expected.sort_by_key(|a| a.0);
        sort_by(&mut v, &|a, b| a.0.cmp(&b.0));
        assert_eq!(v, expected);
        let mut desc = v.clone();
        sort_by(&mut desc, &|a, b| b.0.cmp(&a.0));
        assert_eq!(desc.first(), Some(&(9, 5)));
        assert_eq!(desc.last(), Some(&(0, 11)));
    }

    #[test]
    fn empty_and_single_lists_are_unchanged() {
        let mut none: Vec<String> = Vec::new();
        sort_by(&mut none, &|a, b| a.cmp(b));
        assert!(none.is_empty());
        let mut one = vec!["x".to_string()];
        sort_by(&mut one, &|a, b| a.cmp(b));
        assert_eq!(one, ["x"]);
    }
}
