//! A host's outcome file (`fleet-host.json`) as iolab reads it: the few keys it shows, each kept only
//! where it has the type iolab writes there; every other key, and a value of another type, is read past
//! without being held. A forged file of 64 MiB of small values took 1.1 GB as a generic JSON value; read
//! this way it takes its text and what is kept.

use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// The keys of a host's outcome that iolab reads.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub(super) struct HostFile {
    pub architecture: Text,
    pub kernel: Text,
    pub stderr: Text,
    pub rc: Int,
    pub timeout_s: Int,
    pub records: Names,
}

impl HostFile {
    /// The outcome in `text`; Err(true) where it is JSON but no object, Err(false) where it is not whole
    /// JSON, with the parser's words.
    pub fn parse(text: &str) -> Result<HostFile, (bool, String)> {
        // A list would be read as the struct's fields in order.
        if text.trim_start().starts_with('[') {
            return Err((true, "a list".into()));
        }
        serde_json::from_str(text).map_err(|e| {
            let not_object = e.classify() == serde_json::error::Category::Data;
            (not_object, e.to_string())
        })
    }
}

/// A string where the file has one (anything else: none).
#[derive(Default, Debug)]
pub(super) struct Text(pub Option<String>);

/// An integer where the file has one (anything else: none).
#[derive(Default, Debug)]
pub(super) struct Int(pub Option<i64>);

/// The record files a host's outcome names: the first [`MAX_NAMES`] of them (each a string, or none where
/// an item is not one) and how many it names in all.
#[derive(Default, Debug)]
pub(super) struct Names {
    pub kept: Vec<Option<String>>,
    pub count: usize,
}

/// The most files a host's outcome may name.
pub(super) const MAX_FILES: usize = 10_000;

/// The most names kept: more than a host may name, so that naming too many is still seen and said.
const MAX_NAMES: usize = MAX_FILES + 1;

/// A JSON value of no kind a visitor keeps (a boolean, a fraction, null, a list or an object), read past:
/// the visitor's `none`.
macro_rules! read_past {
    ($none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            read_past!(Text(None));
            fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text, E> {
                Ok(Text(Some(s.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            read_past!(Int(None));
            fn visit_str<E>(self, _: &str) -> Result<Int, E> {
                Ok(Int(None))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Int, E> {
                Ok(Int(Some(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Int, E> {
                Ok(Int(i64::try_from(n).ok()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of record files")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Names, A::Error> {
                let mut n = Names::default();
                loop {
                    if n.kept.len() < MAX_NAMES {
                        let Some(Text(t)) = a.next_element::<Text>()? else {
                            break;
                        };
                        n.kept.push(t);
                    } else if a.next_element::<IgnoredAny>()?.is_none() {
                        break;
                    }
                    n.count += 1;
                }
                Ok(n)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Names, E> {
                Ok(Names::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Names, A::Error> {
                Err(A::Error::custom("records is not a list"))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_keys_of_their_type_and_everything_else_read_past() {
        let text = r#"{"rc": 2, "kernel": "6.\u0031", "architecture": 7, "stderr": ["x"], "junk": [1, {"a": [2]}],
            "records": ["a.json", 3, "b.jsonl"], "timeout_s": 1e3}"#;
        let h = HostFile::parse(text).unwrap();
        assert_eq!(h.rc.0, Some(2));
        assert_eq!(h.kernel.0.as_deref(), Some("6.1"));
        assert_eq!(
            (h.architecture.0, h.stderr.0, h.timeout_s.0),
            (None, None, None)
        );
        assert_eq!(h.records.count, 3);
        assert_eq!(
            h.records.kept,
            vec![Some("a.json".into()), None, Some("b.jsonl".into())]
        );
        assert_eq!(HostFile::parse("{}").unwrap().rc.0, None);
    }

    #[test]
    fn a_list_longer_than_a_host_may_name_is_counted_not_kept() {
        let many: Vec<String> = (0..MAX_NAMES + 50).map(|i| format!("\"{i}\"")).collect();
        let h = HostFile::parse(&format!("{{\"records\": [{}]}}", many.join(","))).unwrap();
        assert_eq!(
            (h.records.kept.len(), h.records.count),
            (MAX_NAMES, MAX_NAMES + 50)
        );
    }

    #[test]
    fn no_object_and_no_whole_json_are_told_apart() {
        assert!(HostFile::parse("[1, 2]").unwrap_err().0);
        assert!(HostFile::parse("3").unwrap_err().0);
        assert!(!HostFile::parse("{\"rc\": 0").unwrap_err().0);
        assert!(!HostFile::parse("{\"rc\": 0} x").unwrap_err().0);
    }
}
