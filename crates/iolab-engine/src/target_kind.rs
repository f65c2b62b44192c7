//! The kinds of target iolab runs against.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    DevNull,
    DevZero,
    BlockDevice,
    Pipe,
    Socketpair,
    Tcp,
    /// iolab's sink driver, /dev/iolab_sink.
    Sink,
    /// An NVMe namespace's generic character device, /dev/ngXnY: NVMe commands only.
    NvmeGeneric,
}

impl TargetKind {
    /// Does the target keep what is written (so it can be verified)?
    pub fn keeps_data(self) -> bool {
        matches!(
            self,
            Self::File | Self::BlockDevice | Self::Sink | Self::NvmeGeneric
        )
    }

    /// A pipe or socket with iolab's peer at the other end.
    pub fn is_stream(self) -> bool {
        matches!(
            self,
            TargetKind::Pipe | TargetKind::Socketpair | TargetKind::Tcp
        )
    }

    /// The stream target a `--target` word names, if it is one.
    pub fn stream_named(path: &Path) -> Option<TargetKind> {
        match path.to_str()? {
            "pipe" => Some(TargetKind::Pipe),
            "socketpair" => Some(TargetKind::Socketpair),
            "tcp" => Some(TargetKind::Tcp),
            s if s.starts_with("tcp:") => Some(TargetKind::Tcp),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_with_an_address_is_a_tcp_stream() {
        assert_eq!(
            TargetKind::stream_named(Path::new("tcp:1.2.3.4:5")),
            Some(TargetKind::Tcp)
        );
    }
}
