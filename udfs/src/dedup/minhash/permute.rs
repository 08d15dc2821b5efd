//! The MinHash permutation step: for every permutation `(a, b)`, the minimum over a text's shingle
//! hashes of `((h*a + b) mod P) & (2^32 - 1)` (u64 arithmetic wrapping, P = 2^61 - 1). This is
//! most of MinHash's work on long texts, so it runs eight permutations per AVX-512 instruction
//! when the CPU has AVX-512 F and DQ, four per AVX2 instruction when it has AVX2 (checked at run
//! time), and as plain Rust otherwise; all give the same values.

use super::{MAX_HASH, MERSENNE_PRIME};

/// The permutations, with `a` also split into 32-bit halves for the vector multiply.
#[derive(Debug)]
pub(crate) struct Permutations {
    a: Vec<u64>,
    b: Vec<u64>,
    a_lo: Vec<u64>,
    a_hi: Vec<u64>,
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
        Permutations { a, b, a_lo, a_hi }
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

    /// Eight permutations per vector, four vectors per pass over the hashes (independent chains
    /// hide the 64-bit multiply's latency); `h*a mod 2^64` is one `vpmullq`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx2")]
    unsafe fn signature_avx512(&self, hashes: &[u32]) -> Vec<u32> {
        use std::arch::x86_64::*;
        const BLOCK: usize = 32;
        let blocks = self.len() / BLOCK * BLOCK;
        let mut sig = vec![MAX_HASH; self.len()];
        let load = |v: &[u64], j: usize| {
            // SAFETY: j + 8 <= blocks <= v.len(); unaligned loads.
            unsafe { _mm512_loadu_si512(v.as_ptr().add(j).cast()) }
        };
        let p = _mm512_set1_epi64(MERSENNE_PRIME as i64);
        let permuted = |h: __m512i, a: __m512i, b: __m512i| {
            let x = _mm512_add_epi64(_mm512_mullo_epi64(h, a), b);
            let r = _mm512_add_epi64(_mm512_and_si512(x, p), _mm512_srli_epi64::<61>(x));
            let r = _mm512_mask_sub_epi64(r, _mm512_cmpge_epu64_mask(r, p), r, p);
            _mm512_cvtepi64_epi32(r)
        };
        for j in (0..blocks).step_by(BLOCK) {
            let a = [0, 8, 16, 24].map(|k| load(&self.a, j + k));
            let b = [0, 8, 16, 24].map(|k| load(&self.b, j + k));
            let mut min = [_mm256_set1_epi32(-1); 4];
            for &h in hashes {
                let h = _mm512_set1_epi64(i64::from(h));
                for k in 0..4 {
                    min[k] = _mm256_min_epu32(min[k], permuted(h, a[k], b[k]));
                }
            }
            for (k, m) in min.iter().enumerate() {
                // SAFETY: j + 8k + 8 <= blocks <= sig.len(); unaligned store.
                unsafe { _mm256_storeu_si256(sig.as_mut_ptr().add(j + 8 * k).cast(), *m) };
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
}
