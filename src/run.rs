//! The entry point: runs a recipe with the executor it names. The default executors run their
//! partitions directly ([`crate::execute`]); `ray_partitioned` goes through the job directory,
//! checkpoints and resume of [`crate::partitioned`], which builds on the same execution.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use dj_plans::recipe::{ExecutorType, Recipe};

use crate::execute::{
    RunOptions, RunReport, Start, Target, build_index, execute, plan_partitioning,
};
use crate::export::ExportSpec;

/// Runs `recipe` and writes its export.
pub async fn run(recipe: &Recipe, opts: &RunOptions) -> Result<RunReport> {
    // A bad export path fails before the input is read.
    ExportSpec::new(
        &crate::remote::ExportTarget::new(&recipe.export_path)?.local,
        0,
        false,
        false,
    )?;
    let target = opts.target(recipe);
    if let Target::Ballista { scheduler } = &target {
        crate::cluster::check_recipe(recipe)?;
        crate::cluster::check_scheduler(scheduler).await?;
    }
    if recipe.executor_type != ExecutorType::RayPartitioned {
        if opts.resume.is_some() {
            bail!("--resume is only supported by the ray_partitioned executor.");
        }
        let started = Instant::now();
        let index = Arc::new(build_index(recipe).await?);
        let ranges = plan_partitioning(recipe, &index).await?.ranges;
        let starts = vec![Start::Input; ranges.len()];
        return execute(recipe, &index, &ranges, &starts, None, opts, started).await;
    }
    crate::partitioned::run_partitioned(recipe, opts).await
}
