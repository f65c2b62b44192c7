//! The block layer's tracepoints as tracefs describes them: each event's id and where its fields lie
//! in the raw record a sample carries (events/block/<name>/format), read rather than assumed, since the
//! layout changes between kernels (block_rq_issue's rwbs grew from 8 to 10 bytes in 6.x).

use std::path::Path;

/// One block tracepoint: its id and the offsets of the fields iolab reads from its raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpFormat {
    pub id: u64,
    /// dev_t dev (4 bytes: the kernel's MKDEV, major << 20 | minor).
    pub dev: usize,
    /// sector_t sector (8 bytes).
    pub sector: usize,
    /// unsigned int nr_sector (4 bytes).
    pub nr_sector: usize,
    /// char rwbs[8 or 10]: the request's direction and flags ("R", "WS", "FWFS" ...).
    pub rwbs: usize,
}

/// The three events a request's life is read from: a bio reaching the block layer, the request
/// handed to the driver, and its completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFormats {
    pub queue: TpFormat,
    pub issue: TpFormat,
    pub complete: TpFormat,
}

/// The names of the three events under events/block.
pub const BLOCK_EVENTS: [&str; 3] = ["block_bio_queue", "block_rq_issue", "block_rq_complete"];

/// Parses one format file: its ID line and the offsets of dev, sector and nr_sector (each of the size
/// iolab reads). `None` if any is missing or of another size.
pub fn parse(text: &str) -> Option<TpFormat> {
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("ID:"))?
        .trim()
        .parse()
        .ok()?;
    // `size` 0: any size.
    let field = |name: &str, size: usize| -> Option<usize> {
        text.lines().find_map(|l| {
            let mut parts = l.trim().split(';').map(str::trim);
            let decl = parts.next()?.strip_prefix("field:")?;
            let last = decl.rsplit(' ').next()?;
            if last != name && last.split('[').next() != Some(name) {
                return None;
            }
            let off = parts.next()?.strip_prefix("offset:")?.parse().ok()?;
            let sz: usize = parts.next()?.strip_prefix("size:")?.parse().ok()?;
            (size == 0 || sz == size).then_some(off)
        })
    };
    Some(TpFormat {
        id,
        dev: field("dev", 4)?,
        sector: field("sector", 8)?,
        nr_sector: field("nr_sector", 4)?,
        rwbs: field("rwbs", 0)?,
    })
}

/// The three block events of the tracefs at `root`, `None` when one is missing.
pub fn block_formats(root: &Path) -> Option<BlockFormats> {
    let f = |name: &str| {
        let t =
            std::fs::read_to_string(root.join("events/block").join(name).join("format")).ok()?;
        parse(&t)
    };
    Some(BlockFormats {
        queue: f(BLOCK_EVENTS[0])?,
        issue: f(BLOCK_EVENTS[1])?,
        complete: f(BLOCK_EVENTS[2])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux 6.18's block_rq_issue, as tracefs printed it on the development VM.
    const RQ_ISSUE: &str = "name: block_rq_issue\nID: 2104\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
        \tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\
        \tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\
        \tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n\
        \tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n\
        \tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n";

    #[test]
    fn a_format_file_gives_the_id_and_the_offsets() {
        assert_eq!(
            parse(RQ_ISSUE),
            Some(TpFormat {
                id: 2104,
                dev: 8,
                sector: 16,
                nr_sector: 24,
                rwbs: 34
            })
        );
    }

    #[test]
    fn a_field_of_another_size_is_refused() {
        let t = RQ_ISSUE.replace("sector;\toffset:16;\tsize:8", "sector;\toffset:16;\tsize:4");
        assert_eq!(parse(&t), None);
        assert_eq!(parse(&RQ_ISSUE.replace("ID: 2104", "")), None);
    }
}
