//! The sizing decisions (rows per partition, maximum size in MB, workers), each kept with its
//! inputs and reasoning.

use serde::Serialize;

use super::characteristics::{DataCharacteristics, Sampling, analyze};
use super::complexity::{Complexity, OpComplexity, pipeline_complexity};
use super::constants::{
    ASSUMED_CONCURRENT_PARTITIONS, MAX_SIZE_MB_BOUNDS, MB, MIN_PARTITIONS_ABOVE, SKEW_THRESHOLD,
};
use super::count::{Advice, CountConfig, PartitionCount, partition_count};
use super::resources::{Resources, TargetSize, TargetSource, target_partition_mb};
use super::samples::{Modality, SampleStats};

/// One step of the partition-size calculation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SizeStep {
    /// `modality_target`, `memory_guard`, `parallelism`, `data_skew` or `final_bounds`.
    pub step: &'static str,
    /// Rows per partition before the step (none for the first).
    pub before: Option<usize>,
    pub after: usize,
    /// Whether the step's condition held (for `modality_target`: whether a bound clamped it).
    pub applied: bool,
    pub rule: String,
}

/// Rows per partition and how they were reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SizeDecision {
    pub modality: Modality,
    pub modality_default_size: usize,
    pub modality_max_size: usize,
    /// Informational (see [`Modality::memory_multiplier`]).
    pub modality_memory_multiplier: f64,
    /// Text only: `avg_text_length * 2 bytes` in MB.
    pub text_mb_per_sample: Option<f64>,
    /// `int(target_mb / (mb_per_sample * complexity))` before the bounds; None if the default was used.
    pub raw_target_size: Option<i64>,
    /// `available_gb * 1024 * 0.8 / 4`.
    pub max_partition_memory_mb: f64,
    /// 1 up to 10,000 samples, else `max(1, int(cores * 1.5))`.
    pub min_partitions: usize,
    pub steps: Vec<SizeStep>,
    pub size: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct MaxSizeDecision {
    pub target_mb: i64,
    /// `int(target_mb / complexity)`.
    pub complexity_adjusted_mb: i64,
    /// `int(available_gb * 1024 * 0.25)`.
    pub max_by_memory_mb: i64,
    /// The smaller of the two, before the 32..=512 clamp.
    pub unclamped_mb: i64,
    pub max_size_mb: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WorkerRule {
    /// Fewer estimated partitions than base workers: `max(1, int(partitions * 0.8))`.
    FewPartitions,
    /// More than twice the base workers: `min(cores, int(base * 1.2))`.
    ManyPartitions,
    Balanced,
    /// No samples: the base count.
    NoWorkloadInfo,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct WorkerDecision {
    pub cpu_cores: usize,
    /// `max(1, int(cores * 0.75))`.
    pub base_workers: usize,
    pub estimated_partitions: Option<f64>,
    pub rule: WorkerRule,
    pub worker_count: usize,
}

/// Everything behind an optimizer recommendation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Analysis {
    pub data: DataCharacteristics,
    pub complexity: Complexity,
    pub resources: Resources,
    pub target: TargetSize,
    pub size: SizeDecision,
    pub max_size: MaxSizeDecision,
    pub workers: WorkerDecision,
}

/// The optimizer's answer, or the fallback when analysis failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Recommendation {
    /// Rows per partition; for the fallback, `partition.size` if set.
    pub partition_size: Option<usize>,
    /// Recommended maximum partition size in MB (an estimate: nothing enforces it).
    pub max_size_mb: Option<i64>,
    /// Recommended workers (None for the fallback: `np` stands in).
    pub worker_count: Option<usize>,
    /// `total_samples / partition_size`, as the worker rule sees it.
    pub estimated_partitions: Option<f64>,
    /// Why the fallback was used.
    pub fallback_reason: Option<String>,
    pub reasoning: Vec<String>,
    pub analysis: Option<Analysis>,
    /// The partition count once [`Recommendation::count_partitions`] has run.
    pub partitions: Option<PartitionCount>,
}

