//! One stable sort for the whole crate.
//!
//! `slice::sort_by` is generic over the element type and the comparator, so every call site
//! compiled its own copy of the standard library's sort (about 2.3 KB of wasm each, a dozen
//! sites: agents by order, chats by date, approvals by creation, listed keys). Here the sort
//! itself runs once over positions with a comparator behind a `dyn` reference, the only
//! instance in the module, and so does the walk that puts the elements in that order (a swap
//! per element, through a `dyn` callback): what each element type compiles is a comparator
//! shim and a swap, a few instructions, and no `collect`/`extend` of its own. Dropping the
//! duplicates of a sorted list (the keys a map is built from) is planned over positions too.
//! The lists sorted are small (a world's agents and chats, pending approvals, a range of keys,
//! an object's fields), so the extra indirection costs nothing a user would notice.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably (equal elements keep their order), like `slice::sort_by`.
pub fn sort_by<T>(v: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    arrange(v, cmp, Dedup::None);
}

/// Which element of a run of equal ones [`sort_dedup_by`] keeps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dedup {
    /// All of them ([`sort_by`]).
    None,
    /// The first given (`sort_by` then `Vec::dedup_by`).
    First,
    /// The last given (as `BTreeMap` keeps the later value of a key collected twice).
    Last,
}

/// Sorts `v` by `cmp`, stably, and keeps one element of each run of equal ones (`which`).
pub fn sort_dedup_by<T>(v: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering, which: Dedup) {
    arrange(v, cmp, which);
}

/// The one generic step per element type: plan over positions, then swap into place and drop
/// what the plan left after the kept ones.
fn arrange<T>(v: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering, which: Dedup) {
    if v.len() < 2 {
        return;
    }
    let (order, keep) = plan(
        v.len(),
        &|a, b| match (v.get(a), v.get(b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        },
        which,
    );
    permute(&order, &mut |a, b| v.swap(a, b));
    v.truncate(keep);
}

/// `0..n` sorted stably by `cmp` over positions, the kept positions first; and how many are
/// kept.
#[inline(never)]
fn plan(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering, which: Dedup) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..n).collect();
    stable_sort(&mut order, cmp);
    if which == Dedup::None {
        return (order, n);
    }
    let mut kept = Vec::with_capacity(n);
    let mut dropped = Vec::new();
    let mut i = 0;
    while i < order.len() {
        // The run of positions equal to order[i]: order[i..j].
        let mut j = i + 1;
        while j < order.len() && cmp(order[i], order[j]) == Ordering::Equal {
            j += 1;
        }
        let pick = if which == Dedup::First { i } else { j - 1 };
        for (k, &p) in order[i..j].iter().enumerate() {
            if i + k == pick {
                kept.push(p);
            } else {
                dropped.push(p);
            }
        }
        i = j;
    }
    let keep = kept.len();
    kept.extend(dropped);
    (kept, keep)
}

/// Sorts positions stably by `cmp`: insertion sort within runs of [`RUN`], then bottom-up
/// merges of the sorted runs through one buffer (an element of the right run goes first only
/// when strictly less, so equal ones keep their order). Not `slice::sort_by`: std's driftsort
/// is about 4 KB of the wasm module, for lists of a few dozen positions at most.
#[inline(never)]
fn stable_sort(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    let n = order.len();
    let mut start = 0;
    while start < n {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let x = order[i];
            let mut j = i;
            while j > start && cmp(order[j - 1], x) == Ordering::Greater {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = x;
        }
        start = end;
    }
    let mut buf = Vec::new();
    let mut width = RUN;
    while width < n {
        buf.clear();
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j) = (lo, mid);
            while i < mid || j < hi {
                if j < hi && (i == mid || cmp(order[j], order[i]) == Ordering::Less) {
                    buf.push(order[j]);
                    j += 1;
                } else {
                    buf.push(order[i]);
                    i += 1;
                }
            }
            lo = hi;
        }
        order.copy_from_slice(&buf);
        width *= 2;
    }
}

