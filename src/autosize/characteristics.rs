//! What the samples say about the dataset: modality counts, mean and skew of row sizes, and how
//! they were sampled.

use serde::Serialize;

use super::constants::MB;
use super::samples::{Modality, SampleStats};

/// Rows per modality in the sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ModalityCounts {
    pub text: usize,
    pub image: usize,
    pub audio: usize,
    pub video: usize,
    pub multimodal: usize,
}

impl ModalityCounts {
    pub(crate) fn get(&self, m: Modality) -> usize {
        match m {
            Modality::Text => self.text,
            Modality::Image => self.image,
            Modality::Audio => self.audio,
            Modality::Video => self.video,
            Modality::Multimodal => self.multimodal,
        }
    }

    fn bump(&mut self, m: Modality) {
        match m {
            Modality::Text => self.text += 1,
            Modality::Image => self.image += 1,
            Modality::Audio => self.audio += 1,
            Modality::Video => self.video += 1,
            Modality::Multimodal => self.multimodal += 1,
        }
    }

    /// The most frequent modality; ties go to the first in [`Modality::ALL`].
    pub(crate) fn primary(&self) -> Modality {
        let mut best = Modality::Text;
        for m in Modality::ALL {
            if self.get(m) > self.get(best) {
                best = m;
            }
        }
        best
    }
}

/// How the characteristics were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Sampling {
    /// From sampled rows.
    Analyzed,
    /// Rows could not be read: Data-Juicer's defaults (text, 500 chars, 0.002 MB, skew 0.5).
    Failed,
}

/// The sample's statistics (Data-Juicer's `DataCharacteristics`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DataCharacteristics {
    pub sampling: Sampling,
    pub primary_modality: Modality,
    pub modality_distribution: ModalityCounts,
    pub avg_text_length: f64,
    pub avg_images_per_sample: f64,
    pub avg_audio_per_sample: f64,
    pub avg_video_per_sample: f64,
    pub total_samples: u64,
    pub sample_size_analyzed: usize,
    /// P90 of the per-row sizes (`sorted[int(n * 0.9)]`) in MB; the one size for one row, 0.002
    /// for none.
    pub memory_per_sample_mb: f64,
    /// Index into the sorted sizes used for the P90 (None with fewer than 2 rows).
    pub memory_p90_index: Option<usize>,
    pub mean_memory_per_sample_mb: Option<f64>,
    /// Sample standard deviation (n - 1) of the sizes in MB.
    pub memory_stdev_mb: Option<f64>,
    /// `min(1, stdev / mean)` (0 if the mean is 0); 0.5 with fewer than 2 rows.
    pub data_skew_factor: f64,
    /// Whether the sizes include media files the rows reference (some sampled row had one).
    pub includes_media_files: bool,
}

/// Statistics of `samples` (the head of an input of `total_samples` rows).
pub(crate) fn analyze(total_samples: u64, samples: &[SampleStats]) -> DataCharacteristics {
    let n = samples.len();
    let mut counts = ModalityCounts::default();
    for s in samples {
        counts.bump(s.modality());
    }
    let avg = |f: fn(&SampleStats) -> u64| {
        if n == 0 {
            0.0
        } else {
            samples.iter().map(f).sum::<u64>() as f64 / n as f64
        }
    };
    let sizes: Vec<f64> = samples
        .iter()
        .map(|s| (s.memory_bytes + s.media_bytes) as f64 / MB)
        .collect();
    let (memory, p90_index, mean, stdev, skew) = if n > 1 {
        let mut sorted = sizes.clone();
        sorted.sort_by(f64::total_cmp);
        let idx = (n as f64 * 0.9) as usize;
        let mean = sizes.iter().sum::<f64>() / n as f64;
        let variance = sizes.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
        let stdev = variance.sqrt();
        let skew = if mean > 0.0 {
            (stdev / mean).min(1.0)
        } else {
            0.0
        };
        (sorted[idx], Some(idx), Some(mean), Some(stdev), skew)
    } else {
        (
            sizes.first().copied().unwrap_or(0.002),
            None,
            None,
            None,
            0.5,
        )
    };
    DataCharacteristics {
        sampling: Sampling::Analyzed,
        primary_modality: counts.primary(),
        modality_distribution: counts,
        avg_text_length: avg(|s| s.text_chars),
        avg_images_per_sample: avg(|s| s.images),
        avg_audio_per_sample: avg(|s| s.audios),
        avg_video_per_sample: avg(|s| s.videos),
        total_samples,
        sample_size_analyzed: n,
        memory_per_sample_mb: memory,
        memory_p90_index: p90_index,
        mean_memory_per_sample_mb: mean,
        memory_stdev_mb: stdev,
        data_skew_factor: skew,
        includes_media_files: samples.iter().any(|s| s.media_bytes > 0),
    }
}
