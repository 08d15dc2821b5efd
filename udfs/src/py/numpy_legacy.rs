//! numpy's legacy `RandomState(seed)`: the MT19937 generator and `randint(low, high,
//! dtype=uint64)` bit for bit, as Data-Juicer's MinHash permutations draw them.

/// The MT19937 generator of numpy's legacy `RandomState(seed)` (seeded with `init_genrand`).
#[derive(Clone)]
pub(crate) struct Mt19937 {
    state: [u32; 624],
    pos: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937").field("pos", &self.pos).finish()
    }
}

impl Mt19937 {
    const N: usize = 624;
    const M: usize = 397;

    /// `numpy.random.RandomState(seed)` for an integer seed.
    pub fn new(seed: u32) -> Mt19937 {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 1812433253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 {
            state,
            pos: Self::N,
        }
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        let mt = &mut self.state;
        for i in 0..Self::N {
            let y = (mt[i] & UPPER) | (mt[(i + 1) % Self::N] & LOWER);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[i] = mt[(i + Self::M) % Self::N] ^ (y >> 1) ^ mag;
        }
        self.pos = 0;
    }

    /// The next 32-bit output (`genrand_int32`).
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.pos >= Self::N {
            self.twist();
        }
        let mut y = self.state[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// numpy's `next_uint64` for MT19937: the first 32-bit output is the high half.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        (hi << 32) | self.next_u32() as u64
    }
}

/// The smallest all-ones mask covering `max` (numpy's `gen_mask`).
fn gen_mask(max: u64) -> u64 {
    let mut m = max;
    m |= m >> 1;
    m |= m >> 2;
    m |= m >> 4;
    m |= m >> 8;
    m |= m >> 16;
    m |= m >> 32;
    m
}

/// `RandomState.randint(low, high, dtype=np.uint64)` for one value, `low < high`.
pub(crate) fn randint_u64(rng: &mut Mt19937, low: u64, high: u64) -> u64 {
    assert!(low < high, "randint needs low < high");
    bounded_u64(rng, low, high - 1 - low)
}

/// One uint64 in `off ..= off + range` the way numpy's legacy `RandomState` draws it
/// (`random_bounded_uint64_fill` with `use_masked`): a range of one value draws nothing; a range
/// that fits 32 bits draws 32-bit outputs (all 32 bits when the range is 2^32 - 1, otherwise
/// masked to the range's bit width until one is in range); a wider range draws
/// [`Mt19937::next_u64`] values the same way (all 64 bits for the full range).
pub(crate) fn bounded_u64(rng: &mut Mt19937, off: u64, range: u64) -> u64 {
    if range == 0 {
        off
    } else if range <= u32::MAX as u64 {
        if range == u32::MAX as u64 {
            return off.wrapping_add(rng.next_u32() as u64);
        }
        let mask = gen_mask(range) as u32;
        loop {
            let v = rng.next_u32() & mask;
            if v as u64 <= range {
                return off.wrapping_add(v as u64);
            }
        }
    } else if range == u64::MAX {
        off.wrapping_add(rng.next_u64())
    } else {
        let mask = gen_mask(range);
        loop {
            let v = rng.next_u64() & mask;
            if v <= range {
                return off.wrapping_add(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2^61 - 1, the bound of Data-Juicer's MinHash permutations.
    const MERSENNE_PRIME: u64 = (1 << 61) - 1;

    #[test]
    fn mt19937_and_bounded_integers_match_numpy() {
        // numpy 2.4.6: g = RandomState(42); g.randint(lo, hi, dtype=np.uint64) in this order.
        let mut g = Mt19937::new(42);
        let mut draw = |lo: u64, range: u64| bounded_u64(&mut g, lo, range);
        let got: Vec<u64> = [
            (0, 9),
            (0, 9),
            (0, 9),
            (0, 9),
            (0, 9),
            (5, (1 << 40) - 6),
            (5, (1 << 40) - 6),
            (5, (1 << 40) - 6),
            (0, u64::MAX),
            (0, u64::MAX),
            (7, 0),
            (0, u32::MAX as u64),
            (0, u32::MAX as u64),
            (3, (1 << 33) + 1),
            (3, (1 << 33) + 1),
            (1, MERSENNE_PRIME - 2),
            (1, MERSENNE_PRIME - 2),
        ]
        .iter()
        .map(|&(lo, range)| draw(lo, range))
        .collect();
        assert_eq!(
            got,
            [
                6,
                3,
                7,
                4,
                6,
                520361034199,
                919372468559,
                871303592028,
                6155837350739094627,
                2635427562620468887,
                7,
                2795544706,
                88409749,
                4165731076,
                5206956840,
                14365674248606912,
                2162171728270432533
            ]
        );
        let mut g = Mt19937::new(42);
        assert_eq!(randint_u64(&mut g, 0, 1 << 32), 1608637542);
        assert_eq!(randint_u64(&mut g, 0, 1 << 32), 3421126067);
        let firsts = |seed| {
            let mut g = Mt19937::new(seed);
            [g.next_u32(), g.next_u32(), g.next_u32()]
        };
        assert_eq!(firsts(0), [2357136044, 2546248239, 3071714933]);
        assert_eq!(firsts(u32::MAX), [419326371, 479346978, 3918654476]);
    }
}
