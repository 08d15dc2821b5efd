//! The MinHash permutation step: for every permutation `(a, b)`, the minimum over a text's shingle
//! hashes of `((h*a + b) mod P) & (2^32 - 1)` (u64 arithmetic wrapping, P = 2^61 - 1). This is
//! most of MinHash's work on long texts, so with AVX-512 F and DQ it screens sixteen permutations
//! per instruction with 32-bit arithmetic and computes exactly only where a minimum may fall; with
//! AVX2 it runs four per instruction (checked at run time), and as plain Rust otherwise; all give
//! the same values.

/// The Mersenne prime 2^61 - 1 of the permutations.
pub(crate) const MERSENNE_PRIME: u64 = (1 << 61) - 1;
/// Largest permuted value, 2^32 - 1; also the value of every permutation for an empty shingle set.
pub(crate) const MAX_HASH: u32 = u32::MAX;

/// Texts with more shingle hashes than this have their permutations screened (see
/// `signature_avx512`).
const SCREEN_MIN_HASHES: usize = 256;

/// The permutations, with `a` also split into 32-bit halves for the vector multiplies, and the
/// low 32 bits of `a` and `b` as u32 for the AVX-512 screening.
#[derive(Debug)]
pub(crate) struct Permutations {
    a: Vec<u64>,
    b: Vec<u64>,
    a_lo: Vec<u64>,
    a_hi: Vec<u64>,
    a_lo32: Vec<u32>,
    b_lo32: Vec<u32>,
}

/// `x mod (2^61 - 1)` for any u64.
#[inline]
pub(super) fn mod_mersenne(x: u64) -> u64 {
    let r = (x & MERSENNE_PRIME) + (x >> 61);
    if r >= MERSENNE_PRIME {
        r - MERSENNE_PRIME
    } else {
        r
    }
}

/// One permutation of a token hash: `((h*a + b) mod P) & (2^32 - 1)`, multiplication and addition
/// wrapping in u64 as numpy's uint64 arrays do.
#[inline]
pub(crate) fn permute(h: u32, a: u64, b: u64) -> u32 {
    mod_mersenne((h as u64).wrapping_mul(a).wrapping_add(b)) as u32
}

