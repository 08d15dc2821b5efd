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

/// Where every global row lands: `ranks[p][i]` for the row at `starts[p] + i`.
pub(crate) struct Ranking {
    starts: Vec<usize>,
    pub(crate) ranks: Vec<Vec<u64>>,
    pub(crate) total: usize,
}

impl Ranking {
    /// Every row of partitions of `rows` rows each [`DROPPED`].
    pub(crate) fn new(rows: impl IntoIterator<Item = usize>) -> Ranking {
        let mut starts = Vec::new();
        let mut ranks = Vec::new();
        let mut total = 0usize;
        for n in rows {
            starts.push(total);
            ranks.push(vec![DROPPED; n]);
            total += n;
        }
        Ranking {
            starts,
            ranks,
            total,
        }
    }

    pub(crate) fn set(&mut self, g: usize, rank: u64) {
        let p = self.starts.partition_point(|s| *s <= g) - 1;
        self.ranks[p][g - self.starts[p]] = rank;
    }
}