impl Recommendation {
    /// When analysis fails: the `partition.size` fallback if any, else the configured count.
    pub(crate) fn fallback(size: Option<usize>, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        let size = size.filter(|s| *s > 0);
        let then = match size {
            Some(s) => format!("using the partition.size fallback of {s} samples per partition"),
            None => "no partition.size fallback: keeping partition.num_of_partitions".to_string(),
        };
        Recommendation {
            partition_size: size,
            max_size_mb: None,
            worker_count: None,
            estimated_partitions: None,
            reasoning: vec![format!("auto partition analysis failed ({reason}); {then}")],
            fallback_reason: Some(reason),
            analysis: None,
            partitions: None,
        }
    }

    pub(crate) fn is_fallback(&self) -> bool {
        self.fallback_reason.is_some()
    }

    /// What [`partition_count`] takes from this recommendation.
    pub(crate) fn advice(&self) -> Advice {
        Advice {
            partition_size: self.partition_size,
            worker_count: self.worker_count,
            fallback: self.is_fallback(),
        }
    }

    /// [`partition_count`] for this recommendation, kept in `partitions` (and its reasoning
    /// appended) so the whole decision can be logged and saved as one value; returns the count.
    pub(crate) fn count_partitions(&mut self, total_rows: u64, cfg: &CountConfig) -> usize {
        let count = partition_count(total_rows, &self.advice(), cfg);
        let n = count.count;
        self.reasoning
            .extend(count.reasoning.iter().map(|r| format!("partitions: {r}")));
        self.partitions = Some(count);
        n
    }
}

/// Analyzes `samples` (the first [`sample_size`] rows of `total_samples`) and recommends.
pub(crate) fn recommend<S: AsRef<str>>(
    total_samples: u64,
    samples: &[SampleStats],
    op_names: &[S],
    resources: &Resources,
    target_size_mb: Option<i64>,
) -> Recommendation {
    recommend_for(
        analyze(total_samples, samples),
        op_names,
        resources,
        target_size_mb,
    )
}

/// Recommends from given characteristics.
pub(crate) fn recommend_for<S: AsRef<str>>(
    data: DataCharacteristics,
    op_names: &[S],
    resources: &Resources,
    target_size_mb: Option<i64>,
) -> Recommendation {
    let complexity = pipeline_complexity(op_names);
    let available_gb = resources.available_memory_gb();
    let target = target_partition_mb(available_gb, target_size_mb);
    let size = partition_size(
        &data,
        complexity.score,
        target.target_mb,
        available_gb,
        resources.cpu_cores,
    );
    let max_size = max_size_mb(target.target_mb, complexity.score, available_gb);
    let workers = worker_count(resources.cpu_cores, size.size, data.total_samples);
    let estimated = data.total_samples as f64 / size.size as f64;

    let d = &data.modality_distribution;
    let mut reasoning = vec![
        format!(
            "modality: based on {} modality (sample: text {}, image {}, audio {}, video {}, multimodal {})",
            data.primary_modality.as_str(),
            d.text,
            d.image,
            d.audio,
            d.video,
            d.multimodal
        ),
        format!(
            "complexity: processing complexity factor {:.2} ({} high x{}, {} medium x{}, {} low x{})",
            complexity.score,
            complexity.high,
            OpComplexity::High.weight(),
            complexity.medium,
            OpComplexity::Medium.weight(),
            complexity.low,
            OpComplexity::Low.weight()
        ),
        format!(
            "dataset_size: {} samples, {} analyzed{}",
            data.total_samples,
            data.sample_size_analyzed,
            if data.sampling == Sampling::Failed {
                " (sampling failed: default characteristics)"
            } else {
                ""
            }
        ),
        format!(
            "text_length: average text length {:.0} characters",
            data.avg_text_length
        ),
        format!("data_skew: data skew factor {:.2}", data.data_skew_factor),
        format!(
            "memory_constraints: memory per sample (P90) {:.3} MB{}",
            data.memory_per_sample_mb,
            if data.includes_media_files {
                " (the row and the media files it references)"
            } else {
                ""
            }
        ),
        match target.source {
            TargetSource::Recipe => format!(
                "target: {} MB per partition from partition.target_size_mb",
                target.target_mb
            ),
            TargetSource::AvailableMemory => format!(
                "target: {} MB per partition from {:.1} GB available memory",
                target.target_mb, available_gb
            ),
        },
    ];
    reasoning.extend(size.steps.iter().map(|s| format!("{}: {}", s.step, s.rule)));
    reasoning.push(format!(
        "max_size: {} MB = clamp(min(int({} / {:.2}) = {}, 25% of memory = {}), 32, 512)",
        max_size.max_size_mb,
        max_size.target_mb,
        complexity.score,
        max_size.complexity_adjusted_mb,
        max_size.max_by_memory_mb
    ));
    reasoning.push(format!(
        "worker_count: optimal workers {} (based on {} available cores, base {})",
        workers.worker_count, workers.cpu_cores, workers.base_workers
    ));

    Recommendation {
        partition_size: Some(size.size),
        max_size_mb: Some(max_size.max_size_mb),
        worker_count: Some(workers.worker_count),
        estimated_partitions: Some(estimated),
        fallback_reason: None,
        reasoning,
        analysis: Some(Analysis {
            data,
            complexity,
            resources: *resources,
            target,
            size,
            max_size,
            workers,
        }),
        partitions: None,
    }
}