impl Permutations {
    pub(crate) fn new(a: Vec<u64>, b: Vec<u64>) -> Permutations {
        assert_eq!(a.len(), b.len(), "one b per a");
        let a_lo = a.iter().map(|&a| a & 0xffff_ffff).collect();
        let a_hi = a.iter().map(|&a| a >> 32).collect();
        let a_lo32 = a.iter().map(|&a| a as u32).collect();
        let b_lo32 = b.iter().map(|&b| b as u32).collect();
        Permutations {
            a,
            b,
            a_lo,
            a_hi,
            a_lo32,
            b_lo32,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.a.len()
    }

    /// The signature of a set of shingle hashes (any order; duplicates allowed): [`MAX_HASH`]
    /// everywhere when `hashes` is empty.
    pub(crate) fn signature(&self, hashes: &[u32]) -> Vec<u32> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                // SAFETY: the CPU has AVX-512 F and DQ, checked just above.
                return unsafe { self.signature_avx512(hashes) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                return unsafe { self.signature_avx2(hashes) };
            }
        }
        self.signature_scalar(hashes)
    }

    /// Sixteen permutations per vector, four vectors per pass over the hashes. A permuted value
    /// is `(y + d) mod 2^32`, where `y = (h*a + b) mod 2^32` takes one 32-bit multiply and
    /// `d = (x >> 61) + [x mod 2^61 + (x >> 61) >= P]` is at most 8 (`x = h*a + b mod 2^64`), so
    /// when `y` is below `2^32 - 8` the value is at least `y`. Once the minima are small, almost
    /// every `y` is above its minimum and the hash cannot lower it: only lanes where `y` is below
    /// the minimum (or could wrap) are computed exactly, with 64-bit `vpmullq`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx2")]
    unsafe fn signature_avx512(&self, hashes: &[u32]) -> Vec<u32> {
        use std::arch::x86_64::*;
        const LANES: usize = 16;
        const BLOCK: usize = 4 * LANES;
        let blocks = self.len() / BLOCK * BLOCK;
        let mut sig = vec![MAX_HASH; self.len()];
        let load32 = |v: &[u32], j: usize| {
            // SAFETY: j + 16 <= blocks <= v.len(); unaligned loads.
            unsafe { _mm512_loadu_si512(v.as_ptr().add(j).cast()) }
        };
        // With t = y + 8 and T = min(minimum, 2^32 - 9) + 8 (both mod 2^32), `t < T` holds
        // exactly when y is below the minimum or could wrap (y >= 2^32 - 8); capping the
        // minimum only lets more lanes through.
        let eight = _mm512_set1_epi32(8);
        let cap = _mm512_set1_epi32(-9); // 2^32 - 9
        let bound = |min: __m512i| _mm512_add_epi32(_mm512_min_epu32(min, cap), eight);
        // A short text's minima fall often (for about 16 ln(n) of its n hashes in each block of
        // 16 permutations): screening would mostly mispredict, so every value is computed.
        let screen = hashes.len() > SCREEN_MIN_HASHES;
        for j in (0..blocks).step_by(BLOCK) {
            let mut min = [_mm512_set1_epi32(-1); 4];
            if screen {
                let a = [0, 16, 32, 48].map(|k| load32(&self.a_lo32, j + k));
                let b8 =
                    [0, 16, 32, 48].map(|k| _mm512_add_epi32(load32(&self.b_lo32, j + k), eight));
                let mut bounds = min.map(bound);
                for &h in hashes {
                    let hv = _mm512_set1_epi32(h as i32);
                    let hits: [u16; 4] = std::array::from_fn(|k| {
                        let t = _mm512_add_epi32(_mm512_mullo_epi32(hv, a[k]), b8[k]);
                        _mm512_cmplt_epu32_mask(t, bounds[k])
                    });
                    // One test for the four vectors: a hit is rare once the minima are small.
                    if (hits[0] | hits[1] | hits[2] | hits[3]) == 0 {
                        continue;
                    }
                    for k in (0..4).filter(|&k| hits[k] != 0) {
                        // SAFETY: the CPU has AVX-512 F and DQ (this function's features).
                        let exact = unsafe { self.permuted16_avx512(h, j + LANES * k) };
                        min[k] = _mm512_min_epu32(min[k], exact);
                        bounds[k] = bound(min[k]);
                    }
                }
            } else {
                for &h in hashes {
                    for (k, m) in min.iter_mut().enumerate() {
                        // SAFETY: the CPU has AVX-512 F and DQ (this function's features).
                        let exact = unsafe { self.permuted16_avx512(h, j + LANES * k) };
                        *m = _mm512_min_epu32(*m, exact);
                    }
                }
            }
            for (k, m) in min.iter().enumerate() {
                // SAFETY: j + 16k + 16 <= blocks <= sig.len(); unaligned store.
                unsafe { _mm512_storeu_si512(sig.as_mut_ptr().add(j + LANES * k).cast(), *m) };
            }
        }
        let tail = sig[blocks..]
            .iter_mut()
            .zip(&self.a[blocks..])
            .zip(&self.b[blocks..]);
        for ((s, &a), &b) in tail {
            for &h in hashes {
                *s = (*s).min(permute(h, a, b));
            }
        }
        sig
    }

    /// The sixteen permutations from `j` of `h`, exactly (64-bit lanes, `h*a` with `vpmullq`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn permuted16_avx512(&self, h: u32, j: usize) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::*;
        let load = |v: &[u64], j: usize| {
            // SAFETY: the callers' j + 16 <= v.len(); unaligned loads.
            unsafe { _mm512_loadu_si512(v.as_ptr().add(j).cast()) }
        };
        let p = _mm512_set1_epi64(MERSENNE_PRIME as i64);
        let h = _mm512_set1_epi64(i64::from(h));
        let permuted = |a: __m512i, b: __m512i| {
            let x = _mm512_add_epi64(_mm512_mullo_epi64(h, a), b);
            let r = _mm512_add_epi64(_mm512_and_si512(x, p), _mm512_srli_epi64::<61>(x));
            let r = _mm512_mask_sub_epi64(r, _mm512_cmpge_epu64_mask(r, p), r, p);
            _mm512_cvtepi64_epi32(r)
        };
        let lo = permuted(load(&self.a, j), load(&self.b, j));
        let hi = permuted(load(&self.a, j + 8), load(&self.b, j + 8));
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
    }

    fn signature_scalar(&self, hashes: &[u32]) -> Vec<u32> {
        let mut sig = vec![MAX_HASH; self.len()];
        for &h in hashes {
            for ((s, &a), &b) in sig.iter_mut().zip(&self.a).zip(&self.b) {
                *s = (*s).min(permute(h, a, b));
            }
        }
        sig
    }

    /// Four permutations per vector, two vectors per hash: `h*a mod 2^64 = h*a_lo + ((h*a_hi)
    /// << 32)` from two 32x32->64 multiplies (h < 2^32); every intermediate value stays below
    /// 2^63, so signed 64-bit compares are exact.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn signature_avx2(&self, hashes: &[u32]) -> Vec<u32> {
        use std::arch::x86_64::*;
        let lanes = self.len() / 8 * 8;
        let mut sig = vec![MAX_HASH; self.len()];
        let load = |v: &[u64], j: usize| {
            // SAFETY: j + 4 <= lanes <= v.len(); unaligned loads.
            unsafe { _mm256_loadu_si256(v.as_ptr().add(j).cast()) }
        };
        for j in (0..lanes).step_by(8) {
            let (a_lo0, a_hi0, b0) = (load(&self.a_lo, j), load(&self.a_hi, j), load(&self.b, j));
            let (a_lo1, a_hi1, b1) = (
                load(&self.a_lo, j + 4),
                load(&self.a_hi, j + 4),
                load(&self.b, j + 4),
            );
            // Eight u32 minima, in the lane order the packing gives: j, j+1, j+4, j+5, j+2,
            // j+3, j+6, j+7.
            let mut min = _mm256_set1_epi32(-1);
            for &h in hashes {
                let h = _mm256_set1_epi64x(i64::from(h));
                let r0 = permuted(h, a_lo0, a_hi0, b0);
                let r1 = permuted(h, a_lo1, a_hi1, b1);
                // The low 32 bits of each u64 lane, both vectors packed into one.
                let packed = _mm256_blend_epi32::<0b1100_1100>(
                    _mm256_shuffle_epi32::<0b10_00_10_00>(r0),
                    _mm256_shuffle_epi32::<0b10_00_10_00>(r1),
                );
                min = _mm256_min_epu32(min, packed);
            }
            let mut out = [0u32; 8];
            // SAFETY: 32 writable bytes; unaligned store.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), min) };
            for (k, at) in [0, 1, 4, 5, 2, 3, 6, 7].into_iter().enumerate() {
                sig[j + at] = out[k];
            }
        }
        let tail = sig[lanes..]
            .iter_mut()
            .zip(&self.a[lanes..])
            .zip(&self.b[lanes..]);
        for ((s, &a), &b) in tail {
            for &h in hashes {
                *s = (*s).min(permute(h, a, b));
            }
        }
        sig
    }
}

