//! [`sha1_hash32`](super::sha1_hash32) of sixteen short messages at once, one per 32-bit lane of
//! AVX-512 vectors. Most MinHash shingles are a few words: one padded 64-byte block each, and
//! hashing them one by one (even with the SHA extensions, whose rounds are one long dependency
//! chain) was a fifth of MinHash's time on long texts. Sixteen independent messages keep the
//! vector units busy instead: about 50 instructions per block.

/// Messages of at most this many bytes fit one padded block.
pub(crate) const MAX_LEN: usize = 55;

/// Up to sixteen one-block messages: `rows[lane]` is the padded block of message `lane` as
/// sixteen big-endian words, transposed into one vector per word when hashed.
pub(crate) struct Sha1x16 {
    rows: Rows,
    len: usize,
}

#[repr(C, align(64))]
struct Rows([[u32; 16]; 16]);

impl Sha1x16 {
    /// Lanes for hashing, if this CPU has AVX-512 F and BW (checked at run time).
    pub(crate) fn new() -> Option<Sha1x16> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            return Some(Sha1x16 {
                rows: Rows([[0; 16]; 16]),
                len: 0,
            });
        }
        None
    }

    /// Adds a message of at most [`MAX_LEN`] bytes; when all sixteen lanes are taken, hashes them
    /// and appends the hashes to `out` (in the order the messages came).
    pub(crate) fn push(&mut self, data: &[u8], out: &mut Vec<u32>) {
        assert!(data.len() <= MAX_LEN, "a one-block message");
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `new` only makes lanes when the CPU has AVX-512 F and BW.
        unsafe {
            pad_block(data, &mut self.rows.0[self.len])
        };
        self.len += 1;
        if self.len == 16 {
            self.flush(out);
        }
    }

    /// Hashes the messages added since the last flush and appends their hashes to `out`.
    pub(crate) fn flush(&mut self, out: &mut Vec<u32>) {
        if self.len == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `new` only makes lanes when the CPU has AVX-512 F and BW.
            let hashes = unsafe { compress16(&self.rows.0) };
            out.extend_from_slice(&hashes[..self.len]);
        }
        self.len = 0;
    }
}

/// Writes the SHA-1 block of `data` (at most [`MAX_LEN`] bytes) into `row` as big-endian
/// words: the bytes, 0x80, zeros, and the length in bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn pad_block(data: &[u8], row: &mut [u32; 16]) {
    use std::arch::x86_64::*;
    let len = data.len().min(MAX_LEN);
    let bytes = crate::lanes::masked_row(&data[..len]);
    let padded = _mm512_mask_set1_epi8(bytes, 1u64 << len, 0x80u8 as i8);
    // Reverse the bytes of each 32-bit word.
    let swap = _mm512_set_epi8(
        60, 61, 62, 63, 56, 57, 58, 59, 52, 53, 54, 55, 48, 49, 50, 51, 44, 45, 46, 47, 40, 41, 42,
        43, 36, 37, 38, 39, 32, 33, 34, 35, 28, 29, 30, 31, 24, 25, 26, 27, 20, 21, 22, 23, 16, 17,
        18, 19, 12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
    );
    let words = _mm512_shuffle_epi8(padded, swap);
    // Word 15 is the low half of the 64-bit bit length (word 14, its high half, stays zero).
    let words = _mm512_mask_set1_epi32(words, 1 << 15, (len * 8) as i32);
    // SAFETY: `row` is 64 writable bytes; unaligned store.
    unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), words) };
}

/// SHA-1 of the sixteen one-block messages: for each, the first four digest bytes read as a
/// little-endian u32.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn compress16(rows: &[[u32; 16]; 16]) -> [u32; 16] {
    use std::arch::x86_64::*;
    const H: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    const K: [u32; 4] = [0x5A82_7999, 0x6ED9_EBA1, 0x8F1B_BCDC, 0xCA62_C1D6];
    let set = |x: u32| _mm512_set1_epi32(x as i32);
    let mut w = crate::lanes::transpose16(rows);
    let [mut a, mut b, mut c, mut d, mut e] = H.map(set);
    for t in 0..80 {
        let wt = if t < 16 {
            w[t]
        } else {
            let x = _mm512_ternarylogic_epi32::<0x96>(
                w[(t - 3) & 15],
                w[(t - 8) & 15],
                w[(t - 14) & 15],
            );
            let x = _mm512_rol_epi32::<1>(_mm512_xor_si512(x, w[t & 15]));
            w[t & 15] = x;
            x
        };
        let f = match t / 20 {
            0 => _mm512_ternarylogic_epi32::<0xCA>(b, c, d), // b ? c : d
            2 => _mm512_ternarylogic_epi32::<0xE8>(b, c, d), // majority
            _ => _mm512_ternarylogic_epi32::<0x96>(b, c, d), // parity
        };
        let k = set(K[t / 20]);
        let tmp = _mm512_add_epi32(
            _mm512_add_epi32(_mm512_rol_epi32::<5>(a), f),
            _mm512_add_epi32(e, _mm512_add_epi32(k, wt)),
        );
        e = d;
        d = c;
        c = _mm512_rol_epi32::<30>(b);
        b = a;
        a = tmp;
    }
    let h0 = _mm512_add_epi32(a, set(H[0]));
    let mut out = [0u32; 16];
    // SAFETY: 64 writable bytes; unaligned store.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h0) };
    // The digest's first 4 bytes are h0 big-endian; read little-endian.
    out.map(u32::swap_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::minhash::sha1_hash32;

    /// Every length from 0 to 55 bytes, in lanes filled fully and partly, hashes as the scalar
    /// SHA-1 does.
    #[test]
    fn lanes_hash_as_scalar_sha1() {
        let Some(mut lanes) = Sha1x16::new() else {
            eprintln!("no AVX-512 here: nothing to compare");
            return;
        };
        let messages: Vec<Vec<u8>> = (0..=MAX_LEN)
            .map(|n| (0..n).map(|i| (i * 37 + n) as u8).collect())
            .chain([b"abc".to_vec(), "ünïcödé shingle".as_bytes().to_vec()])
            .collect();
        let want: Vec<u32> = messages.iter().map(|m| sha1_hash32(m)).collect();
        assert_eq!(sha1_hash32(b"abc"), 0x363e_99a9);
        let mut got = Vec::new();
        for m in &messages {
            lanes.push(m, &mut got);
        }
        lanes.flush(&mut got);
        assert_eq!(got, want);
    }
}
