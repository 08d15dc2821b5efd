//! The values a selector decides from: each row's dataset-order key and selector value.

use dj_udfs::selector::SelectValue;

/// One partition's rows at a selector: dataset-order key and value per row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectRows {
    pub(crate) order: Vec<u64>,
    pub(crate) values: Vec<SelectValue>,
}

/// Rank of a row that does not survive.
pub(crate) const DROPPED: u64 = u64::MAX;
