//! [`VecMap`] and [`VecSet`]: ordered maps and sets kept as one sorted `Vec`.
//!
//! The crate's maps are small (a world's chats, a chat's agents, the keys of one batch) and
//! `BTreeMap` is generic code: every key/value pair type compiled its own copy of the B-tree
//! (node splits, merges, steals, a search, an iterator: about 7 KB of wasm per pair type, and
//! the crate had fourteen, 100 KB in all, a ninth of the module). Here a map is a `Vec` of
//! pairs sorted by key: lookups are a binary search, an insert or a removal moves the tail of
//! the `Vec`, and what each pair type compiles is a few small loops. Iteration is in key
//! order, as with `BTreeMap`, so nothing that lists through these maps changes order.
//!
//! The cost is an insert or removal in the middle of a large map (it moves the entries after
//! it): these maps hold a world's or a chat's records by id, not messages, so they stay in
//! the tens; the one set that holds message ids (the memory store's duplicate check) is a
//! `HashSet` for that reason. Building a map from an iterator sorts once.

use std::borrow::Borrow;
use std::fmt;

use crate::core::sort::{sort_dedup_by, Dedup};

/// An ordered map over a sorted `Vec` of pairs: `BTreeMap`'s API as the crate uses it.
#[derive(Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.items.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: Ord, V> VecMap<K, V> {
    pub const fn new() -> Self {
        Self { items: Vec::new() }
    }

    /// `Ok(position)` of `key`, or `Err(position)` where it would be inserted.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.items.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.items.get(i).map(|(_, v)| v)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.items.get_mut(i).map(|(_, v)| v)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; the value it had, if any (the key itself is kept, as
    /// `BTreeMap::insert` does).
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => self
                .items
                .get_mut(i)
                .map(|(_, v)| std::mem::replace(v, value)),
            Err(i) => {
                self.items.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        Some(self.items.remove(i).1)
    }

    /// The value of `key`, inserted as `V::default()` first if it is missing
    /// (`entry(key).or_default()`). The key is borrowed and copied only when an entry is
    /// made: the maps are looked up far more often than they grow.
    pub fn get_or_default<Q>(&mut self, key: &Q) -> &mut V
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        V: Default,
    {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (key.to_owned(), V::default()));
                i
            }
        };
        // `i` is in bounds: found, or just inserted there.
        &mut self.items[i].1
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.items.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.items.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.items.iter_mut().map(|(_, v)| v)
    }

    /// The entries whose key is `from` or after it, in order (`range(from..)`).
    pub fn range_from<Q: Ord + ?Sized>(&self, from: &Q) -> impl Iterator<Item = (&K, &V)>
    where
        K: Borrow<Q>,
    {
        let start = self.find(from).unwrap_or_else(|i| i);
        self.items
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .map(|(k, v)| (k, v))
    }

    /// Keeps the entries for which `keep` says true.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.items.retain_mut(|(k, v)| keep(k, v));
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    /// Sorts once; for a key given twice the later value wins, as `BTreeMap` collects.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut items: Vec<(K, V)> = iter.into_iter().collect();
        sort_dedup_by(
            &mut items,
            &|a: &(K, V), b: &(K, V)| a.0.cmp(&b.0),
            Dedup::Last,
        );
        Self { items }
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// An ordered set over a sorted `Vec`: `BTreeSet`'s API as the crate uses it.
#[derive(Clone, PartialEq, Eq)]
pub struct VecSet<K> {
    map: VecMap<K, ()>,
}

impl<K> Default for VecSet<K> {
    fn default() -> Self {
        Self {
            map: VecMap::default(),
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for VecSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.map.items.iter().map(|(k, ())| k))
            .finish()
    }
}

impl<K: Ord> VecSet<K> {
    pub const fn new() -> Self {
        Self { map: VecMap::new() }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds `key`; false if it was there already.
    pub fn insert(&mut self, key: K) -> bool {
        self.map.insert(key, ()).is_none()
    }

    /// Removes `key`; false if it was not there.
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.map.remove(key).is_some()
    }

    pub fn contains<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.map.contains_key(key)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.map.keys()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.map.retain(|k, _| keep(k));
    }
}

impl<K: Ord> FromIterator<K> for VecSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        Self {
            map: iter.into_iter().map(|k| (k, ())).collect(),
        }
    }
}

impl<K: Ord> Extend<K> for VecSet<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for k in iter {
            self.insert(k);
        }
    }
}

impl<K> IntoIterator for VecSet<K> {
    type Item = K;
    type IntoIter = std::iter::Map<std::vec::IntoIter<(K, ())>, fn((K, ())) -> K>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.into_iter().map(|(k, ())| k)
    }
}

impl<'a, K> IntoIterator for &'a VecSet<K> {
    type Item = &'a K;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, ())>, fn(&'a (K, ())) -> &'a K>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.items.iter().map(|(k, ())| k)
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter().map(|(k, v)| (k, v))
    }
}

/// As a JSON object (the provider settings' `headers`), keys in order, like `BTreeMap`.
/// (Decoding is `crate::core::json`'s `FromJson`.)
impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.items.iter().map(|(k, v)| (k, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::{VecMap, VecSet};
    use std::collections::{BTreeMap, BTreeSet};

    /// A pseudo-random walk of inserts, overwrites and removals gives the same contents, in
    /// the same order, as `BTreeMap`.
    #[test]
    fn behaves_like_btree_map_over_a_random_walk() {
        let mut ours: VecMap<u32, u32> = VecMap::new();
        let mut theirs: BTreeMap<u32, u32> = BTreeMap::new();
        let mut x: u32 = 12345;
        for step in 0..5_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = (x >> 16) % 97;
            match step % 3 {
                0 | 1 => assert_eq!(ours.insert(key, step), theirs.insert(key, step)),
                _ => assert_eq!(ours.remove(&key), theirs.remove(&key)),
            }
            assert_eq!(ours.get(&key), theirs.get(&key));
        }
        assert_eq!(ours.len(), theirs.len());
        assert!(ours.iter().eq(theirs.iter()));
        assert!(ours.range_from(&50).eq(theirs.range(50..)));
        *ours.get_or_default(&1000) += 7;
        *theirs.entry(1000).or_default() += 7;
        assert!(ours.iter().rev().eq(theirs.iter().rev()));
    }

    #[test]
    fn collect_sorts_and_the_later_value_of_a_key_wins() {
        let pairs = [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)];
        let ours: VecMap<&str, i32> = pairs.into_iter().collect();
        let theirs: BTreeMap<&str, i32> = pairs.into_iter().collect();
        assert!(ours.iter().eq(theirs.iter()));
        assert_eq!(ours.get("b"), Some(&3));
    }

    #[test]
    fn sets_keep_one_of_each_in_order() {
        let words = ["pear", "apple", "fig", "apple", "kiwi", "fig"];
        let ours: VecSet<String> = words.iter().map(|w| w.to_string()).collect();
        let theirs: BTreeSet<String> = words.iter().map(|w| w.to_string()).collect();
        assert!(ours.iter().eq(theirs.iter()));
        let mut ours = ours;
        assert!(!ours.insert("kiwi".into()));
        assert!(ours.insert("date".into()));
        assert!(ours.remove("apple"));
        assert!(!ours.remove("apple"));
        assert!(ours.contains("date"));
        assert!(ours.iter().eq(["date", "fig", "kiwi", "pear"].iter()));
    }
}
