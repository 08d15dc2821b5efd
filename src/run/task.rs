//! One partition's run: it waits for a concurrency permit, stages its rows for the export,
//! books its per-op figures and logs its events (`op_start` .. `partition_complete`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use datafusion::execution::TaskContext;
use dj_plans::nodes::auto::AutoCheckpoints;
use dj_plans::nodes::offline::credit_global_nodes;
use dj_plans::nodes::{CheckpointListener, Concurrency};
use serde_json::json;

use crate::cluster;
use crate::export::Staged;
use crate::export::staged::Staging;
use crate::job::events::{Event, EventKind, EventLog};
use crate::plan::PartitionPlan;

/// One partition's run: waits for a concurrency permit, stages its rows, books its per-op
/// figures (the global nodes' work here; a cluster's from the scheduler) and logs its events.
pub(super) struct PartitionTask {
    pub(super) plan: PartitionPlan,
    pub(super) ctx: Arc<TaskContext>,
    /// Where its rows are staged, and how.
    pub(super) path: PathBuf,
    pub(super) staging: Staging,
    /// The Ballista scheduler when it runs on a cluster.
    pub(super) scheduler: Option<cluster::Scheduler>,
    pub(super) events: Option<Arc<EventLog>>,
    pub(super) listener: Option<Arc<dyn CheckpointListener>>,
    pub(super) concurrency: Arc<Concurrency>,
    pub(super) partitions: usize,
    /// `checkpoint.strategy: auto`: told what this partition's ops cost.
    pub(super) auto: Option<Arc<AutoCheckpoints>>,
}

impl PartitionTask {
    pub(super) async fn run(self) -> Result<(usize, Staged, PartitionPlan)> {
        let PartitionTask {
            plan,
            ctx,
            path,
            staging,
            scheduler,
            events,
            listener,
            concurrency,
            partitions: n,
            auto,
        } = self;
        concurrency.acquire(plan.partition).await;
        let p = plan.partition;
        let t0 = Instant::now();
        if let Some(ev) = &events {
            ev.log(
                Event::new(
                    EventKind::PartitionStart,
                    format!("Starting processing of partition {}/{n}", p + 1),
                )
                .partition(p),
            );
            for (i, name) in &plan.ops {
                ev.log(
                    Event::new(
                        EventKind::OpStart,
                        format!("Operation {name} (idx {i}) started on partition {p}"),
                    )
                    .partition(p)
                    .op(*i, name),
                );
            }
        }
        let mut staged = staging
            .stage((p, &plan.physical), ctx, path, &plan.compiled.counters)
            .await;
        match &scheduler {
            None => {
                credit_global_nodes(&plan.physical, &plan.compiled.counters);
                if let Some(model) = auto.filter(|_| staged.is_ok()) {
                    let c = &plan.compiled.counters;
                    let costs: Vec<(usize, u64)> = plan
                        .ops
                        .iter()
                        .map(|(i, _)| (*i, (c.op_seconds(*i) * 1e9) as u64))
                        .collect();
                    model.record_partition(p, &costs);
                }
            }
            Some(scheduler) if staged.is_ok() => {
                let reported =
                    cluster::report_partition(&plan, scheduler, listener.as_deref(), t0.elapsed());
                if let Err(e) = reported.await {
                    staged = Err(e);
                }
            }
            Some(_) => {}
        }
        concurrency.release(p);
        if let Some(ev) = &events {
            log_partition_end(ev, &plan, &staged, t0.elapsed(), n);
        }
        staged.map(|s| (p, s, plan))
    }
}

/// Logs the end of each op the partition ran, then the partition's own end, with its figures
/// (or its error).
fn log_partition_end(
    ev: &EventLog,
    plan: &PartitionPlan,
    staged: &Result<Staged>,
    elapsed: Duration,
    n: usize,
) {
    let p = plan.partition;
    let c = &plan.compiled.counters;
    let mut rows_in = c.rows_loaded();
    for (i, name) in &plan.ops {
        let rows_out = c.rows_out(*i);
        let seconds = c.op_seconds(*i);
        let mut e = match staged {
            Ok(_) => Event::new(
                EventKind::OpComplete,
                format!("Operation {name} (idx {i}) completed on partition {p} - {rows_in}→{rows_out} rows in {seconds:.3}s"),
            ),
            Err(err) => {
                let mut e = Event::new(EventKind::OpFailed, format!("Operation {name} (idx {i}) failed on partition {p}: {err:#}"));
                e.error_message = Some(format!("{err:#}"));
                e
            }
        }
        .partition(p)
        .op(*i, name);
        e.duration = Some(seconds);
        e.input_rows = Some(rows_in);
        e.output_rows = Some(rows_out);
        e.status = Some(if staged.is_ok() { "success" } else { "failed" });
        ev.log(e);
        rows_in = rows_out;
    }
    let mut e = match staged {
        Ok(s) => {
            let mut e = Event::new(
                EventKind::PartitionComplete,
                format!("Completed processing of partition {}/{n}", p + 1),
            );
            e.output_rows = Some(s.rows);
            e
        }
        Err(err) => {
            let mut e = Event::new(
                EventKind::PartitionFailed,
                format!("Partition {p} failed after 0 retries: {err:#}"),
            );
            e.error_message = Some(format!("{err:#}"));
            e.status = Some("failed");
            // Partitions are not retried: a failed one fails the job, which resumes.
            e.meta(json!({"retry_count": 0}))
        }
    };
    e.partition_id = Some(p);
    e.duration = Some(elapsed.as_secs_f64());
    ev.log(e);
}
