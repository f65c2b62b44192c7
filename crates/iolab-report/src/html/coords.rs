//! The runs' coordinates (a point's keys and values, the spec keys it does not name) stored once each and
//! held by a run as numbers: grouping and comparing thousands of runs is then a pass over small arrays of
//! integers, not string comparisons over memory scattered across the heap (with strings per run, twice
//! the records took 2.9 times as long to chart once their keys no longer fitted in the CPU's cache).

use std::collections::HashMap;
use std::rc::Rc;

/// Strings each stored once (the list and the lookup share one copy: a point's values may be long),
/// numbered from 0 in the order first seen.
#[derive(Default)]
pub(crate) struct Table {
    texts: Vec<Rc<str>>,
    at: HashMap<Rc<str>, u32>,
}

impl Table {
    /// The number of `s`, added when new.
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.at.get(s) {
            return i;
        }
        let i = self.texts.len() as u32;
        let s: Rc<str> = s.into();
        self.texts.push(s.clone());
        self.at.insert(s, i);
        i
    }

    /// The number of `s`, when some run has it.
    pub(crate) fn id(&self, s: &str) -> Option<u32> {
        self.at.get(s).copied()
    }

    /// The text of number `i`.
    pub(crate) fn text(&self, i: u32) -> &str {
        &self.texts[i as usize]
    }

    /// How many strings the table holds.
    pub(crate) fn len(&self) -> usize {
        self.texts.len()
    }
}

/// The key names and the values of every run of a page; value 0 is "" (a key a run does not have).
pub(crate) struct Coords {
    pub(crate) names: Table,
    pub(crate) values: Table,
}

/// The value number of "", which a run has for a key it does not name.
pub(crate) const NONE: u32 = 0;

impl Default for Coords {
    fn default() -> Self {
        let mut values = Table::default();
        values.intern("");
        Coords {
            names: Table::default(),
            values,
        }
    }
}

impl Coords {
    /// The numbers of the values `texts`.
    pub(crate) fn values_of<const N: usize>(&mut self, texts: &[String; N]) -> [u32; N] {
        texts.each_ref().map(|t| self.values.intern(t))
    }

    /// A run's keys as numbers, in their order.
    pub(crate) fn intern(&mut self, keys: &[(String, String)]) -> Vec<(u32, u32)> {
        keys.iter()
            .map(|(k, v)| (self.names.intern(k), self.values.intern(v)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_a_number_and_the_empty_value_is_none() {
        let mut c = Coords::default();
        let a = c.intern(&[("bs".into(), "4k".into()), ("seed".into(), "".into())]);
        let b = c.intern(&[("seed".into(), "7".into()), ("bs".into(), "4k".into())]);
        assert_eq!(a[0], b[1]);
        assert_eq!(a[1].1, NONE);
        assert_eq!(a[1].0, b[0].0);
        assert_ne!(b[0].1, NONE);
        assert_eq!(c.values.text(b[0].1), "7");
        assert_eq!(c.names.id("bs"), Some(a[0].0));
        assert_eq!(c.names.id("qd"), None);
        assert_eq!((c.names.len(), c.values.len()), (2, 3));
    }
}
