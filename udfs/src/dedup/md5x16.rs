//! MD5 of many messages at once, sixteen at a time, one per 32-bit lane of AVX-512 vectors
//! (`document_deduplicator` hashes every text: one MD5 chain is serial, about 5 cycles a byte,
//! while sixteen independent chains keep the vector units busy). Each lane takes the next message
//! when its own ends, so messages of any lengths share the lanes.

use md5::{Digest, Md5};

const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// MD5's round constants, floor(|sin(i + 1)| * 2^32).
const K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// The MD5 digests of `messages`, in order.
pub(crate) fn md5_many(messages: &[&[u8]]) -> Vec<[u8; 16]> {
    #[cfg(target_arch = "x86_64")]
    if messages.len() >= 8 && std::arch::is_x86_feature_detected!("avx512f") {
        return Lanes::run(messages);
    }
    messages.iter().map(|m| Md5::digest(m).into()).collect()
}

/// The blocks of one message: whole blocks straight from it, then its padded tail.
struct Message<'a> {
    index: usize,
    body: &'a [u8],
    tail: [u8; 128],
    /// Blocks handed out so far, of `blocks`.
    next: usize,
    blocks: usize,
}

impl<'a> Message<'a> {
    fn new(index: usize, message: &'a [u8]) -> Message<'a> {
        let whole = message.len() / 64;
        let rest = &message[whole * 64..];
        let mut tail = [0u8; 128];
        tail[..rest.len()].copy_from_slice(rest);
        tail[rest.len()] = 0x80;
        let tail_blocks = if rest.len() < 56 { 1 } else { 2 };
        let len_at = tail_blocks * 64 - 8;
        tail[len_at..len_at + 8].copy_from_slice(&(message.len() as u64 * 8).to_le_bytes());
        Message {
            index,
            body: message,
            tail,
            next: 0,
            blocks: whole + tail_blocks,
        }
    }

    fn block(&self, k: usize) -> &[u8] {
        let whole = self.body.len() / 64;
        if k < whole {
            &self.body[k * 64..k * 64 + 64]
        } else {
            &self.tail[(k - whole) * 64..(k - whole) * 64 + 64]
        }
    }
}

#[cfg(target_arch = "x86_64")]
struct Lanes;

#[cfg(target_arch = "x86_64")]
impl Lanes {
    fn run(messages: &[&[u8]]) -> Vec<[u8; 16]> {
        let mut digests = vec![[0u8; 16]; messages.len()];
        let mut pending = messages.iter().enumerate();
        let mut lanes: [Option<Message<'_>>; 16] = std::array::from_fn(|_| None);
        let mut state = [[0u32; 16]; 4];
        let mut words = [[0u32; 16]; 16];
        loop {
            let mut active = false;
            for (lane, slot) in lanes.iter_mut().enumerate() {
                if slot.as_ref().is_none_or(|m| m.next == m.blocks) {
                    if let Some(m) = slot.take() {
                        digests[m.index] = digest(&state, lane);
                    }
                    if let Some((i, msg)) = pending.next() {
                        *slot = Some(Message::new(i, msg));
                        for (s, init) in state.iter_mut().zip(INIT) {
                            s[lane] = init;
                        }
                    }
                }
                let Some(m) = slot.as_mut() else { continue };
                active = true;
                for (t, w) in m.block(m.next).chunks_exact(4).enumerate() {
                    words[t][lane] = u32::from_le_bytes(w.try_into().expect("4 bytes"));
                }
                m.next += 1;
            }
            if !active {
                return digests;
            }
            // SAFETY: `md5_many` only comes here when the CPU has AVX-512 F.
            unsafe { compress16(&mut state, &words) };
        }
    }
}

/// Lane `lane`'s digest: the state words as little-endian bytes.
fn digest(state: &[[u32; 16]; 4], lane: usize) -> [u8; 16] {
    let mut d = [0u8; 16];
    for (i, s) in state.iter().enumerate() {
        d[4 * i..4 * i + 4].copy_from_slice(&s[lane].to_le_bytes());
    }
    d
}

/// One MD5 block per lane: `words[t][lane]` is word `t` of lane `lane`'s block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn compress16(state: &mut [[u32; 16]; 4], words: &[[u32; 16]; 16]) {
    use std::arch::x86_64::*;
    const S: [[u32; 4]; 4] = [
        [7, 12, 17, 22],
        [5, 9, 14, 20],
        [4, 11, 16, 23],
        [6, 10, 15, 21],
    ];
    // SAFETY (both closures): 16 u32 = 64 bytes; unaligned loads and stores.
    let load = |v: &[u32; 16]| unsafe { _mm512_loadu_si512(v.as_ptr().cast()) };
    let m: [__m512i; 16] = std::array::from_fn(|t| load(&words[t]));
    let [a0, b0, c0, d0] = [0, 1, 2, 3].map(|i| load(&state[i]));
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    for i in 0..64 {
        let (f, g) = match i / 16 {
            0 => (_mm512_ternarylogic_epi32::<0xCA>(b, c, d), i), // b ? c : d
            1 => (_mm512_ternarylogic_epi32::<0xE4>(b, c, d), (5 * i + 1) % 16), // d ? b : c
            2 => (_mm512_ternarylogic_epi32::<0x96>(b, c, d), (3 * i + 5) % 16), // b ^ c ^ d
            _ => (_mm512_ternarylogic_epi32::<0x39>(b, c, d), (7 * i) % 16), // c ^ (b | !d)
        };
        let f = _mm512_add_epi32(
            _mm512_add_epi32(f, a),
            _mm512_add_epi32(_mm512_set1_epi32(K[i] as i32), m[g]),
        );
        a = d;
        d = c;
        c = b;
        b = _mm512_add_epi32(
            b,
            _mm512_rolv_epi32(f, _mm512_set1_epi32(S[i / 16][i % 4] as i32)),
        );
    }
    for (s, v) in state.iter_mut().zip([
        _mm512_add_epi32(a, a0),
        _mm512_add_epi32(b, b0),
        _mm512_add_epi32(c, c0),
        _mm512_add_epi32(d, d0),
    ]) {
        // SAFETY: 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages of every length around the block and padding edges, in batches large and small,
    /// hash as the scalar MD5 does.
    #[test]
    fn lanes_hash_as_scalar_md5() {
        #[cfg(target_arch = "x86_64")]
        let lanes = std::arch::is_x86_feature_detected!("avx512f");
        #[cfg(not(target_arch = "x86_64"))]
        let lanes = false;
        if !lanes {
            eprintln!("no AVX-512 here: only the scalar MD5 compared with itself");
        }
        let long: Vec<u8> = (0..5000u32).map(|i| (i * 31 + 7) as u8).collect();
        let mut messages: Vec<&[u8]> = (0..=200).map(|n| &long[..n]).collect();
        messages.extend([&long[..], &long[..1000], b"".as_slice(), &long[3..4003]]);
        for batch in [&messages[..], &messages[..9], &messages[..3]] {
            let want: Vec<[u8; 16]> = batch.iter().map(|m| Md5::digest(m).into()).collect();
            assert_eq!(md5_many(batch), want);
        }
        let d = md5_many(&[b"abc".as_slice(); 8]);
        assert_eq!(d[7][..4], [0x90, 0x01, 0x50, 0x98]);
    }
}
