//! The bounds a fleet's results are read within: a host's texts cut to what a host writes, and a
//! `fleet.json` of more hosts than iolab reads refused as it is parsed.

use serde::Deserialize;
use serde_json::Value;

/// The most hosts a fleet's results are read for (a directory or `fleet.json` naming more is refused).
pub(super) const MAX_HOSTS: usize = 20_000;

/// The most of a host's text (its kernel, architecture, the last line of its stderr, why it did not run)
/// iolab keeps: a kernel release or an error line is far shorter.
pub(super) const TEXT_MAX: usize = 1024;

/// `t`, or its first [`TEXT_MAX`] bytes (at a character's end) and an ellipsis.
pub(super) fn short(t: &str) -> String {
    if t.len() <= TEXT_MAX {
        return t.to_string();
    }
    let mut end = TEXT_MAX;
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &t[..end])
}

/// `fleet.json`'s list of hosts, refused as it is parsed once it names more than [`MAX_HOSTS`] (800,000
/// hosts parsed whole took 1.9 GB before they were counted).
#[derive(Default)]
pub(super) struct Hosts(pub(super) Vec<Value>);

impl<'de> Deserialize<'de> for Hosts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Hosts, D::Error> {
        struct Each;
        impl<'de> serde::de::Visitor<'de> for Each {
            type Value = Hosts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a list of hosts")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Hosts, A::Error> {
                let mut v = Vec::new();
                while let Some(h) = a.next_element::<Value>()? {
                    if v.len() == MAX_HOSTS {
                        return Err(serde::de::Error::custom(format!(
                            "it names more than the {MAX_HOSTS} hosts iolab reads of a fleet"
                        )));
                    }
                    v.push(h);
                }
                Ok(Hosts(v))
            }
        }
        d.deserialize_seq(Each)
    }
}
