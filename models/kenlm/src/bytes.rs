//! Bounds-checked little-endian reads from model bytes (memory-mapped or heap). Reads
//! past the end yield zeros instead of panicking, so a corrupt file gives wrong scores
//! at worst, never undefined behaviour; sizes are validated when a model is opened.

#[inline]
pub(crate) fn u64_at(data: &[u8], off: usize) -> u64 {
    match data.get(off..off.wrapping_add(8)) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        None => 0,
    }
}

#[inline]
pub(crate) fn u32_at(data: &[u8], off: usize) -> u32 {
    match data.get(off..off.wrapping_add(4)) {
        Some(b) => u32::from_le_bytes(b.try_into().expect("4 bytes")),
        None => 0,
    }
}

#[inline]
pub(crate) fn f32_at(data: &[u8], off: usize) -> f32 {
    f32::from_bits(u32_at(data, off))
}

/// The 64 bits starting at `bit_off`, shifted so bit `bit_off` is bit 0 (kenlm's
/// `ReadOff(..) >> (bit_off & 7)`); missing bytes past the end read as zero.
#[inline]
pub(crate) fn bits_at(data: &[u8], bit_off: u64) -> u64 {
    let byte = usize::try_from(bit_off >> 3).unwrap_or(usize::MAX);
    let word = match data.get(byte..byte.wrapping_add(8)) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        None => {
            let mut buf = [0u8; 8];
            if let Some(rest) = data.get(byte..) {
                buf[..rest.len()].copy_from_slice(rest);
            }
            u64::from_le_bytes(buf)
        }
    };
    word >> (bit_off & 7)
}

/// Reads an unsigned integer of `mask`'s width (at most 57 bits) at `bit_off`.
#[inline]
pub(crate) fn int_at(data: &[u8], bit_off: u64, mask: u64) -> u64 {
    bits_at(data, bit_off) & mask
}

/// Number of bits needed to store `max_value` (kenlm's `RequiredBits`).
pub(crate) fn required_bits(max_value: u64) -> u8 {
    (64 - max_value.leading_zeros()) as u8
}

/// Mask with the low `bits` bits set.
pub(crate) fn mask_of(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Rounds up to a multiple of 8 (kenlm's `ALIGN8`).
pub(crate) fn align8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

/// Interpolation search for `key` in the sorted keys at indices `(before, after)`
/// exclusive, whose neighbours hold `before_v` and `after_v` (kenlm's
/// `BoundedSortedUniformFind`). `pivot` picks an offset in `0..width` from
/// `(key - before_v, after_v - before_v, width)`; any in-range pivot finds the same
/// entry in valid data, so out-of-range guesses are clamped rather than trusted.
#[inline]
pub(crate) fn bounded_uniform_find(
    mut before: u64,
    mut before_v: u64,
    mut after: u64,
    mut after_v: u64,
    key: u64,
    pivot: impl Fn(u64, u64, u64) -> u64,
    at: impl Fn(u64) -> u64,
) -> Option<u64> {
    while after.wrapping_sub(before) > 1 && after.wrapping_sub(before) != u64::MAX {
        let width = after.wrapping_sub(before) - 1;
        let guess = pivot(
            key.wrapping_sub(before_v),
            after_v.wrapping_sub(before_v),
            width,
        );
        let p = before.wrapping_add(1).wrapping_add(guess.min(width - 1));
        let mid = at(p);
        if mid < key {
            before = p;
            before_v = mid;
        } else if mid > key {
            after = p;
            after_v = mid;
        } else {
            return Some(p);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_reads() {
        let data = [0b1010_1100u8, 0xff, 0x01];
        assert_eq!(int_at(&data, 2, 0b1111), 0b1011);
        assert_eq!(int_at(&data, 8, 0x1ff), 0x1ff);
        assert_eq!(int_at(&data, 100, 0xff), 0);
        assert_eq!(required_bits(0), 0);
        assert_eq!(required_bits(1), 1);
        assert_eq!(required_bits(255), 8);
        assert_eq!(required_bits(256), 9);
    }

    #[test]
    fn uniform_find() {
        let keys = [3u64, 9, 10, 40, 41, 90];
        let at = |i: u64| keys[i as usize];
        let pivot =
            |off: u64, range: u64, width: u64| off.wrapping_mul(width) / range.saturating_add(1);
        for (i, &k) in keys.iter().enumerate() {
            let found = bounded_uniform_find(u64::MAX, 0, 6, 100, k, pivot, at);
            assert_eq!(found, Some(i as u64));
        }
        assert_eq!(
            bounded_uniform_find(u64::MAX, 0, 6, 100, 11, pivot, at),
            None
        );
    }
}
