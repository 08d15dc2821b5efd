//! The fixed header of KenLM binary files: sanity block (magic string + test values that
//! pin endianness and type sizes), model parameters, and per-order n-gram counts.

use crate::bytes::{align8, u32_at, u64_at};

const MAGIC: &[u8] = b"mmap lm http://kheafield.com/code format version 5\n\0\0";
const MAGIC_BEFORE_VERSION: &[u8] = b"mmap lm http://kheafield.com/code format version";
const MAGIC_INCOMPLETE: &[u8] = b"mmap lm http://kheafield.com/code incomplete\n";
/// `sizeof(Sanity)`: magic padded to 56 bytes, 3 floats, 3 `u32`, one `u64`.
pub(crate) const SANITY_SIZE: usize = 88;
/// `sizeof(FixedWidthParameters)`.
const FIXED_SIZE: usize = 20;

/// The sanity block a compatible (little-endian, 64-bit) kenlm writes.
fn reference_sanity() -> [u8; SANITY_SIZE] {
    let mut s = [0u8; SANITY_SIZE];
    s[..MAGIC.len()].copy_from_slice(MAGIC);
    s[56..60].copy_from_slice(&0.0f32.to_le_bytes());
    s[60..64].copy_from_slice(&1.0f32.to_le_bytes());
    s[64..68].copy_from_slice(&(-0.5f32).to_le_bytes());
    s[68..72].copy_from_slice(&1u32.to_le_bytes());
    s[72..76].copy_from_slice(&u32::MAX.to_le_bytes());
    s[80..88].copy_from_slice(&1u64.to_le_bytes());
    s
}

/// kenlm's `IsBinaryFormat`: `Ok(true)` for a binary file, `Ok(false)` for anything
/// else (to be read as ARPA), `Err` for a binary file this code cannot use.
pub(crate) fn detect(data: &[u8]) -> Result<bool, String> {
    if data.len() <= SANITY_SIZE {
        return Ok(false);
    }
    if data[..SANITY_SIZE] == reference_sanity() {
        return Ok(true);
    }
    if data.starts_with(MAGIC_INCOMPLETE) {
        return Err("this binary file did not finish building (incomplete magic at byte 0)".into());
    }
    if let Some(rest) = data.strip_prefix(MAGIC_BEFORE_VERSION) {
        let text = String::from_utf8_lossy(&rest[..rest.len().min(16)]);
        let version = text
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap_or("");
        if !version.is_empty() && version != "5" {
            return Err(format!(
                "binary file has format version {version} but only version 5 is supported"
            ));
        }
        return Err("binary header test values (bytes 56..88) do not match: the file was built for another \
                    architecture or kenlm revision; rebuild it with build_binary"
            .into());
    }
    Ok(false)
}

#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub probing_multiplier: f32,
    pub model_type: u32,
    pub has_vocabulary: bool,
    pub search_version: u32,
    pub counts: Vec<u64>,
    /// Bytes before the vocabulary (`TotalHeaderSize`).
    pub size: usize,
}

/// Parses the parameters that follow the sanity block.
pub(crate) fn parse(data: &[u8]) -> Result<Header, String> {
    let fixed = SANITY_SIZE;
    let order = *data
        .get(fixed)
        .ok_or("truncated header: no order byte at byte 88")? as usize;
    let counts_at = fixed + FIXED_SIZE;
    let size = align8((counts_at + 8 * order) as u64) as usize;
    if data.len() < size {
        return Err(format!(
            "truncated header: order {order} needs {size} header bytes but the file has {}",
            data.len()
        ));
    }
    let counts = (0..order)
        .map(|i| u64_at(data, counts_at + 8 * i))
        .collect();
    Ok(Header {
        probing_multiplier: f32::from_bits(u32_at(data, fixed + 4)),
        model_type: u32_at(data, fixed + 8),
        has_vocabulary: data[fixed + 12] != 0,
        search_version: u32_at(data, fixed + 16),
        counts,
        size,
    })
}
