//! `dj-plan explain`: the optimized logical plan and the physical plan of the recipe's first
//! partition (every partition runs the same plan on its own rows), as text or JSON.

use anyhow::Result;
use datafusion::physical_plan::displayable;
use dj_plans::Recipe;

use crate::plan::{auto_checkpoint_plan, prepare_explain};

/// The plans of one recipe.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Explained {
    pub recipe: String,
    pub executor_type: dj_plans::ExecutorType,
    /// `local`, or `ballista <scheduler>`: where `dj-run` runs the plans.
    pub engine: String,
    pub input_rows: u64,
    pub partitions: Vec<[u64; 2]>,
    pub ops: Vec<String>,
    /// `partition.mode: auto`: every sizing decision and its inputs.
    pub partition_sizing: Option<crate::autosize::Recommendation>,
    /// `checkpoint.strategy: auto`: what partition 0 would decide before anything is measured
    /// (each decision and its inputs; later partitions decide from what earlier ones measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub auto_checkpoints: Vec<String>,
    /// Checkpoints a new job would reuse from earlier jobs in its `work_dir`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reuse: Vec<String>,
    pub logical_plan: Vec<String>,
    pub physical_plan: Vec<String>,
}

pub(crate) async fn explain(recipe: &Recipe) -> Result<Explained> {
    let job = prepare_explain(recipe).await?;
    let recipe = &job.recipe;
    let optimized = job.session.state().optimize(&job.logical)?;
    let reuse = crate::run::partitioned::planned_reuse(recipe, &job.index, &job.ranges).await?;
    let lines = |s: String| s.lines().map(str::to_string).collect::<Vec<_>>();
    Ok(Explained {
        recipe: recipe.file.clone(),
        executor_type: recipe.executor_type,
        engine: match recipe.engine {
            dj_plans::recipe::Engine::Local => "local".to_string(),
            dj_plans::recipe::Engine::Ballista => format!("ballista {}", recipe.scheduler),
        },
        input_rows: job.index.total_rows,
        partitions: job.ranges.iter().map(|r| [r.start, r.end]).collect(),
        partition_sizing: job.sizing.clone(),
        ops: recipe
            .process
            .iter()
            .map(|o| {
                let mut line = format!("#{} {} ({})", o.index, o.name, o.spec.kind.as_str());
                if o.entry != o.index {
                    line.push_str(&format!(
                        "; moved from #{} (filters run by cost per byte they drop)",
                        o.entry
                    ));
                }
                for m in &o.models {
                    line.push_str(&format!("; loads {} {}", m.kind, m.path.display()));
                }
                line
            })
            .collect(),
        reuse,
        auto_checkpoints: auto_checkpoint_plan(recipe, &job.index, &job.ranges),
        logical_plan: lines(optimized.display_indent().to_string()),
        physical_plan: lines(displayable(job.physical.as_ref()).indent(false).to_string()),
    })
}

impl Explained {
    pub(crate) fn render_text(&self) -> String {
        let ranges: Vec<String> = self
            .partitions
            .iter()
            .map(|[a, b]| format!("[{a}, {b})"))
            .collect();
        let mut s = format!(
            "recipe: {}\nexecutor: {:?}, engine: {}, input rows: {}, partitions: {} {}\nops:\n",
            self.recipe,
            self.executor_type,
            self.engine,
            self.input_rows,
            self.partitions.len(),
            ranges.join(" ")
        );
        for op in &self.ops {
            s.push_str(&format!("  {op}\n"));
        }
        if let Some(rec) = &self.partition_sizing {
            s.push_str("auto partitioning:\n");
            for line in &rec.reasoning {
                s.push_str(&format!("  {line}\n"));
            }
        }
        if !self.auto_checkpoints.is_empty() {
            s.push_str(
                "auto checkpoints (decided at run time; partition 0 with the priors, later partitions from what earlier ones measure):\n",
            );
            for line in &self.auto_checkpoints {
                s.push_str(&format!("  {line}\n"));
            }
        }
        if !self.reuse.is_empty() {
            s.push_str("reuse (checkpoints of earlier jobs, verified):\n");
            for line in &self.reuse {
                s.push_str(&format!("  {line}\n"));
            }
        }
        s.push_str("\n== logical plan ==\n");
        for l in &self.logical_plan {
            s.push_str(l);
            s.push('\n');
        }
        s.push_str("\n== physical plan ==\n");
        for l in &self.physical_plan {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}
