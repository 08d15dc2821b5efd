//! The dedup keys of many short byte strings: the first 16 bytes of `blake3::hash`, sixteen
//! messages at once (one per 32-bit lane of AVX-512 vectors) when they fit one BLAKE3 chunk.
//! MinHash's band keys are millions of ~100-byte messages a run, and hashing them one by one
//! (one compression per 64-byte block, each a long dependency chain) was a sixth of MinHash's
//! time on short documents. The keys are the same bits either way (they are saved for resume).

/// Messages up to one chunk are hashed in lanes; longer ones one by one.
const CHUNK: usize = 1024;

const IV: [u32; 8] = [
    0x6A09_E667,
    0xBB67_AE85,
    0x3C6E_F372,
    0xA54F_F53A,
    0x510E_527F,
    0x9B05_688C,
    0x1F83_D9AB,
    0x5BE0_CD19,
];
const MSG_PERMUTATION: [usize; 16] = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];

/// Which message word each round reads where round 0 reads word `k`: the permutation applied
/// round after round, so that the words themselves never move.
const SCHEDULE: [[usize; 16]; 7] = {
    let mut schedule = [[0; 16]; 7];
    let mut k = 0;
    while k < 16 {
        schedule[0][k] = k;
        k += 1;
    }
    let mut round = 1;
    while round < 7 {
        let mut k = 0;
        while k < 16 {
            schedule[round][k] = schedule[round - 1][MSG_PERMUTATION[k]];
            k += 1;
        }
        round += 1;
    }
    schedule
};
const CHUNK_START: u32 = 1;
const CHUNK_END: u32 = 2;
const ROOT: u32 = 8;

/// The 128-bit key of a byte string (dedup keys, selector groups): the first 16 bytes of its
/// BLAKE3 hash, little-endian.
pub(crate) fn key_of_bytes(b: &[u8]) -> u128 {
    u128::from_le_bytes(
        blake3::hash(b).as_bytes()[..16]
            .try_into()
            .expect("16 bytes"),
    )
}

/// Appends the key of each message ([`key_of_bytes`]) to `out`, in order.
pub(crate) fn keys_of_messages(messages: &[&[u8]], out: &mut Vec<u128>) {
    out.reserve(messages.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
    {
        for group in messages.chunks(16) {
            if group.iter().all(|m| m.len() <= CHUNK) {
                // SAFETY: the CPU has AVX-512 F and BW, checked above.
                let keys = unsafe { hash16(group) };
                out.extend_from_slice(&keys[..group.len()]);
            } else {
                out.extend(group.iter().map(|m| key_of_bytes(m)));
            }
        }
        return;
    }
    out.extend(messages.iter().map(|m| key_of_bytes(m)));
}

/// BLAKE3 (a single chunk, so every block compresses with chunk counter 0) of up to sixteen
/// messages of at most [`CHUNK`] bytes: lane `l` holds message `l`; a lane past its last block
/// keeps its chaining value, which after the last (root) block is the hash.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn hash16(messages: &[&[u8]]) -> [u128; 16] {
    use std::arch::x86_64::*;
    let blocks_of = |m: &[u8]| m.len().div_ceil(64).max(1);
    let max_blocks = messages.iter().map(|m| blocks_of(m)).max().unwrap_or(1);
    let mut cv: [__m512i; 8] = std::array::from_fn(|k| _mm512_set1_epi32(IV[k] as i32));
    let mut rows = [[0u32; 16]; 16];
    for block in 0..max_blocks {
        let (mut block_len, mut flags) = ([0u32; 16], [0u32; 16]);
        let mut active = 0u16;
        for (lane, (row, m)) in rows.iter_mut().zip(messages).enumerate() {
            let blocks = blocks_of(m);
            if block >= blocks {
                continue;
            }
            active |= 1 << lane;
            let block_bytes = &m[64 * block..];
            let bytes = dj_udfs::lanes::masked_row(block_bytes);
            // SAFETY: `row` is 64 writable bytes; unaligned store.
            unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), bytes) };
            block_len[lane] = block_bytes.len().min(64) as u32;
            flags[lane] = if block == 0 { CHUNK_START } else { 0 }
                | if block == blocks - 1 {
                    CHUNK_END | ROOT
                } else {
                    0
                };
        }
        let words = dj_udfs::lanes::transpose16(&rows);
        // SAFETY: 64 readable bytes each; unaligned loads.
        let (block_len, flags) = unsafe {
            (
                _mm512_loadu_si512(block_len.as_ptr().cast()),
                _mm512_loadu_si512(flags.as_ptr().cast()),
            )
        };
        let state = compress(&cv, words, block_len, flags);
        for (k, cv) in cv.iter_mut().enumerate() {
            *cv = _mm512_mask_blend_epi32(active, *cv, _mm512_xor_si512(state[k], state[k + 8]));
        }
    }
    let mut words = [[0u32; 16]; 4];
    for (k, out) in words.iter_mut().enumerate() {
        // SAFETY: 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), cv[k]) };
    }
    std::array::from_fn(|lane| {
        (0..4).fold(0u128, |key, k| key | u128::from(words[k][lane]) << (32 * k))
    })
}

