//! Bit-exact reproduction of `numpy.random.default_rng(seed).permutation(n)`.
//!
//! Hugging Face `datasets` implements `Dataset.shuffle(seed=S)` as
//! `np.random.default_rng(S).permutation(len(self))`, and Data-Juicer's random selector takes the
//! first `k` rows of that. This module re-implements the exact chain numpy uses:
//!
//! 1. [`SeedSequence`] (`numpy/random/bit_generator.pyx`): the integer seed is split into
//!    little-endian 32-bit words, hashed into a pool of 4 words (`mix_entropy`), and
//!    `generate_state(4, uint64)` derives 8 words, paired little-endian into 4 `u64`.
//! 2. [`Pcg64`] (`numpy/random/src/pcg64`): `pcg64_set_seed(state, seed=words[0..2], inc=words[2..4])`,
//!    where each pair is `(high, low)` of a 128-bit value, then the PCG `srandom` procedure. Output is
//!    XSL-RR 128/64 of the state after each LCG step. `next_uint32` returns the low half of a 64-bit
//!    draw and buffers the high half for the next call.
//! 3. `Generator.permutation(n)` is `arange(n)` shuffled by `_shuffle_int` (`_generator.pyx`):
//!    Fisher–Yates from the last index down to 1, `j = random_interval(i)` (`distributions.c`), i.e.
//!    rejection on the smallest bit mask covering `i`, drawing from the buffered 32-bit stream when
//!    `i <= u32::MAX`, else from the 64-bit stream.

const MASK32: u32 = 0xFFFF_FFFF;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

/// numpy's `SeedSequence` for a non-negative integer entropy and an empty spawn key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeedSequence {
    pool: [u32; POOL_SIZE],
}

fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut v = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    v = v.wrapping_mul(*hash_const);
    v ^ (v >> XSHIFT)
}

fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

impl SeedSequence {
    /// `SeedSequence(entropy)` for an integer `entropy` (as `default_rng(entropy)` builds it).
    pub fn new(entropy: u64) -> Self {
        // `_int_to_uint32_array`: little-endian 32-bit words, `[0]` for zero.
        let lo = (entropy & u64::from(MASK32)) as u32;
        let hi = (entropy >> 32) as u32;
        let words: &[u32] = if hi == 0 { &[lo] } else { &[lo, hi] };
        Self::from_words(words)
    }

    /// `SeedSequence` from an already assembled entropy array of 32-bit words.
    pub(crate) fn from_words(entropy: &[u32]) -> Self {
        let mut pool = [0u32; POOL_SIZE];
        let mut hash_const = INIT_A;
        for (i, slot) in pool.iter_mut().enumerate() {
            let v = entropy.get(i).copied().unwrap_or(0);
            *slot = hashmix(v, &mut hash_const);
        }
        for i_src in 0..POOL_SIZE {
            for i_dst in 0..POOL_SIZE {
                if i_src != i_dst {
                    let h = hashmix(pool[i_src], &mut hash_const);
                    pool[i_dst] = mix(pool[i_dst], h);
                }
            }
        }
        for &e in entropy.iter().skip(POOL_SIZE) {
            for slot in pool.iter_mut() {
                let h = hashmix(e, &mut hash_const);
                *slot = mix(*slot, h);
            }
        }
        SeedSequence { pool }
    }

    /// The mixed entropy pool (`SeedSequence.pool`).
    #[cfg(test)]
    pub(crate) fn pool(&self) -> [u32; POOL_SIZE] {
        self.pool
    }

    /// `generate_state(n_words, np.uint32)`.
    pub(crate) fn generate_state_u32(&self, n_words: usize) -> Vec<u32> {
        let mut hash_const = INIT_B;
        (0..n_words)
            .map(|i| {
                let mut v = self.pool[i % POOL_SIZE] ^ hash_const;
                hash_const = hash_const.wrapping_mul(MULT_B);
                v = v.wrapping_mul(hash_const);
                v ^ (v >> XSHIFT)
            })
            .collect()
    }