/// `(h*a + b) mod P` in four u64 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn permuted(
    h: std::arch::x86_64::__m256i,
    a_lo: std::arch::x86_64::__m256i,
    a_hi: std::arch::x86_64::__m256i,
    b: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let p = _mm256_set1_epi64x(MERSENNE_PRIME as i64);
    let p_minus_1 = _mm256_set1_epi64x(MERSENNE_PRIME as i64 - 1);
    let ha = _mm256_add_epi64(
        _mm256_mul_epu32(h, a_lo),
        _mm256_slli_epi64::<32>(_mm256_mul_epu32(h, a_hi)),
    );
    let x = _mm256_add_epi64(ha, b);
    let r = _mm256_add_epi64(_mm256_and_si256(x, p), _mm256_srli_epi64::<61>(x));
    _mm256_sub_epi64(r, _mm256_and_si256(_mm256_cmpgt_epi64(r, p_minus_1), p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::minhash::permutations;

    /// The vector and scalar paths agree with the one-permutation definition, for permutation
    /// counts that are and are not multiples of four and for extreme hashes.
    #[test]
    fn vector_and_scalar_signatures_agree() {
        let mut hashes: Vec<u32> = (0..2000u32)
            .map(|i| i.wrapping_mul(2_654_435_761).rotate_left(i % 32))
            .collect();
        hashes.extend([0, 1, u32::MAX, u32::MAX - 1, 1 << 31]);
        for n in [1, 3, 4, 7, 40, 128, 256, 257] {
            let (a, b) = permutations(n);
            let perms = Permutations::new(a.clone(), b.clone());
            for hs in [&hashes[..0], &hashes[..1], &hashes[2000..], &hashes[..]] {
                let want: Vec<u32> = (0..n)
                    .map(|j| {
                        hs.iter()
                            .map(|&h| permute(h, a[j], b[j]))
                            .min()
                            .unwrap_or(MAX_HASH)
                    })
                    .collect();
                assert_eq!(perms.signature_scalar(hs), want, "scalar, {n} permutations");
                assert_eq!(perms.signature(hs), want, "dispatched, {n} permutations");
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2.
                        let got = unsafe { perms.signature_avx2(hs) };
                        assert_eq!(got, want, "AVX2, {n} permutations");
                    }
                    if std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512dq")
                    {
                        // SAFETY: the CPU has AVX-512 F and DQ.
                        let got = unsafe { perms.signature_avx512(hs) };
                        assert_eq!(got, want, "AVX-512, {n} permutations");
                    }
                }
            }
        }
    }

    /// A value whose low 32 bits before the reduction are just below 2^32 wraps to a small one
    /// after it: the AVX-512 screening must compute it although `y` is above the minimum.
    #[test]
    fn screening_sees_values_that_wrap() {
        // x = h + b: for h = 0, x >> 61 = 7 and x mod 2^32 = 2^32 - 3, so the value is 4; for
        // h = 5 it is 9, which comes first and sets the minimum.
        let n = 64;
        let perms = Permutations::new(vec![1; n], vec![0xE000_0000_FFFF_FFFD; n]);
        assert_eq!(permute(0, 1, 0xE000_0000_FFFF_FFFD), 4);
        assert_eq!(permute(5, 1, 0xE000_0000_FFFF_FFFD), 9);
        assert_eq!(perms.signature_scalar(&[5, 0]), vec![4; n]);
        assert_eq!(perms.signature(&[5, 0]), vec![4; n]);
        // Enough hashes to be screened.
        let mut hashes = vec![5; SCREEN_MIN_HASHES + 1];
        hashes.push(0);
        assert_eq!(perms.signature(&hashes), vec![4; n]);
    }
}
