//! fio's latency histogram, as its stat.h documents it: `FIO_IO_U_PLAT_BITS` 6, so every value below
//! 2^7 ns has a bucket of its own and every power of two above is cut into `FIO_IO_U_PLAT_VAL` (64)
//! buckets of equal width; 29 groups make `FIO_IO_U_PLAT_NR` (1,856) buckets, the last one taking every
//! larger value. json+ names a bucket (its `bins` keys) by the middle of its range in ns, rounded down
//! (itself below 128 ns): the error of a key is at most 1/128 of the value.
//!
//! iolab's own histogram keeps every value within 0.1% (`Summary::hist_ns`); each of its buckets is
//! counted here in the fio bucket holding its value, so the bins are fio's, counted from iolab's data.

use iolab_engine::measure::hist::Summary;

/// Bits of a value kept past its highest set bit (fio's FIO_IO_U_PLAT_BITS).
pub const PLAT_BITS: u32 = 6;
/// Buckets per power of two (FIO_IO_U_PLAT_VAL).
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups of [`PLAT_VAL`] buckets (FIO_IO_U_PLAT_GROUP_NR).
const PLAT_GROUP_NR: u64 = 29;
/// Buckets in all (FIO_IO_U_PLAT_NR): 1,856.
pub const PLAT_NR: usize = (PLAT_GROUP_NR * PLAT_VAL) as usize;

/// The bucket of a latency of `ns` nanoseconds. Below 2 x 64 (a highest bit at most 6) the value is its
/// own bucket. Above, the bits under the top 7 are dropped (`drop` of them, the highest bit's position
/// less 6): the group's first bucket is (drop + 1) x 64, and the next 6 bits pick one of its 64.
/// Values past the last group land in the last bucket.
pub fn index_of(ns: u64) -> usize {
    if ns < 2 * PLAT_VAL {
        return ns as usize;
    }
    let top = 63 - ns.leading_zeros();
    let drop = top - PLAT_BITS;
    let first = u64::from(drop + 1) << PLAT_BITS;
    let within = (ns >> drop) & (PLAT_VAL - 1);
    (first + within).min(PLAT_NR as u64 - 1) as usize
}

/// The value fio names bucket `i` by (its `bins` key): below 128 the bucket's one value; above, the
/// middle of its range, 2^(drop + 6) + (k + 1/2) x 2^drop for the k-th bucket of its group (a whole
/// number: drop is at least 1 there).
pub fn value_of(i: usize) -> u64 {
    let i = i.min(PLAT_NR - 1) as u64;
    if i < 2 * PLAT_VAL {
        return i;
    }
    let drop = (i >> PLAT_BITS) - 1;
    let group_low = 1u64 << (drop + u64::from(PLAT_BITS));
    let k = i % PLAT_VAL;
    group_low + (2 * k + 1) * (1 << (drop - 1))
}

/// Where a direction's bins were counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinSource {
    /// iolab's whole histogram (`hist_ns`, every value within 0.1%).
    Full,
    /// A result without `hist_ns` (written before iolab kept it): its half-octave buckets, each counted
    /// in the fio bucket of its upper bound (coarse: up to 41% off).
    HalfOctave,
    /// No latency was measured.
    None,
}

impl BinSource {
    /// What the reader of the `iolab` object is told.
    pub fn said(self) -> &'static str {
        match self {
            BinSource::Full => {
                "fio's 1,856 buckets (FIO_IO_U_PLAT_BITS 6), counted from iolab's whole latency histogram \
                 (hist_ns, each value within 0.1%): each iolab bucket in the fio bucket holding its value"
            }
            BinSource::HalfOctave => {
                "fio's buckets counted from iolab's half-octave buckets (this result has no hist_ns): each \
                 in the fio bucket of its upper bound, so a value may be up to 41% below its key"
            }
            BinSource::None => "no latency was measured: no bins",
        }
    }
}

/// The (value in whole ns, count) pairs of a latency distribution: its whole histogram where the
/// result has one (each value rounded down to the ns, as fio's clock gives whole ns), else its
/// half-octave buckets at their upper bounds.
pub fn values(l: &Summary) -> (Vec<(u64, u64)>, BinSource) {
    let (pairs, source) = if !l.hist_ns.is_empty() {
        (&l.hist_ns, BinSource::Full)
    } else if !l.buckets.is_empty() {
        (&l.buckets, BinSource::HalfOctave)
    } else {
        return (Vec::new(), BinSource::None);
    };
    let v = pairs
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(ns, n)| (ns.max(0.0).floor() as u64, *n))
        .collect();
    (v, source)
}