    /// `generate_state(n_words, np.uint64)`: twice as many 32-bit words, paired little-endian.
    pub(crate) fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        self.generate_state_u32(n_words * 2)
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | (u64::from(p[1]) << 32))
            .collect()
    }
}

const PCG_MULT: u128 = (2_549_297_995_355_413_924u128 << 64) | 4_865_540_595_714_422_341u128;

/// numpy's `PCG64` bit generator (PCG XSL-RR 128/64) including its 32-bit half buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pcg64 {
    state: u128,
    inc: u128,
    has_uint32: bool,
    uinteger: u32,
}

impl Pcg64 {
    /// `PCG64(SeedSequence(seed))`, i.e. the bit generator of `np.random.default_rng(seed)`.
    pub fn new(seed: u64) -> Self {
        Self::from_seed_sequence(&SeedSequence::new(seed))
    }

    /// Seeds from `seed_seq.generate_state(4, np.uint64)` as numpy's `PCG64._seed_seq` does.
    pub(crate) fn from_seed_sequence(seed_seq: &SeedSequence) -> Self {
        let w = seed_seq.generate_state_u64(4);
        let initstate = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let initseq = (u128::from(w[2]) << 64) | u128::from(w[3]);
        Self::from_state_inc(initstate, initseq)
    }

    /// `pcg64_srandom_r(initstate, initseq)`.
    pub(crate) fn from_state_inc(initstate: u128, initseq: u128) -> Self {
        let mut rng = Pcg64 {
            state: 0,
            inc: (initseq << 1) | 1,
            has_uint32: false,
            uinteger: 0,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(initstate);
        rng.step();
        rng
    }

    #[inline]
    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// `next_uint64` / `random_raw`.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.step();
        let s = self.state;
        let xored = ((s >> 64) as u64) ^ (s as u64);
        xored.rotate_right((s >> 122) as u32)
    }

