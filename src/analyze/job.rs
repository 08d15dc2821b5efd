//! `dj-analyze --job ID`: the rows an earlier job of the same `work_dir` saved after an op,
//! read from its checkpoints. Their stats are read where the job computed them; only the later
//! filters' stats are computed, as Data-Juicer's analyzer does on a dataset that carries stats.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use dj_plans::Recipe;
use dj_plans::seal;
use dj_plans::source::RowRangeTable;

use crate::job::checkpoints::checkpoints_by_partition;
use crate::job::info::PartitioningInfo;
use crate::job::reuse::{OpChain, op_chain};
use crate::job::{JobPaths, job_dir, validate_job_id};
use crate::plan::{build_index, checkpoint_table};

/// The checkpoints of one job after one op, one table per partition in partition order.
pub(crate) struct JobRows {
    /// What the rows are, for the report: `job ID after op #k NAME (N partitions)`.
    pub(crate) description: String,
    pub(crate) tables: Vec<RowRangeTable>,
    /// Whether the job's input made it store stats as Data-Juicer's JSON column.
    pub(crate) json_stats: bool,
}

/// The rows job `job_id` saved after the latest op that every partition checkpointed among
/// the ops `recipe` shares with that job (same input, names, parameters and models). Every
/// checkpoint must verify against its seal.
pub(crate) async fn job_rows(recipe: &Recipe, job_id: &str) -> Result<JobRows> {
    validate_job_id(job_id)?;
    let root = job_dir(recipe, job_id)?;
    if !root.is_dir() {
        bail!("no job `{job_id}`: {} is not a directory", root.display());
    }
    let paths = JobPaths::new(root);
    let info_path = paths.partitioning_info();
    let info: PartitioningInfo = serde_json::from_str(
        &std::fs::read_to_string(&info_path)
            .with_context(|| format!("job `{job_id}` has no {}", info_path.display()))?,
    )
    .with_context(|| format!("{} is not a partitioning record", info_path.display()))?;
    if info.num_partitions == 0 {
        bail!("job `{job_id}` has no partitions (its input had no rows): nothing to analyze");
    }
    let Some(theirs) = OpChain::load(&paths) else {
        bail!(
            "job `{job_id}` has no {}: it was run by a dj-fusion without op fingerprints, so its \
             checkpoints cannot be matched to this recipe",
            OpChain::path(&paths).display()
        );
    };
    let shared = op_chain(recipe)?.common_prefix(&theirs);
    if shared == 0 {
        bail!(
            "job `{job_id}` shares no leading op with {} (the first op, its parameters, models or \
             the input format differ), so none of its checkpoints holds this recipe's rows",
            recipe.file
        );
    }
    let found = checkpoints_by_partition(&paths, recipe, info.num_partitions)?;
    let Some(op) = (0..shared)
        .rev()
        .find(|op| found.iter().all(|f| f.iter().any(|(o, _)| o == op)))
    else {
        let with: Vec<String> = found
            .iter()
            .enumerate()
            .map(|(p, f)| {
                let ops: Vec<String> = f.iter().map(|(o, _)| format!("#{o}")).collect();
                format!(
                    "partition {p}: {}",
                    if ops.is_empty() {
                        "none".into()
                    } else {
                        ops.join(" ")
                    }
                )
            })
            .collect();
        bail!(
            "job `{job_id}` has no op among the {shared} it shares with this recipe after which \
             every partition saved a checkpoint ({}); run it with a checkpoint strategy that saves \
             one, or analyze the input",
            with.join("; ")
        );
    };
    let files: Vec<PathBuf> = found
        .iter()
        .map(|f| {
            f.iter()
                .find(|(o, _)| *o == op)
                .expect("found above")
                .1
                .clone()
        })
        .collect();
    for f in &files {
        seal::verify(f).with_context(|| format!("checkpoint {} does not verify", f.display()))?;
    }
    let index = Arc::new(build_index(recipe).await?);
    let mut tables = Vec::new();
    for f in &files {
        tables.push(checkpoint_table(recipe, &index, op, f, None).await?);
    }
    Ok(JobRows {
        description: format!(
            "job {job_id} after op #{op} {} ({} partitions)",
            recipe.process[op].name,
            files.len()
        ),
        tables,
        json_stats: dj_plans::compile::json_stats(&index),
    })
}
