//! Helpers for hashing sixteen short messages at once, one per 32-bit lane of AVX-512 vectors
//! (MinHash's SHA-1 of shingles, the dedup keys' BLAKE3 of MinHash bands): messages are laid out
//! one block per row and turned into one vector per message word.

/// The 16x16 transpose of `rows`: vector `j` holds word `j` of every row, lane `i` from row `i`.
///
/// # Safety
///
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub fn transpose16(rows: &[[u32; 16]; 16]) -> [std::arch::x86_64::__m512i; 16] {
    use std::arch::x86_64::*;
    // SAFETY: each row is 64 readable bytes; unaligned loads.
    let r: [__m512i; 16] =
        std::array::from_fn(|i| unsafe { _mm512_loadu_si512(rows[i].as_ptr().cast()) });
    // Within each 128-bit lane L: t[2i], t[2i+1] interleave rows 2i and 2i+1 (words 4L..4L+1,
    // then 4L+2..4L+3); u[4g + c] holds word 4L + c of rows 4g..4g+3.
    let t: [__m512i; 16] = std::array::from_fn(|k| {
        let (a, b) = (r[k & !1], r[k | 1]);
        if k % 2 == 0 {
            _mm512_unpacklo_epi32(a, b)
        } else {
            _mm512_unpackhi_epi32(a, b)
        }
    });
    let u: [__m512i; 16] = std::array::from_fn(|k| {
        let (g, c) = (k / 4, k % 4);
        let (a, b) = (t[4 * g + c / 2], t[4 * g + 2 + c / 2]);
        if c % 2 == 0 {
            _mm512_unpacklo_epi64(a, b)
        } else {
            _mm512_unpackhi_epi64(a, b)
        }
    });
    // Then a 4x4 transpose of 128-bit lanes per c: word 4L + c gets lane L of u[4g + c] as its
    // lane g.
    let mut w = [_mm512_setzero_si512(); 16];
    for c in 0..4 {
        let x0 = _mm512_shuffle_i32x4::<0x44>(u[c], u[4 + c]);
        let x1 = _mm512_shuffle_i32x4::<0xEE>(u[c], u[4 + c]);
        let y0 = _mm512_shuffle_i32x4::<0x44>(u[8 + c], u[12 + c]);
        let y1 = _mm512_shuffle_i32x4::<0xEE>(u[8 + c], u[12 + c]);
        w[c] = _mm512_shuffle_i32x4::<0x88>(x0, y0);
        w[4 + c] = _mm512_shuffle_i32x4::<0xDD>(x0, y0);
        w[8 + c] = _mm512_shuffle_i32x4::<0x88>(x1, y1);
        w[12 + c] = _mm512_shuffle_i32x4::<0xDD>(x1, y1);
    }
    w
}

/// Up to 64 bytes of `bytes` (its first 64), zero-filled to a 64-byte vector: the load is
/// masked to the slice, so nothing past it is read.
///
/// # Safety
///
/// The CPU must have AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub fn masked_row(bytes: &[u8]) -> std::arch::x86_64::__m512i {
    let len = bytes.len().min(64);
    let mask = if len == 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    // SAFETY: the mask covers `len` bytes of `bytes`; masked-off bytes are not accessed.
    unsafe { std::arch::x86_64::_mm512_maskz_loadu_epi8(mask, bytes.as_ptr().cast()) }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::transpose16;

    #[test]
    fn transpose_puts_word_j_of_row_i_in_lane_i_of_vector_j() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        let rows: [[u32; 16]; 16] =
            std::array::from_fn(|i| std::array::from_fn(|j| (i * 100 + j) as u32));
        // SAFETY: the CPU has AVX-512 F.
        let w = unsafe { transpose16(&rows) };
        for (j, v) in w.iter().enumerate() {
            let mut lanes = [0u32; 16];
            // SAFETY: 64 writable bytes.
            unsafe { std::arch::x86_64::_mm512_storeu_si512(lanes.as_mut_ptr().cast(), *v) };
            let want: [u32; 16] = std::array::from_fn(|i| (i * 100 + j) as u32);
            assert_eq!(lanes, want, "vector {j}");
        }
    }
}