    /// `next_uint32`: low half of a fresh 64-bit draw, the high half is returned by the next call.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.has_uint32 {
            self.has_uint32 = false;
            return self.uinteger;
        }
        let next = self.next_u64();
        self.has_uint32 = true;
        self.uinteger = (next >> 32) as u32;
        next as u32
    }

    /// `random_bounded_uint64(off=0, rng, mask=0, use_masked=False)`: uniform in `[0, rng]` by
    /// Lemire's method, as `Generator.integers(0, rng, endpoint=True)` draws it (not used by shuffle).
    #[inline]
    #[cfg(test)]
    pub(crate) fn bounded_u64(&mut self, rng: u64) -> u64 {
        if rng == 0 {
            0
        } else if rng <= u64::from(u32::MAX) {
            if rng == u64::from(u32::MAX) {
                return u64::from(self.next_u32());
            }
            u64::from(self.bounded_lemire_u32(rng as u32))
        } else if rng == u64::MAX {
            self.next_u64()
        } else {
            self.bounded_lemire_u64(rng)
        }
    }

    #[inline]
    #[cfg(test)]
    fn bounded_lemire_u32(&mut self, rng: u32) -> u32 {
        let rng_excl = rng + 1;
        let mut m = u64::from(self.next_u32()) * u64::from(rng_excl);
        let mut leftover = m as u32;
        if leftover < rng_excl {
            let threshold = (u32::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u64::from(self.next_u32()) * u64::from(rng_excl);
                leftover = m as u32;
            }
        }
        (m >> 32) as u32
    }

    #[inline]
    #[cfg(test)]
    fn bounded_lemire_u64(&mut self, rng: u64) -> u64 {
        let rng_excl = rng + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(rng_excl);
        let mut leftover = m as u64;
        if leftover < rng_excl {
            let threshold = (u64::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u128::from(self.next_u64()) * u128::from(rng_excl);
                leftover = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// `random_interval(max)`: uniform in `[0, max]` by rejection on the smallest covering bit mask,
    /// drawing from the (buffered) 32-bit stream when `max <= u32::MAX`, else from the 64-bit stream.
    #[inline]
    pub fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = u64::MAX >> max.leading_zeros();
        if max <= u64::from(u32::MAX) {
            let (mask, max) = (mask as u32, max as u32);
            loop {
                let v = self.next_u32() & mask;
                if v <= max {
                    return u64::from(v);
                }
            }
        } else {
            loop {
                let v = self.next_u64() & mask;
                if v <= max {
                    return v;
                }
            }
        }
    }

    /// `Generator.shuffle` on a 1-d array (`_shuffle_raw` / `_shuffle_int`): Fisher–Yates from the
    /// last index down to 1, swapping `i` with `j = random_interval(i)`.
    pub fn shuffle<T>(&mut self, data: &mut [T]) {
        for i in (1..data.len()).rev() {
            let j = self.interval(i as u64) as usize;
            data.swap(i, j);
        }
    }
}

/// `numpy.random.default_rng(seed).permutation(n)`, the row order of `Dataset.shuffle(seed=seed)`.
pub(crate) fn numpy_permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut perm: Vec<u64> = (0..n).collect();
    Pcg64::new(seed).shuffle(&mut perm);
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcg64_raw_stream_seed_42() {
        let mut rng = Pcg64::new(42);
        let got: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            vec![
                14276969152011380360,
                8095878257575067585,
                15838336090824644132,
                12864169557245331597,
                1737265434024182251
            ]
        );
    }

    #[test]
    fn seed_sequence_matches_numpy() {
        let ss = SeedSequence::new(42);
        assert_eq!(ss.pool(), [1662858758, 128880814, 1875164712, 753753205]);
        assert_eq!(
            ss.generate_state_u64(4),
            vec![
                11465652750463011511,
                15382171918060459190,
                9018504550953525431,
                3703499796004394495
            ]
        );
        assert_eq!(
            SeedSequence::new((1 << 32) + 7).pool(),
            [70599722, 3325653387, 3012850390, 3772321688]
        );
        assert_eq!(
            SeedSequence::new(0).pool(),
            [4265667335, 1328953910, 1320288413, 3365567143]
        );
    }

    #[test]
    fn next_u32_low_half_first() {
        let mut rng = Pcg64::new(42);
        let got: Vec<u32> = (0..5).map(|_| rng.next_u32()).collect();
        assert_eq!(
            got,
            vec![383329928, 3324115917, 2811363265, 1884968545, 1859786276]
        );
    }

    #[test]
    fn bounded_matches_integers_endpoint() {
        let cases: &[(u64, u64, [u64; 6])] = &[
            (0, 6, [5, 4, 3, 1, 2, 0]),
            (0, 999, [850, 636, 511, 269, 307, 40]),
            (
                0,
                4294967294,
                [
                    3653403230, 2735729614, 2195314464, 1158725111, 1322117303, 175979944,
                ],
            ),
            (
                0,
                4294967296,
                [
                    2735729616, 1158725112, 175979945, 70985654, 3492969080, 3920255354,
                ],
            ),
            (
                0,
                1099511627779,
                [
                    700346781660,
                    296633628803,
                    45050865998,
                    18172327443,
                    894200084528,
                    1003585370537,
                ],
            ),
            (
                0,
                9223372036854788153,
                [
                    377914054924498517,
                    152440531369162970,
                    8418684267946588715,
                    6728418181561544784,
                    8624520845998132494,
                    7524920857253135102,
                ],
            ),
            (42, 6, [0, 5, 4, 3, 3, 6]),
            (42, 999, [89, 773, 654, 438, 433, 858]),
            (
                42,
                4294967294,
                [
                    383329927, 3324115916, 2811363264, 1884968544, 1859786275, 3687649985,
                ],
            ),
            (
                42,
                4294967296,
                [
                    3324115917, 1884968546, 3687649987, 2995172878, 404488629, 4190266094,
                ],
            ),
            (
                42,
                1099511627779,
                [
                    850973674777,
                    482551947689,
                    944038396530,
                    766764256792,
                    103549089075,
                    1072708119946,
                ],
            ),
            (
                42,
                9223372036854788153,
                [
                    4047939128787539210,
                    7020274643477808877,
                    7250163532461142408,
                    7588636456839706632,
                    4089774122208375923,
                    5115141816626919119,
                ],
            ),
            (12345, 6, [4, 1, 5, 2, 1, 5]),
            (12345, 999, [699, 227, 788, 316, 204, 797]),
            (
                12345,
                4294967294,
                [
                    3003105692, 976400780, 3387213021, 1360466708, 876933080, 3424658561,
                ],
            ),
            (
                12345,
                4294967296,
                [
                    976400781, 1360466710, 3424658563, 2904491695, 1679802729, 1429424936,
                ],
            ),
            (
                12345,
                1099511627779,
                [
                    249958600115,
                    348279477707,
                    876712591927,
                    743549873831,
                    430029498622,
                    365932783576,
                ],
            ),
            (
                12345,
                9223372036854788153,
                [
                    2921580012919484853,
                    7354398262316670560,
                    1722318865822142000,
                    8686598211760456554,
                    6432873107818347733,
                    2030386593312510450,
                ],
            ),
            (4294967303, 6, [6, 5, 6, 0, 1, 1]),
            (4294967303, 999, [870, 770, 875, 111, 258, 189]),
            (
                4294967303,
                4294967294,
                [
                    3737738444, 3307730196, 3761774059, 480723852, 1111937809, 812168579,
                ],
            ),
            (
                4294967303,
                4294967296,
                [
                    3307730198, 480723853, 812168580, 687002617, 1855291963, 2154907377,
                ],
            ),
            (
                4294967303,
                1099511627779,
                [
                    846778930657,
                    123065306592,
                    207915156547,
                    175872670008,
                    474954742667,
                    551656288405,
                ],
            ),
            (
                4294967303,
                9223372036854788153,
                [
                    7103296511922197386,
                    1032346615401944155,
                    1744118745525351079,
                    9157209010238225104,
                    2825868196985731834,
                    4838524693425905159,
                ],
            ),
        ];
        for &(seed, bound, expected) in cases {
            let mut rng = Pcg64::new(seed);
            let got: Vec<u64> = (0..6).map(|_| rng.bounded_u64(bound)).collect();
            assert_eq!(got, expected, "seed {seed} bound {bound}");
        }
    }

    #[test]
    fn permutation_empty() {
        assert!(numpy_permutation(0, 42).is_empty());
    }

    /// `(seed, n, first 20, last 3, [(position, value)])` from `np.random.default_rng(seed).permutation(n)`.
    #[allow(clippy::type_complexity)]
    const PERM_CASES: &[(u64, u64, &[u64], [u64; 3], &[(usize, u64)])] = &[
        (0, 1, &[0], [0, 0, 0], &[(0, 0)]),
        (0, 2, &[0, 1], [0, 1, 0], &[(0, 0), (1, 1)]),
        (
            0,
            10,
            &[4, 6, 2, 7, 3, 5, 9, 0, 8, 1],
            [0, 8, 1],
            &[(0, 4), (1, 6), (7, 0)],
        ),
        (
            0,
            167,
            &[
                71, 146, 153, 131, 156, 118, 114, 117, 140, 84, 83, 10, 99, 74, 138, 142, 80, 90,
                109, 54,
            ],
            [29, 33, 95],
            &[(0, 71), (1, 146), (7, 117)],
        ),
        (
            0,
            1000,
            &[
                459, 206, 222, 162, 711, 814, 350, 890, 518, 264, 683, 674, 511, 391, 329, 325, 81,
                201, 582, 380,
            ],
            [801, 975, 607],
            &[(0, 459), (1, 206), (7, 890), (999, 607)],
        ),
        (
            0,
            100000,
            &[
                18836, 43996, 91795, 93254, 38314, 54783, 10221, 17216, 58700, 6431, 87726, 18387,
                74636, 14954, 68385, 95912, 42596, 29338, 76213, 36228,
            ],
            [81321, 48632, 33375],
            &[
                (0, 18836),
                (1, 43996),
                (7, 17216),
                (999, 1349),
                (54321, 79835),
            ],
        ),
        (
            0,
            5000000,
            &[
                2191796, 1722790, 4076315, 2264105, 2434276, 3704221, 4893585, 3447736, 859608,
                312891, 834982, 2609595, 2653910, 4255296, 271770, 2861909, 2356901, 101085,
                1553491, 471340,
            ],
            [1097208, 1043407, 4358751],
            &[
                (0, 2191796),
                (1, 1722790),
                (7, 3447736),
                (999, 4439282),
                (54321, 1332893),
                (123456, 3642251),
                (2500000, 1184184),
                (4999999, 4358751),
            ],
        ),
        (42, 1, &[0], [0, 0, 0], &[(0, 0)]),
        (42, 2, &[1, 0], [1, 0, 1], &[(0, 1), (1, 0)]),
        (
            42,
            10,
            &[5, 6, 0, 7, 3, 2, 4, 9, 1, 8],
            [9, 1, 8],
            &[(0, 5), (1, 6), (7, 9)],
        ),
        (
            42,
            167,
            &[
                145, 24, 122, 79, 7, 46, 150, 125, 25, 51, 166, 52, 159, 50, 33, 70, 68, 9, 90, 151,
            ],
            [36, 97, 136],
            &[(0, 145), (1, 24), (7, 125)],
        ),
        (
            42,
            1000,
            &[
                978, 933, 859, 916, 127, 608, 856, 260, 147, 810, 635, 972, 593, 994, 285, 554,
                467, 276, 55, 61,
            ],
            [961, 973, 648],
            &[(0, 978), (1, 933), (7, 260), (999, 648)],
        ),
        (
            42,
            100000,
            &[
                45262, 49850, 30394, 90177, 95569, 10900, 193, 98908, 59014, 93313, 61345, 71689,
                37715, 60940, 55361, 28566, 733, 54985, 19807, 11232,
            ],
            [5668, 22113, 75400],
            &[
                (0, 45262),
                (1, 49850),
                (7, 98908),
                (999, 17146),
                (54321, 60073),
            ],
        ),
        (
            42,
            5000000,
            &[
                3897261, 4903908, 3474181, 3401680, 2019360, 936859, 841109, 2518612, 1536286,
                615032, 853479, 1483360, 1072658, 1354657, 3444823, 1035105, 2606673, 2213622,
                1746632, 4371718,
            ],
            [34957, 1179585, 2227149],
            &[
                (0, 3897261),
                (1, 4903908),
                (7, 2518612),
                (999, 2806209),
                (54321, 2907703),
                (123456, 2312119),
                (2500000, 1045890),
                (4999999, 2227149),
            ],
        ),
        (12345, 1, &[0], [0, 0, 0], &[(0, 0)]),
        (12345, 2, &[0, 1], [0, 1, 0], &[(0, 0), (1, 1)]),
        (
            12345,
            10,
            &[4, 8, 1, 3, 7, 9, 6, 0, 2, 5],
            [0, 2, 5],
            &[(0, 4), (1, 8), (7, 0)],
        ),
        (
            12345,
            167,
            &[
                150, 31, 88, 15, 126, 92, 91, 140, 6, 41, 105, 0, 64, 29, 26, 160, 124, 47, 123,
                128,
            ],
            [21, 141, 157],
            &[(0, 150), (1, 31), (7, 140)],
        ),
        (
            12345,
            1000,
            &[
                279, 568, 569, 583, 55, 795, 669, 361, 136, 475, 751, 473, 726, 763, 514, 300, 393,
                316, 973, 306,
            ],
            [222, 397, 413],
            &[(0, 279), (1, 568), (7, 361), (999, 413)],
        ),
        (
            12345,
            100000,
            &[
                20282, 17636, 55392, 74854, 75290, 82541, 2126, 19078, 74353, 96371, 51009, 27104,
                23741, 99754, 11287, 53510, 89662, 90808, 28515, 38316,
            ],
            [70421, 50398, 45453],
            &[
                (0, 20282),
                (1, 17636),
                (7, 19078),
                (999, 44589),
                (54321, 85570),
            ],
        ),
        (
            12345,
            5000000,
            &[
                2085571, 3009446, 82555, 4238465, 3104591, 3601810, 1547832, 2633129, 2709368,
                4993813, 3322241, 2860575, 1505011, 4429235, 3140752, 1058526, 1733171, 4816066,
                441931, 2232434,
            ],
            [4517849, 1512213, 3322253],
            &[
                (0, 2085571),
                (1, 3009446),
                (7, 2633129),
                (999, 818277),
                (54321, 505618),
                (123456, 160062),
                (2500000, 1008748),
                (4999999, 3322253),
            ],
        ),
        (4294967303, 1, &[0], [0, 0, 0], &[(0, 0)]),
        (4294967303, 2, &[0, 1], [0, 1, 0], &[(0, 0), (1, 1)]),
        (
            4294967303,
            10,
            &[9, 0, 8, 6, 7, 1, 3, 4, 2, 5],
            [4, 2, 5],
            &[(0, 9), (1, 0), (7, 4)],
        ),
        (
            4294967303,
            167,
            &[
                125, 38, 69, 24, 139, 166, 137, 8, 111, 70, 96, 130, 64, 81, 49, 6, 74, 68, 115,
                159,
            ],
            [18, 141, 21],
            &[(0, 125), (1, 38), (7, 8)],
        ),
        (
            4294967303,
            1000,
            &[
                513, 857, 583, 397, 337, 612, 939, 226, 12, 641, 652, 215, 297, 962, 348, 878, 616,
                112, 456, 187,
            ],
            [492, 277, 205],
            &[(0, 513), (1, 857), (7, 226), (999, 205)],
        ),
        (
            4294967303,
            100000,
            &[
                47141, 56033, 68257, 81583, 92503, 38115, 85350, 81109, 29638, 5674, 74686, 48869,
                74759, 55976, 36008, 87617, 60451, 32543, 5448, 31276,
            ],
            [82829, 7660, 89293],
            &[
                (0, 47141),
                (1, 56033),
                (7, 81109),
                (999, 16636),
                (54321, 33395),
            ],
        ),
        (
            4294967303,
            5000000,
            &[
                4875448, 1232593, 3781240, 1435275, 2913253, 258821, 1383824, 4207236, 2887568,
                1327778, 2424808, 2702954, 767413, 2327557, 715420, 1443504, 2193178, 415294,
                733414, 4060589,
            ],
            [3677676, 2618645, 4807885],
            &[
                (0, 4875448),
                (1, 1232593),
                (7, 4207236),
                (999, 1903545),
                (54321, 331479),
                (123456, 3643940),
                (2500000, 323054),
                (4999999, 4807885),
            ],
        ),
    ];

    #[test]
    fn permutation_matches_numpy() {
        for &(seed, n, first, last, spots) in PERM_CASES {
            let p = numpy_permutation(n, seed);
            assert_eq!(p.len() as u64, n);
            assert_eq!(&p[..first.len()], first, "seed {seed} n {n} first");
            if n >= 3 {
                assert_eq!(&p[p.len() - 3..], &last, "seed {seed} n {n} last");
            }
            for &(i, v) in spots {
                assert_eq!(p[i], v, "seed {seed} n {n} pos {i}");
            }
        }
    }

    #[test]
    fn permutation_is_a_permutation() {
        let n = 100_000;
        let mut p = numpy_permutation(n, 42);
        p.sort_unstable();
        assert!(p.iter().copied().eq(0..n));
    }
}
