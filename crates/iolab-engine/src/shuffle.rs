//! `--distribution once`: random offsets that visit every block of a thread's region once per pass, in
//! an order drawn from the seed, as fio's random I/O does by default (its random map; fio's
//! `norandommap` draws with replacement, as iolab's `uniform`).
//!
//! A pass walks a counter over the smallest power of two that holds the region's blocks and sends each
//! value through a bijection of that many bits (rounds of a multiply by an odd number and an add, both
//! modulo the power of two, then a xor with the value shifted right); a value past the region's last
//! block is skipped (cycle walking), so each block comes exactly once a pass and an op costs under two
//! tries on average. Each pass draws new keys from the plan's generator, so passes differ; the same seed
//! replays the same passes (`--verify` relies on that).

/// The rounds of the bijection.
const ROUNDS: usize = 3;

/// A permutation of `0..n`, walked one block at a time, pass after pass.
#[derive(Debug, Clone)]
pub struct Shuffle {
    n: u64,
    /// The power of two minus one: the counter's range and the bijection's width.
    mask: u64,
    /// Half the width (rounded up), the bijection's shift.
    shift: u32,
    /// The next counter value of the pass.
    next: u64,
    /// Each round's odd multiplier and addend.
    keys: [(u64, u64); ROUNDS],
    /// Draws the next pass's keys.
    rng: u64,
}

impl Shuffle {
    /// A shuffle of `n` (at least 1) blocks whose passes are drawn from `seed`.
    pub fn new(n: u64, seed: u64) -> Shuffle {
        assert!(n > 0, "a region holds at least one block");
        let bits = 64 - (n - 1).leading_zeros();
        let mut s = Shuffle {
            n,
            mask: if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            shift: bits.div_ceil(2),
            next: 0,
            keys: [(1, 0); ROUNDS],
            rng: seed,
        };
        s.rekey();
        s
    }

    /// New keys for the next pass.
    fn rekey(&mut self) {
        for k in self.keys.iter_mut() {
            *k = (draw(&mut self.rng) | 1, draw(&mut self.rng));
        }
    }

    /// The bijection of the pass on `width` bits.
    #[inline(always)]
    fn permute(&self, mut x: u64) -> u64 {
        for &(mul, add) in &self.keys {
            x = x.wrapping_mul(mul).wrapping_add(add) & self.mask;
            // A shift of the whole width (one bit) leaves x as it is: still a bijection.
            x ^= x.checked_shr(self.shift).unwrap_or(0);
        }
        x
    }

    /// The next block of the pass (a new pass once every block came).
    #[inline(always)]
    pub fn next_block(&mut self) -> u64 {
        loop {
            if self.next > self.mask {
                self.next = 0;
                self.rekey();
            }
            let x = self.permute(self.next);
            // A counter of the full 64-bit width would wrap (and replay its pass) after 2^64 blocks.
            self.next = self.next.wrapping_add(1);
            if x < self.n {
                return x;
            }
        }
    }
}

/// splitmix64 (Steele, Lea and Flood): well-mixed words for the keys. Its own here, apart from the data
/// pattern's mixing, so that this module stands below `pattern.rs`.
fn draw(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(s: &mut Shuffle) -> Vec<u64> {
        (0..s.n).map(|_| s.next_block()).collect()
    }

    #[test]
    fn each_pass_visits_every_block_once_in_a_new_order() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4096, 4097] {
            let mut s = Shuffle::new(n, 42);
            let first = pass(&mut s);
            let second = pass(&mut s);
            for p in [&first, &second] {
                let mut sorted = p.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            }
            if n >= 64 {
                assert_ne!(first, second, "n = {n}: passes differ");
                // Not the blocks in order, nor alternating halves: the first tenth is spread.
                let tenth = &first[..(n / 10) as usize];
                let low = tenth.iter().filter(|&&b| b < n / 2).count() as f64 / tenth.len() as f64;
                assert!(
                    (0.25..0.75).contains(&low),
                    "n = {n}: {low} of the first tenth low"
                );
                assert_ne!(&first[..8], &(0..8).collect::<Vec<_>>()[..], "n = {n}");
            }
        }
    }

    #[test]
    fn a_seed_replays_its_passes_and_another_seed_differs() {
        let (mut a, mut b, mut c) = (
            Shuffle::new(500, 9),
            Shuffle::new(500, 9),
            Shuffle::new(500, 10),
        );
        let (pa, pb, pc) = (pass(&mut a), pass(&mut b), pass(&mut c));
        assert_eq!(pa, pb);
        assert_ne!(pa, pc);
    }

    #[test]
    fn a_region_of_the_widest_count_still_draws() {
        let mut s = Shuffle::new(u64::MAX, 1);
        let v: Vec<u64> = (0..100).map(|_| s.next_block()).collect();
        let mut d = v.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 100, "no block twice in a pass");
    }
}
