//! Summaries of one stat's values, as pandas' `describe()` computes them for Data-Juicer's
//! `overall.csv` (sample standard deviation, linearly interpolated quantiles), and what candidate
//! thresholds would keep.

use serde::Serialize;

/// `describe(percentiles=[0.25, 0.5, 0.75])` of one column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Describe {
    pub(crate) count: u64,
    pub(crate) mean: f64,
    /// Sample standard deviation (`ddof=1`); NaN for fewer than two values.
    pub(crate) std: f64,
    pub(crate) min: f64,
    pub(crate) p25: f64,
    pub(crate) p50: f64,
    pub(crate) p75: f64,
    pub(crate) max: f64,
}

impl Describe {
    /// `values` in row order (pandas sums in it) and the same values `sorted` (for quantiles).
    pub(crate) fn of(values: &[f64], sorted: &[f64]) -> Describe {
        // pandas sums in row order with numpy's pairwise summation: the same bits need both.
        let n = values.len();
        let mean = if n == 0 {
            f64::NAN
        } else {
            pairwise_sum(values) / n as f64
        };
        let std = if n < 2 {
            f64::NAN
        } else {
            let squares: Vec<f64> = values.iter().map(|v| (mean - v) * (mean - v)).collect();
            (pairwise_sum(&squares) / (n - 1) as f64).sqrt()
        };
        Describe {
            count: n as u64,
            mean,
            std,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            p25: quantile(sorted, 0.25),
            p50: quantile(sorted, 0.5),
            p75: quantile(sorted, 0.75),
            max: sorted.last().copied().unwrap_or(f64::NAN),
        }
    }

    /// The rows of `overall.csv`, in pandas' order.
    pub(crate) fn rows(&self) -> [(&'static str, f64); 8] {
        [
            ("count", self.count as f64),
            ("mean", self.mean),
            ("std", self.std),
            ("min", self.min),
            ("25%", self.p25),
            ("50%", self.p50),
            ("75%", self.p75),
            ("max", self.max),
        ]
    }
}

/// `describe()` of a column of strings: count, distinct values, the most frequent one (the first
/// to occur among equals, as pandas' `value_counts` orders ties) and its count; plus the most
/// frequent values for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TextDescribe {
    pub(crate) count: u64,
    pub(crate) unique: u64,
    pub(crate) top: String,
    pub(crate) freq: u64,
    /// Up to [`TOP_VALUES`] values with their counts, most frequent first.
    pub(crate) values: Vec<(String, u64)>,
}

/// How many of a text stat's values the report lists.
pub(crate) const TOP_VALUES: usize = 20;

impl TextDescribe {
    /// `values` in row order; not empty.
    pub(crate) fn of(values: &[String]) -> TextDescribe {
        let mut counts: std::collections::HashMap<&str, (u64, usize)> = Default::default();
        for (i, v) in values.iter().enumerate() {
            counts.entry(v.as_str()).or_insert((0, i)).0 += 1;
        }
        let mut ranked: Vec<(&str, (u64, usize))> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
        TextDescribe {
            count: values.len() as u64,
            unique: ranked.len() as u64,
            top: ranked[0].0.to_string(),
            freq: ranked[0].1.0,
            values: ranked
                .iter()
                .take(TOP_VALUES)
                .map(|(v, (n, _))| (v.to_string(), *n))
                .collect(),
        }
    }
}

/// numpy's pairwise summation of float64 (`pairwise_sum_DOUBLE`): blocks of up to 128 values
/// summed in 8 interleaved accumulators, larger arrays split in halves (at a multiple of 8).
pub(crate) fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &a[i..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// numpy's default (`linear`) quantile of sorted values.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, frac) = (pos.floor() as usize, pos - pos.floor());
    match sorted.get(lo + 1) {
        Some(hi) if frac > 0.0 => sorted[lo] + (hi - sorted[lo]) * frac,
        _ => sorted[lo],
    }
}

/// What a threshold at one quantile of the stat keeps, as a lower bound (`min`) and as an
/// upper bound (`max`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Threshold {
    /// The quantile the threshold is taken at (0.05 ... 0.95).
    pub(crate) quantile: f64,
    pub(crate) value: f64,
    /// Rows with a stat `>= value` (kept by `min = value`).
    pub(crate) kept_as_min: u64,
    /// Rows with a stat `<= value` (kept by `max = value`).
    pub(crate) kept_as_max: u64,
}

/// Candidate thresholds at the 5, 10, 25, 50, 75, 90 and 95% quantiles of `sorted`.
pub(crate) fn thresholds(sorted: &[f64]) -> Vec<Threshold> {
    if sorted.is_empty() {
        return Vec::new();
    }
    [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
        .into_iter()
        .map(|q| {
            let value = quantile(sorted, q);
            let below = sorted.partition_point(|v| *v < value) as u64;
            let at_most = sorted.partition_point(|v| *v <= value) as u64;
            Threshold {
                quantile: q,
                value,
                kept_as_min: sorted.len() as u64 - below,
                kept_as_max: at_most,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pandas: `pd.Series([1, 2, 3, 4, 10]).describe()` -> count 5, mean 4.0, std
    /// 3.5355339059327378, min 1, 25% 2, 50% 3, 75% 4, max 10; and quantiles between values.
    #[test]
    fn describe_matches_pandas() {
        let d = Describe::of(&[4.0, 1.0, 10.0, 3.0, 2.0], &[1.0, 2.0, 3.0, 4.0, 10.0]);
        assert_eq!(
            (d.count, d.mean, d.min, d.p25, d.p50, d.p75, d.max),
            (5, 4.0, 1.0, 2.0, 3.0, 4.0, 10.0)
        );
        assert!((d.std - 3.5355339059327378).abs() < 1e-15, "{}", d.std);
        // np.quantile([1, 2, 3, 4], 0.25) = 1.75.
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.75);
        assert!(Describe::of(&[7.0], &[7.0]).std.is_nan());
    }

    /// pandas: ties go to the value seen first (`['b', 'c', 'a', 'c', 'a', 'b']` -> top `b`).
    #[test]
    fn text_describe_matches_pandas() {
        let of =
            |v: &[&str]| TextDescribe::of(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let d = of(&["b", "c", "a", "c", "a", "b"]);
        assert_eq!((d.count, d.unique, d.top.as_str(), d.freq), (6, 3, "b", 2));
        let d = of(&["y", "x", "x", "y", "z", "z", "z"]);
        assert_eq!((d.top.as_str(), d.freq), ("z", 3));
        assert_eq!(d.values[1], ("y".to_string(), 2));
    }

    #[test]
    fn thresholds_count_what_each_bound_keeps() {
        let t = thresholds(&[1.0, 2.0, 2.0, 3.0, 10.0]);
        let median = t.iter().find(|t| t.quantile == 0.5).unwrap();
        assert_eq!(
            (median.value, median.kept_as_min, median.kept_as_max),
            (2.0, 4, 3)
        );
        assert_eq!(t.len(), 7);
        assert!(thresholds(&[]).is_empty());
    }
}