/// fio's bins of `values`: (bucket, count) for every bucket holding a value, in increasing order.
pub fn bins(values: &[(u64, u64)]) -> Vec<(usize, u64)> {
    let mut counts = std::collections::BTreeMap::<usize, u64>::new();
    for &(ns, n) in values {
        *counts.entry(index_of(ns)).or_default() += n;
    }
    counts.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_indices_and_keys_are_fios_worked_by_hand() {
        // Below 128 ns: the value itself, both ways.
        for v in [0u64, 1, 63, 64, 127] {
            assert_eq!(index_of(v), v as usize);
            assert_eq!(value_of(v as usize), v);
        }
        // 128 = 2^7: highest bit 7, one bit dropped, group 2 starts at bucket 128; its range is
        // 128..=129, named 128 + 0.5 x 2 = 129. 129 shares it.
        assert_eq!((index_of(128), index_of(129)), (128, 128));
        assert_eq!(value_of(128), 129);
        // 255: the group's last bucket (128 + 63 = 191), range 254..=255, named 128 + 63.5 x 2 = 255.
        assert_eq!(index_of(255), 191);
        assert_eq!(value_of(191), 255);
        // 256 = 2^8: two bits dropped, group 3 at bucket 192; range 256..=259, named 256 + 0.5 x 4 = 258.
        assert_eq!(index_of(256), 192);
        assert_eq!(value_of(192), 258);
        // 1,000 ns: highest bit 9, 3 dropped, group at 4 x 64 = 256; 1000 >> 3 = 125, 125 mod 64 = 61:
        // bucket 317, range 1000..=1007, named 512 + 61.5 x 8 = 1004.
        assert_eq!(index_of(1000), 317);
        assert_eq!(value_of(317), 1004);
        // 50,000 ns: highest bit 15, 9 dropped, group at 640; 50000 >> 9 = 97, mod 64 = 33: bucket 673,
        // range 49,664..=50,175, named 32768 + 33.5 x 512 = 49,920.
        assert_eq!(index_of(50_000), 673);
        assert_eq!(value_of(673), 49_920);
        // The last bucket takes everything past the range; its key is the one fio_jsonplus_clat2csv
        // starts its search from (17,112,760,320).
        assert_eq!(index_of(u64::MAX), PLAT_NR - 1);
        assert_eq!(PLAT_NR, 1856);
        assert_eq!(value_of(PLAT_NR - 1), 17_112_760_320);
    }

    #[test]
    fn every_key_is_inside_its_own_bucket_and_the_buckets_tile_the_range() {
        let mut last = 0;
        for i in 1..PLAT_NR {
            let key = value_of(i);
            assert!(key > value_of(i - 1), "keys increase at {i}");
            assert_eq!(index_of(key), i, "key {key} of bucket {i}");
            // The error of a key: at most 1/128 of the value (half a bucket's width).
            for v in [key.saturating_sub(key / 128), key + key / 128] {
                let j = index_of(v);
                assert!(
                    j + 1 >= i && j <= i + 1,
                    "{v} near key {key}: bucket {j}, not {i}"
                );
            }
            last = key;
        }
        assert_eq!(last, value_of(PLAT_NR - 1));
        // Every value from 0 to 2^20 is in the bucket whose range holds it: the bucket of v + 1 is the
        // same or the next.
        for v in 0..(1u64 << 20) {
            let (a, b) = (index_of(v), index_of(v + 1));
            assert!(b == a || b == a + 1, "{v}: {a} then {b}");
        }
    }

    #[test]
    fn values_come_from_the_whole_histogram_or_else_the_half_octave_buckets() {
        let full = Summary {
            count: 6,
            hist_ns: vec![(133.3, 2), (1000.9, 3), (1007.0, 1)],
            buckets: vec![(2048.0, 6)],
            ..Default::default()
        };
        let (v, s) = values(&full);
        assert_eq!(s, BinSource::Full);
        assert_eq!(v, vec![(133, 2), (1000, 3), (1007, 1)]);
        // 133 is bucket 130 (range 132..=133, key 133); 1000 and 1007 share bucket 317.
        assert_eq!(bins(&v), vec![(130, 2), (317, 4)]);
        assert_eq!(value_of(130), 133);
        let old = Summary {
            count: 6,
            buckets: vec![(2048.0, 6)],
            ..Default::default()
        };
        let (v, s) = values(&old);
        assert_eq!((v, s), (vec![(2048, 6)], BinSource::HalfOctave));
        assert_eq!(values(&Summary::default()).1, BinSource::None);
    }
}