/// BLAKE3's compression function in sixteen lanes (block counter 0): the full 16-word state.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn compress(
    cv: &[std::arch::x86_64::__m512i; 8],
    m: [std::arch::x86_64::__m512i; 16],
    block_len: std::arch::x86_64::__m512i,
    flags: std::arch::x86_64::__m512i,
) -> [std::arch::x86_64::__m512i; 16] {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_si512();
    let iv = |i: usize| _mm512_set1_epi32(IV[i] as i32);
    let mut v = [
        cv[0],
        cv[1],
        cv[2],
        cv[3],
        cv[4],
        cv[5],
        cv[6],
        cv[7],
        iv(0),
        iv(1),
        iv(2),
        iv(3),
        zero,
        zero,
        block_len,
        flags,
    ];
    let g =
        |v: &mut [__m512i; 16], a: usize, b: usize, c: usize, d: usize, x: __m512i, y: __m512i| {
            v[a] = _mm512_add_epi32(_mm512_add_epi32(v[a], v[b]), x);
            v[d] = _mm512_ror_epi32::<16>(_mm512_xor_si512(v[d], v[a]));
            v[c] = _mm512_add_epi32(v[c], v[d]);
            v[b] = _mm512_ror_epi32::<12>(_mm512_xor_si512(v[b], v[c]));
            v[a] = _mm512_add_epi32(_mm512_add_epi32(v[a], v[b]), y);
            v[d] = _mm512_ror_epi32::<8>(_mm512_xor_si512(v[d], v[a]));
            v[c] = _mm512_add_epi32(v[c], v[d]);
            v[b] = _mm512_ror_epi32::<7>(_mm512_xor_si512(v[b], v[c]));
        };
    for s in &SCHEDULE {
        g(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length up to two chunks, in full and partial groups of lanes, and messages of
    /// mixed block counts side by side, give `blake3::hash`'s first 16 bytes.
    #[test]
    fn lanes_give_blake3() {
        let mut state = 3u64;
        let mut byte = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        };
        let messages: Vec<Vec<u8>> = (0..=2 * CHUNK + 3)
            .filter(|n| *n <= 200 || n % 61 == 0 || [1023, 1024, 1025, 2048].contains(n))
            .map(|n| (0..n).map(|_| byte()).collect())
            .collect();
        let slices: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let want: Vec<u128> = slices.iter().map(|m| key_of_bytes(m)).collect();
        let mut got = Vec::new();
        keys_of_messages(&slices, &mut got);
        assert_eq!(got, want);
        // Groups in another order (other lengths side by side), and a partial group.
        let mut reversed = slices.clone();
        reversed.reverse();
        got.clear();
        keys_of_messages(&reversed[..reversed.len() - 5], &mut got);
        let want: Vec<u128> = reversed[..reversed.len() - 5]
            .iter()
            .map(|m| key_of_bytes(m))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            key_of_bytes(b""),
            u128::from_le_bytes(blake3::hash(b"").as_bytes()[..16].try_into().unwrap())
        );
    }
}