/// The length of the runs [`stable_sort`] sorts by insertion before merging them.
const RUN: usize = 16;

/// Rearranges a sequence so that position `k` holds what was at `order[k]` (`order` is a
/// permutation of `0..order.len()`), by following each cycle with `swap`.
#[inline(never)]
fn permute(order: &[usize], swap: &mut dyn FnMut(usize, usize)) {
    let mut done = vec![false; order.len()];
    for start in 0..order.len() {
        if done[start] {
            continue;
        }
        // The element first at `start` is carried along the cycle: each swap puts the right
        // element at `at` and moves the carried one to `next`, where the cycle closes on it.
        let mut at = start;
        loop {
            done[at] = true;
            let next = order[at];
            if next == start {
                break;
            }
            swap(at, next);
            at = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{sort_by, sort_dedup_by, Dedup};

    /// A pseudo-random list of (key, original position), keys drawn from `0..range`.
    fn list(len: usize, range: u32, seed: u32) -> Vec<(u32, usize)> {
        let mut x = seed;
        (0..len)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ((x >> 16) % range, i)
            })
            .collect()
    }

    /// Every length up to 40 and a few long ones, keys with many and with few repeats: the
    /// elements end where the standard stable sort puts them (each cycle of the permutation
    /// is walked right, whatever its length).
    #[test]
    fn matches_the_standard_stable_sort_on_random_lists() {
        for len in (0..40).chain([100, 257, 1000]) {
            for range in [1, 3, 50, 100_000] {
                let mut v = list(len, range, len as u32 * 31 + range);
                let mut expected = v.clone();
                expected.sort_by_key(|a| a.0);
                sort_by(&mut v, &|a, b| a.0.cmp(&b.0));
                assert_eq!(v, expected, "len {len}, keys in 0..{range}");
            }
        }
    }

    /// Of each run of equal keys one is kept: the first given (as `dedup_by` after a stable
    /// sort) or the last given (as a `BTreeMap` collects); the list ends sorted and short.
    #[test]
    fn dedup_keeps_the_first_or_the_last_of_equal_keys() {
        for len in [0, 1, 2, 5, 13, 64, 300] {
            for range in [1, 4, 1000] {
                let v = list(len, range, 7 + len as u32);
                let mut first = v.clone();
                first.sort_by_key(|a| a.0);
                first.dedup_by(|later, kept| later.0 == kept.0);
                let mut got = v.clone();
                sort_dedup_by(&mut got, &|a, b| a.0.cmp(&b.0), Dedup::First);
                assert_eq!(got, first, "first, len {len}, keys in 0..{range}");

                let last: Vec<(u32, usize)> = v
                    .iter()
                    .copied()
                    .collect::<std::collections::BTreeMap<u32, usize>>()
                    .into_iter()
                    .collect();
                let mut got = v.clone();
                sort_dedup_by(&mut got, &|a, b| a.0.cmp(&b.0), Dedup::Last);
                assert_eq!(got, last, "last, len {len}, keys in 0..{range}");
            }
        }
    }

    /// What the dedup leaves out is dropped once, not leaked or dropped twice.
    #[test]
    fn dedup_drops_each_left_out_element_once() {
        use std::rc::Rc;
        let tokens: Vec<Rc<()>> = (0..6).map(|_| Rc::new(())).collect();
        let mut v: Vec<(u8, Rc<()>)> = [3, 1, 3, 2, 1, 3]
            .iter()
            .zip(&tokens)
            .map(|(&k, t)| (k, Rc::clone(t)))
            .collect();
        sort_dedup_by(&mut v, &|a, b| a.0.cmp(&b.0), Dedup::Last);
        assert_eq!(v.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 2, 3]);
        // Kept: the last 1 (index 4), the 2 (3), the last 3 (5): two owners each.
        let owners: Vec<usize> = tokens.iter().map(Rc::strong_count).collect();
        assert_eq!(owners, [1, 1, 1, 2, 2, 2]);
    }

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
