//! The entry point: runs a recipe with the executor it names. The default executors plan their
//! partitions and run them directly ([`execute`]); `ray_partitioned` goes through the job
//! directory, checkpoints and resume of [`partitioned`], which builds on the same execution.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use dj_plans::recipe::{ExecutorType, Recipe};

mod execute;
pub(crate) mod partitioned;
mod progress;
mod task;

use execute::execute;

use crate::export::ExportSpec;
use crate::export::target::ExportTarget;
use crate::options::{RunOptions, Target};
use crate::partition::Start;
use crate::plan::{build_index, plan_partitioning};
use crate::report::RunReport;

/// Runs `recipe` and writes its export.
pub async fn run(recipe: &Recipe, opts: &RunOptions) -> Result<RunReport> {
    // A bad export path fails before the input is read.
    ExportSpec::new(
        &ExportTarget::new(&recipe.export_path)?.local,
        0,
        false,
        false,
    )?;
    let target = opts.target(recipe);
    if let Target::Ballista { scheduler, tls } = &target {
        crate::cluster::check_recipe(recipe)?;
        let scheduler = crate::cluster::Scheduler::new(scheduler, tls.as_deref())?;
        crate::cluster::check_scheduler(&scheduler).await?;
    }
    if recipe.executor_type != ExecutorType::RayPartitioned {
        if opts.resume.is_some() {
            bail!("--resume is only supported by the ray_partitioned executor.");
        }
        let started = Instant::now();
        let index = Arc::new(build_index(recipe).await?);
        let recipe = &crate::filter_probe::ordered(recipe, &index).await?;
        let ranges = plan_partitioning(recipe, &index).await?.ranges;
        let starts = vec![Start::Input; ranges.len()];
        return execute(recipe, &index, &ranges, &starts, None, opts, started).await;
    }
    partitioned::run_partitioned(recipe, opts).await
}
