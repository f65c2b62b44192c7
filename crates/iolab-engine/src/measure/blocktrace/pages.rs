//! The pages an ftrace instance's per-CPU ring hands out through trace_pipe_raw (kernel/trace/
//! ring_buffer.c): a header (the page's base timestamp and the length of its data, whose offsets
//! events/header_page gives) and compressed events, each a 32-bit word (type_len: 5 bits, time delta:
//! 27 bits) and its data. type_len 1-28: 4 x type_len bytes of data; 0: the length in the next word;
//! 29 padding; 30 a time extension; 31 an absolute timestamp.

/// Where a page's fields lie (events/header_page; `commit` is a long: 8 bytes on 64-bit, 4 on 32-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub commit: usize,
    pub commit_size: usize,
    pub data: usize,
}

impl PageLayout {
    /// Parses events/header_page; `None` if a field is missing.
    pub fn parse(text: &str) -> Option<PageLayout> {
        let field = |name: &str| -> Option<(usize, usize)> {
            text.lines().find_map(|l| {
                let mut parts = l.trim().split(';').map(str::trim);
                let decl = parts.next()?.strip_prefix("field:")?;
                if decl.rsplit(' ').next()? != name {
                    return None;
                }
                let off = parts.next()?.strip_prefix("offset:")?.parse().ok()?;
                let size = parts.next()?.strip_prefix("size:")?.parse().ok()?;
                Some((off, size))
            })
        };
        let (commit, commit_size) = field("commit")?;
        Some(PageLayout {
            commit,
            commit_size,
            data: field("data")?.0,
        })
    }
}

/// The flags ring_buffer.c keeps in the commit word's top bits (events missed before this page).
const COMMIT_FLAGS: u64 = (1 << 31) | (1 << 30);

/// Calls `each(timestamp, data)` for every event of one page, in order.
pub fn events(page: &[u8], lay: &PageLayout, mut each: impl FnMut(u64, &[u8])) {
    let word = |at: usize| -> Option<u32> {
        page.get(at..at + 4)
            .map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes")))
    };
    let Some(base) = page
        .get(0..8)
        .map(|b| u64::from_ne_bytes(b.try_into().expect("8")))
    else {
        return;
    };
    let commit = match lay.commit_size {
        8 => page
            .get(lay.commit..lay.commit + 8)
            .map(|b| u64::from_ne_bytes(b.try_into().expect("8"))),
        _ => word(lay.commit).map(u64::from),
    };
    let len = (commit.unwrap_or(0) & !COMMIT_FLAGS) as usize;
    let end = (lay.data + len).min(page.len());
    let (mut at, mut ts) = (lay.data, base);
    while at + 4 <= end {
        let Some(h) = word(at) else { return };
        let (type_len, delta) = (h & 0x1f, u64::from(h >> 5));
        let arg = word(at + 4).map_or(0, u64::from);
        match type_len {
            // Padding: to the end of the page when its delta is 0, else the length in the next word.
            29 if delta == 0 => return,
            29 => at += 4 + arg as usize,
            30 => {
                ts += (arg << 27) + delta;
                at += 8;
            }
            31 => {
                // An absolute timestamp: its top five bits are the previous one's.
                ts = (ts & !((1u64 << 59) - 1)) | ((arg << 27) + delta);
                at += 8;
            }
            0 => {
                ts += delta;
                let n = (arg as usize).saturating_sub(4);
                if let Some(d) = page.get(at + 8..at + 8 + n) {
                    each(ts, d);
                }
                at += 4 + (arg as usize).max(4);
            }
            n => {
                ts += delta;
                let n = 4 * n as usize;
                if let Some(d) = page.get(at + 4..at + 4 + n) {
                    each(ts, d);
                }
                at += 4 + n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
        \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
        \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    fn head(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_ne_bytes()
    }

    #[test]
    fn the_header_page_gives_the_layout() {
        assert_eq!(
            PageLayout::parse(HEADER_PAGE),
            Some(PageLayout {
                commit: 8,
                commit_size: 8,
                data: 16
            })
        );
    }

    #[test]
    fn events_carry_their_timestamps_through_deltas_extensions_and_long_lengths() {
        let lay = PageLayout::parse(HEADER_PAGE).expect("layout");
        let mut data = Vec::new();
        // A 8-byte event 10 ns after the base.
        data.extend(head(2, 10));
        data.extend([1u8; 8]);
        // A time extension of 3 << 27 + 5 ns.
        data.extend(head(30, 5));
        data.extend(3u32.to_ne_bytes());
        // A long event (type_len 0): 12 data bytes, 7 ns later.
        data.extend(head(0, 7));
        data.extend(16u32.to_ne_bytes());
        data.extend([2u8; 12]);
        // Padding to the end.
        data.extend(head(29, 0));
        let mut page = vec![0u8; 4096];
        page[0..8].copy_from_slice(&1_000u64.to_ne_bytes());
        let commit = data.len() as u64 | (1 << 31);
        page[8..16].copy_from_slice(&commit.to_ne_bytes());
        page[16..16 + data.len()].copy_from_slice(&data);
        let mut seen = Vec::new();
        events(&page, &lay, |t, d| seen.push((t, d.to_vec())));
        assert_eq!(
            seen,
            vec![
                (1_010, vec![1u8; 8]),
                (1_010 + (3 << 27) + 5 + 7, vec![2u8; 12])
            ]
        );
    }
}