/// Rows per partition: modality target, memory guard, parallelism, skew, final bounds.
pub(crate) fn partition_size(
    data: &DataCharacteristics,
    complexity: f64,
    target_mb: i64,
    available_memory_gb: f64,
    cpu_cores: usize,
) -> SizeDecision {
    let modality = data.primary_modality;
    let (default, max) = (
        modality.default_partition_size(),
        modality.max_partition_size(),
    );
    let mem = data.memory_per_sample_mb;
    let total = data.total_samples;
    let mut steps = Vec::new();

    // 1. Modality target.
    let (text_mb, basis_mb, floor) = if modality == Modality::Text {
        let mb = data.avg_text_length * 2.0 / MB;
        (Some(mb), mb, 100)
    } else {
        (None, mem, 10)
    };
    let raw = (basis_mb > 0.0).then(|| (target_mb as f64 / (basis_mb * complexity)) as i64);
    let unbounded = raw.unwrap_or(default as i64);
    let mut size = unbounded.clamp(floor as i64, max as i64) as usize;
    let basis = if text_mb.is_some() {
        format!(
            "{:.0} chars x 2 bytes = {basis_mb:.6} MB",
            data.avg_text_length
        )
    } else {
        format!("P90 {basis_mb:.6} MB")
    };
    steps.push(SizeStep {
        step: "modality_target",
        before: None,
        after: size,
        applied: size as i64 != unbounded,
        rule: match raw {
            Some(raw) => format!(
                "int({target_mb} MB / ({basis} per sample x complexity {complexity:.2})) = {raw}, bounded to [{floor}, {max}] = {size}"
            ),
            None => format!(
                "no size per sample ({basis}): {} default {default}, bounded to [{floor}, {max}] = {size}",
                modality.as_str()
            ),
        },
    });

    // 2. Memory guard: 2x safety margin, 80% of memory shared by 4 concurrent partitions.
    let max_partition_memory_mb =
        (available_memory_gb * 1024.0 * 0.8) / ASSUMED_CONCURRENT_PARTITIONS;
    let needed = size as f64 * mem * 2.0;
    let before = size;
    let applied = needed > max_partition_memory_mb;
    let rule = if applied {
        let safe = (max_partition_memory_mb / (mem * 2.0)) as i64;
        size = safe.max(10) as usize;
        format!(
            "{before} x {mem:.6} MB x 2 = {needed:.1} MB > {max_partition_memory_mb:.1} MB (80% of {available_memory_gb:.1} GB / 4): int({max_partition_memory_mb:.1} / ({mem:.6} x 2)) = {safe}, at least 10 = {size}"
        )
    } else {
        format!(
            "{before} x {mem:.6} MB x 2 = {needed:.1} MB fits {max_partition_memory_mb:.1} MB (80% of {available_memory_gb:.1} GB / 4)"
        )
    };
    steps.push(SizeStep {
        step: "memory_guard",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 3. Parallelism: at least cores x 1.5 partitions above 10,000 samples.
    let min_partitions = if total <= MIN_PARTITIONS_ABOVE {
        1
    } else {
        ((cpu_cores as f64 * 1.5) as usize).max(1)
    };
    let before = size;
    let partitions = total as f64 / size as f64;
    let applied = partitions < min_partitions as f64;
    let rule = if applied {
        let par = (total as f64 / min_partitions as f64) as i64;
        size = par.max(10) as usize;
        format!(
            "{total} / {before} = {partitions:.3} partitions < {min_partitions}: int({total} / {min_partitions}) = {par}, at least 10 = {size}"
        )
    } else {
        format!("{total} / {before} = {partitions:.3} partitions >= {min_partitions}")
    };
    steps.push(SizeStep {
        step: "parallelism",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 4. Data skew.
    let before = size;
    let skew = data.data_skew_factor;
    let applied = skew > SKEW_THRESHOLD;
    let rule = if applied {
        size = (size as f64 * 0.8) as usize;
        format!("skew {skew:.3} > 0.7: int({before} x 0.8) = {size}")
    } else {
        format!("skew {skew:.3} <= 0.7: unchanged")
    };
    steps.push(SizeStep {
        step: "data_skew",
        before: Some(before),
        after: size,
        applied,
        rule,
    });

    // 5. Final bounds.
    let before = size;
    size = size.clamp(10, max);
    steps.push(SizeStep {
        step: "final_bounds",
        before: Some(before),
        after: size,
        applied: size != before,
        rule: format!("bounded to [10, {max}] = {size}"),
    });

    SizeDecision {
        modality,
        modality_default_size: default,
        modality_max_size: max,
        modality_memory_multiplier: modality.memory_multiplier(),
        text_mb_per_sample: text_mb,
        raw_target_size: raw,
        max_partition_memory_mb,
        min_partitions,
        steps,
        size,
    }
}

/// `clamp(min(int(target / complexity), int(available_gb * 1024 * 0.25)), 32, 512)`.
pub(crate) fn max_size_mb(
    target_mb: i64,
    complexity: f64,
    available_memory_gb: f64,
) -> MaxSizeDecision {
    let complexity_adjusted_mb = (target_mb as f64 / complexity) as i64;
    let max_by_memory_mb = (available_memory_gb * 1024.0 * 0.25) as i64;
    let unclamped_mb = complexity_adjusted_mb.min(max_by_memory_mb);
    MaxSizeDecision {
        target_mb,
        complexity_adjusted_mb,
        max_by_memory_mb,
        unclamped_mb,
        max_size_mb: unclamped_mb.clamp(MAX_SIZE_MB_BOUNDS.0, MAX_SIZE_MB_BOUNDS.1),
    }
}

/// 75% of the cores, fewer for few partitions, up to 120% of that for many, never above the cores.
pub(crate) fn worker_count(
    cpu_cores: usize,
    partition_size: usize,
    total_samples: u64,
) -> WorkerDecision {
    let base = ((cpu_cores as f64 * 0.75) as usize).max(1);
    let (estimated, rule, workers) = if partition_size > 0 && total_samples > 0 {
        let est = total_samples as f64 / partition_size as f64;
        if est < base as f64 {
            (
                Some(est),
                WorkerRule::FewPartitions,
                ((est * 0.8) as usize).max(1),
            )
        } else if est > (base * 2) as f64 {
            (
                Some(est),
                WorkerRule::ManyPartitions,
                cpu_cores.min((base as f64 * 1.2) as usize),
            )
        } else {
            (Some(est), WorkerRule::Balanced, base)
        }
    } else {
        (None, WorkerRule::NoWorkloadInfo, base)
    };
    WorkerDecision {
        cpu_cores,
        base_workers: base,
        estimated_partitions: estimated,
        rule,
        worker_count: workers.min(cpu_cores).max(1),
    }
}
