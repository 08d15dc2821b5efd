//! The first step of counting a long text's n-grams: which of them may occur more than once.
//! Each key's hash hits a 2-bit saturating counter; a key whose counter was hit only once occurs
//! exactly once (equal keys share a counter) and is set aside. For one-byte ids (most texts) the
//! counters are found for 16 n-grams at a time, and tested 16 at a time, with AVX-512 where the
//! CPU has it.

/// 2-bit saturating counters (0, 1, 2+) of key hashes, 32 cells per word.
#[derive(Default)]
pub(super) struct RepeatFilter {
    cells: Vec<u64>,
    /// The counter of each n-gram of a one-byte-id text.
    cell_of: Vec<u32>,
    /// The positions of that text's n-grams that may repeat.
    kept: Vec<u32>,
}

/// Cells per key: a key seen once shares its cell with another key with probability about
/// 1 - e^(-1/8), 12%, and is then counted exactly although it is unique. The cells take 2 bytes
/// per key (1 MB for a 500 KB text: within L2).
const CELLS_PER_KEY: usize = 8;

/// Bytes a one-byte-id text must have after its last n-gram's start, zeros beyond the text: the
/// vector path loads 64 bytes at once.
pub(super) const BYTES_PADDING: usize = 64;

/// Odd multipliers of the one-byte-id path's hash: multiply-shift of each half, whose top bits
/// depend on every bit of the half.
const MUL_LO: u64 = 0x9E37_79B9_7F4A_7C15;
const MUL_HI: u64 = 0xD6E8_FEB8_6659_FD93;

impl RepeatFilter {
    /// Drops buffers a long text grew past `max_kept` entries.
    pub(super) fn release_large(&mut self, max_kept: usize) {
        if self.cells.capacity() > max_kept / 16 {
            self.cells = Vec::new();
        }
        if self.cell_of.capacity() > max_kept {
            self.cell_of = Vec::new();
        }
        if self.kept.capacity() > max_kept {
            self.kept = Vec::new();
        }
    }

    /// Zeroes the counters for `len` keys; returns the shift that takes a 64-bit hash to a cell.
    fn start(&mut self, len: usize) -> u32 {
        let cells = (len * CELLS_PER_KEY).next_power_of_two().max(64);
        self.cells.clear();
        self.cells.resize(cells / 32, 0);
        64 - cells.trailing_zeros()
    }

    /// Appends to `out`, in order, the keys (`len` of them, yielded by `first` and again by
    /// `second`) whose `hash` cell was hit more than once, and returns how many it left out:
    /// each of those occurs exactly once, since equal keys share a cell.
    pub(super) fn possible_repeats(
        &mut self,
        len: usize,
        first: impl Iterator<Item = u128>,
        second: impl Iterator<Item = u128>,
        out: &mut Vec<u128>,
        hash: impl Fn(u128) -> u64,
    ) -> usize {
        let shift = self.start(len);
        // The cell from the hash's high bits; the exact table indexes by its low bits.
        let cell = |key: u128| (hash(key) >> shift) as usize;
        let words = &mut self.cells[..];
        for key in first {
            mark(words, cell(key));
        }
        // Branch-free compaction: every key is written, the count moves on for those kept.
        out.reserve(len);
        let spare = &mut out.spare_capacity_mut()[..len];
        let mut kept = 0;
        for key in second.take(len) {
            spare[kept].write(key);
            kept += usize::from(saturated(words, cell(key)));
        }
        // SAFETY: the first `kept` (<= len) spare slots were written above.
        unsafe { out.set_len(out.len() + kept) };
        len - kept
    }

    /// [`RepeatFilter::possible_repeats`] for the `len` n-grams of one-byte ids `bytes` (n <=
    /// 16 bytes each, the key of the n-gram at `i` being `bytes[i..i + n]` read little-endian),
    /// followed by at least [`BYTES_PADDING`] bytes, on CPUs with AVX-512 (F, BW, DQ, VBMI);
    /// `None` elsewhere, or for more than 2^28 n-grams. (Without vectors, the same steps through
    /// arrays are 10% slower than [`RepeatFilter::possible_repeats`], which hashes each key twice
    /// but keeps no arrays.)
    pub(super) fn possible_repeat_bytes(
        &mut self,
        bytes: &[u8],
        n: usize,
        len: usize,
        out: &mut Vec<u128>,
    ) -> Option<usize> {
        // Counters and positions are u32: at most 2^31 counters, 8 per key.
        if !has_avx512_vbmi() || len > 1 << 28 {
            return None;
        }
        assert!((1..=16).contains(&n) && bytes.len() >= len + BYTES_PADDING);
        let shift = self.start(len);
        let masks = WindowMasks::new(n);
        let mut cell_of = std::mem::take(&mut self.cell_of);
        let mut kept = std::mem::take(&mut self.kept);
        cell_of.clear();
        kept.clear();
        cell_of.reserve(len + 16);
        kept.reserve(len + 16);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has the features (checked above); `bytes` holds the padding the
        // 64-byte loads need; `cell_of` has room for `len` entries and `kept` for `len + 16`.
        unsafe {
            avx512::cells_of_windows(bytes, len, shift, masks, &mut cell_of);
            for &c in &cell_of {
                mark(&mut self.cells, c as usize);
            }
            avx512::kept_positions(&cell_of, &self.cells, &mut kept);
        }
        out.extend(kept.iter().map(|&i| masks.key(bytes, i as usize)));
        let unique = len - kept.len();
        self.cell_of = cell_of;
        self.kept = kept;
        Some(unique)
    }
}

/// Counts one more hit of cell `c`: 0 -> 1 -> 3 (saturated), the high bit set from the second on.
#[inline(always)]
fn mark(words: &mut [u64], c: usize) {
    let w = &mut words[c >> 5];
    let once = 1u64 << ((c & 31) * 2);
    *w |= ((*w & once) << 1) | once;
}

/// Whether cell `c` was hit more than once.
#[inline(always)]
fn saturated(words: &[u64], c: usize) -> bool {
    (words[c >> 5] >> ((c & 31) * 2 + 1)) & 1 == 1
}

/// Which bytes of the two 8-byte halves of a 16-byte window belong to an n-gram of n bytes.
#[derive(Clone, Copy)]
struct WindowMasks {
    lo: u64,
    hi: u64,
}

impl WindowMasks {
    fn new(n: usize) -> Self {
        let bits = |b: usize| if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        WindowMasks {
            lo: bits(8 * n.min(8)),
            hi: bits(8 * n.saturating_sub(8)),
        }
    }

    /// The halves of the n-gram at `i`.
    #[inline(always)]
    fn halves(self, bytes: &[u8], i: usize) -> (u64, u64) {
        let half = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        (half(i) & self.lo, half(i + 8) & self.hi)
    }

    #[inline(always)]
    fn key(self, bytes: &[u8], i: usize) -> u128 {
        let (lo, hi) = self.halves(bytes, i);
        u128::from(lo) | u128::from(hi) << 64
    }

    /// The counter of the n-gram at `i`, as the vector path computes it.
    #[inline(always)]
    fn cell(self, bytes: &[u8], i: usize, shift: u32) -> u32 {
        let (lo, hi) = self.halves(bytes, i);
        ((lo.wrapping_mul(MUL_LO) ^ hi.wrapping_mul(MUL_HI)) >> shift) as u32
    }
}

/// Whether the CPU runs the vector path.
fn has_avx512_vbmi() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{MUL_HI, MUL_LO, WindowMasks, saturated};

    /// Byte `8j + b` of the first index vector is `j + b`: lane j of a permuted 64-byte load
    /// from `i` then holds the 8 bytes at `i + j`. Offsets 8 and 16 give the other halves.
    const fn window_index(offset: u8) -> [u8; 64] {
        let mut idx = [0u8; 64];
        let mut k = 0;
        while k < 64 {
            idx[k] = (k / 8) as u8 + (k % 8) as u8 + offset;
            k += 1;
        }
        idx
    }
    static INDEX: [[u8; 64]; 3] = [window_index(0), window_index(8), window_index(16)];

    /// Appends to `out` the counter of each of the `len` n-grams of `bytes`, 16 at a time.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F, BW, DQ and VBMI; `bytes` has 64 readable bytes from `len - 16`
    /// on; `out` has room for `len` more entries.
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi")]
    pub(super) unsafe fn cells_of_windows(
        bytes: &[u8],
        len: usize,
        shift: u32,
        masks: WindowMasks,
        out: &mut Vec<u32>,
    ) {
        debug_assert!(out.capacity() - out.len() >= len && bytes.len() >= len + 48);
        // SAFETY: the index tables are 64 bytes each.
        let index: [__m512i; 3] =
            std::array::from_fn(|k| unsafe { _mm512_loadu_si512(INDEX[k].as_ptr().cast()) });
        let (lo_mask, hi_mask) = (
            _mm512_set1_epi64(masks.lo as i64),
            _mm512_set1_epi64(masks.hi as i64),
        );
        let (mul_lo, mul_hi) = (
            _mm512_set1_epi64(MUL_LO as i64),
            _mm512_set1_epi64(MUL_HI as i64),
        );
        let count = _mm_cvtsi32_si128(shift as i32);
        // The counters of the 8 n-grams whose halves are at index `lo` and `hi`.
        let cells8 = |v: __m512i, lo: __m512i, hi: __m512i| {
            let lo = _mm512_and_si512(_mm512_permutexvar_epi8(lo, v), lo_mask);
            let hi = _mm512_and_si512(_mm512_permutexvar_epi8(hi, v), hi_mask);
            let h = _mm512_xor_si512(
                _mm512_mullo_epi64(lo, mul_lo),
                _mm512_mullo_epi64(hi, mul_hi),
            );
            _mm512_cvtepi64_epi32(_mm512_srl_epi64(h, count))
        };
        let blocks = len / 16;
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u32>();
        for b in 0..blocks {
            // SAFETY: 64 bytes from 16b are readable (the padding); 16 entries from 16b fit.
            unsafe {
                let v = _mm512_loadu_si512(bytes.as_ptr().add(16 * b).cast());
                let first = cells8(v, index[0], index[1]);
                let second = cells8(v, index[1], index[2]);
                _mm256_storeu_si256(dst.add(16 * b).cast(), first);
                _mm256_storeu_si256(dst.add(16 * b + 8).cast(), second);
            }
        }
        // SAFETY: 16 * blocks entries were written.
        unsafe { out.set_len(out.len() + 16 * blocks) };
        out.extend((16 * blocks..len).map(|i| masks.cell(bytes, i, shift)));
    }

    /// Appends to `out` the positions `i` whose counter `cell_of[i]` is saturated, 16 tested
    /// with one gather.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F; every counter is a cell of `cells`; `out` has room for
    /// `cell_of.len() + 16` more entries.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn kept_positions(cell_of: &[u32], cells: &[u64], out: &mut Vec<u32>) {
        let len = cell_of.len();
        debug_assert!(out.capacity() - out.len() >= len + 16);
        let words = cells.as_ptr().cast::<i32>();
        let (one, fifteen) = (_mm512_set1_epi32(1), _mm512_set1_epi32(15));
        let mut pos = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let sixteen = _mm512_set1_epi32(16);
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u32>();
        let mut kept = 0;
        for b in 0..len / 16 {
            // SAFETY: 16 counters from 16b; each is below cells.len() * 32, so its 32-bit word
            // (c >> 4) is within `cells`; the store has room for 16 entries past `kept`.
            unsafe {
                let c = _mm512_loadu_si512(cell_of.as_ptr().add(16 * b).cast());
                let w = _mm512_i32gather_epi32::<4>(_mm512_srli_epi32::<4>(c), words);
                let high =
                    _mm512_add_epi32(_mm512_slli_epi32::<1>(_mm512_and_si512(c, fifteen)), one);
                let m = _mm512_test_epi32_mask(_mm512_srlv_epi32(w, high), one);
                _mm512_storeu_si512(dst.add(kept).cast(), _mm512_maskz_compress_epi32(m, pos));
                kept += m.count_ones() as usize;
            }
            pos = _mm512_add_epi32(pos, sixteen);
        }
        // SAFETY: the first `kept` entries were written.
        unsafe { out.set_len(out.len() + kept) };
        let tail = len / 16 * 16..len;
        out.extend(
            tail.filter(|&i| saturated(cells, cell_of[i] as usize))
                .map(|i| i as u32),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of one-byte ids: mostly unique n-grams, repeats, lengths around the 16-key blocks.
    fn texts() -> Vec<Vec<u8>> {
        let mut x = 1u64;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        };
        let mut texts = Vec::new();
        for len in [1, 15, 16, 17, 31, 33, 1000, 5003] {
            let random: Vec<u8> = (0..len).map(|_| next()).collect();
            let mut repeats = b"the same words again and ".repeat(len / 25 + 1);
            repeats.truncate(len);
            let mixed: Vec<u8> = random
                .iter()
                .zip(&repeats)
                .map(|(&r, &p)| if r < 64 { r } else { p })
                .collect();
            texts.extend([random, repeats, mixed]);
        }
        texts
    }

    /// The vector path keeps the keys that the scalar steps keep, in order: every key that
    /// occurs more than once, and some that occur once.
    #[test]
    fn vector_path_keeps_every_repeat() {
        let mut filter = RepeatFilter::default();
        for text in texts() {
            for n in [1, 2, 7, 8, 9, 10, 16] {
                if text.len() < n {
                    continue;
                }
                let len = text.len() + 1 - n;
                let mut padded = text.clone();
                padded.extend_from_slice(&[0; BYTES_PADDING]);
                let masks = WindowMasks::new(n);
                let keys: Vec<u128> = (0..len).map(|i| masks.key(&padded, i)).collect();
                for (i, w) in text.windows(n).enumerate() {
                    let mut b = [0u8; 16];
                    b[..n].copy_from_slice(w);
                    assert_eq!(keys[i], u128::from_le_bytes(b));
                }
                // The scalar steps: every counter, then the keys whose counter saturated.
                let shift = filter.start(len);
                let cells: Vec<u32> = (0..len).map(|i| masks.cell(&padded, i, shift)).collect();
                for &c in &cells {
                    mark(&mut filter.cells, c as usize);
                }
                let want: Vec<u128> = (0..len)
                    .filter(|&i| saturated(&filter.cells, cells[i] as usize))
                    .map(|i| keys[i])
                    .collect();
                for key in &keys {
                    if keys.iter().filter(|&k| k == key).count() > 1 {
                        assert!(want.contains(key), "n={n} len={len}");
                    }
                }
                let mut got = Vec::new();
                match filter.possible_repeat_bytes(&padded, n, len, &mut got) {
                    Some(unique) => assert_eq!((unique, got), (len - want.len(), want)),
                    None => assert!(!has_avx512_vbmi()),
                }
            }
        }
    }
}
