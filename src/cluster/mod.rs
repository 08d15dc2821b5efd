//! Scale-out on Apache Ballista: the client session `dj-run --engine ballista` plans through, and
//! the scheduler and executor processes `dj-cluster` starts. All three use dj-fusion's codecs
//! (row-range source, op boundaries, checkpoint sinks, decided deduplicators, operator UDFs)
//! layered over Ballista's own, and the scheduler plans with dj-fusion's planner, so the cluster
//! runs the very plan a local run would.
//!
//! Executors read the input and write checkpoints at the absolute paths the client sees (one
//! machine or a shared mount), unless the dataset and job directory are on object storage: then
//! they fetch the input into their cache and upload the checkpoints they write.

pub(crate) mod passes;
pub(crate) mod staged;
pub(crate) mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use arrow_flight::flight_service_server::FlightServiceServer;
use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::error::BallistaError;
use ballista_core::execution_plans::DistributedQueryExec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
use ballista_core::serde::protobuf::{GetJobMetricsParams, GetJobStatusParams, OperatorMetricsSet};
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_core::utils::{GrpcServerConfig, create_grpc_server};
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_executor::flight_service::BallistaFlightService;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::prelude::SessionContext;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::protobuf::LogicalPlanNode;
use dj_plans::Recipe;
use dj_plans::codec::{DjLogicalCodec, DjPhysicalCodec};
use dj_plans::nodes::{CheckpointListener, CheckpointNode, SavedCheckpoint};
use dj_plans::planner;
use dj_plans::source::{InputIndex, RangeHashSink, RowRange};

use crate::job::context::JobCtx;
use crate::job::info::hash_partitions;
use crate::partition::Start;
use crate::plan::PartitionPlan;
use tls::ClusterTls;

/// How the client reaches the cluster: its scheduler's `host:port`, and this member's TLS
/// credentials when the cluster requires them.
#[derive(Debug, Clone)]
pub(crate) struct Scheduler {
    pub address: String,
    pub tls: Option<Arc<ClusterTls>>,
}

impl std::fmt::Display for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.address)
    }
}

/// A member's credentials from `--tls DIR`, if given.
pub(crate) fn load_tls(dir: Option<&std::path::Path>) -> Result<Option<Arc<ClusterTls>>> {
    dir.map(|d| ClusterTls::load(d).map(Arc::new)).transpose()
}

impl Scheduler {
    /// The scheduler at `address`, reached with the credentials in `tls`, if any.
    pub(crate) fn new(address: &str, tls: Option<&std::path::Path>) -> Result<Scheduler> {
        Ok(Scheduler {
            address: address.to_string(),
            tls: load_tls(tls)?,
        })
    }

    /// A gRPC client of the scheduler (over TLS when the cluster requires it).
    async fn grpc(&self) -> Result<SchedulerGrpcClient<tonic::transport::Channel>> {
        let endpoint = match &self.tls {
            Some(tls) => tls.endpoint(&self.address)?,
            None => tonic::transport::Endpoint::from_shared(format!("http://{}", self.address))
                .with_context(|| format!("`{}` is not an address", self.address))?,
        };
        let channel = endpoint
            .connect()
            .await
            .with_context(|| format!("cannot reach the Ballista scheduler at {self}"))?;
        Ok(SchedulerGrpcClient::new(channel).max_decoding_message_size(64 * 1024 * 1024))
    }
}

/// dj-fusion's codecs over Ballista's (which handle the shuffle and other Ballista nodes).
fn codecs() -> (
    Arc<dyn LogicalExtensionCodec>,
    Arc<dyn PhysicalExtensionCodec>,
) {
    (
        Arc::new(DjLogicalCodec::new(Arc::new(
            BallistaLogicalExtensionCodec::default(),
        ))),
        Arc::new(DjPhysicalCodec::new(Arc::new(
            BallistaPhysicalExtensionCodec::default(),
        ))),
    )
}

/// Splits `host:port`, naming the flag or recipe key on error.
pub(crate) fn parse_address(address: &str) -> Result<(String, u16)> {
    let (host, port) = address
        .rsplit_once(':')
        .with_context(|| format!("scheduler address `{address}` is not host:port"))?;
    let port = port
        .parse()
        .with_context(|| format!("scheduler address `{address}`: `{port}` is not a port"))?;
    if host.is_empty() {
        bail!("scheduler address `{address}` has no host");
    }
    Ok((host.to_string(), port))
}

/// Refuses, before any work, recipes the cluster cannot run: `checkpoint.strategy: auto` decides
/// from measurements the partitions share inside one process. (Deduplicators and selectors run:
/// [`passes`] decides them before the partitions' plans are sent.)
pub(crate) fn check_recipe(recipe: &Recipe) -> Result<()> {
    if recipe.checkpoint.enabled
        && recipe.checkpoint.strategy == dj_plans::recipe::CheckpointStrategy::Auto
    {
        bail!(
            "--engine ballista does not run checkpoint.strategy: auto (its decisions use measurements the partitions share inside one process). Choose another strategy, or run with --engine local."
        );
    }
    Ok(())
}

/// Fails fast, before a job directory exists, when nothing listens at the scheduler's address,
/// or when the scheduler will not talk to this client (TLS required or credentials refused).
pub(crate) async fn check_scheduler(scheduler: &Scheduler) -> Result<()> {
    let (host, port) = parse_address(&scheduler.address)?;
    let connect = tokio::net::TcpStream::connect((host.as_str(), port));
    match tokio::time::timeout(Duration::from_secs(10), connect).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => bail!(
            "cannot reach the Ballista scheduler at {scheduler}: {e}. Start one with `dj-cluster scheduler --bind {scheduler}` and executors with `dj-cluster executor --scheduler {scheduler}`, or run with --engine local."
        ),
        Err(_) => bail!("cannot reach the Ballista scheduler at {scheduler}: no answer in 10 s"),
    }
    // One call proves the scheduler accepts this client: a job id no job has.
    let call = async {
        scheduler
            .grpc()
            .await?
            .get_job_status(GetJobStatusParams {
                job_id: "dj-fusion-probe".to_string(),
            })
            .await
            .map_err(anyhow::Error::from)
    };
    match tokio::time::timeout(Duration::from_secs(20), call).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => {
            let hint = match &scheduler.tls {
                None => {
                    "if the cluster uses TLS, give this client its credentials with --tls DIR (or DJ_CLUSTER_TLS)"
                }
                Some(_) => {
                    "check that the scheduler runs with --tls and that both credentials come from the same CA (`dj-cluster certs`)"
                }
            };
            bail!(
                "the Ballista scheduler at {scheduler} does not accept this client: {e:#}; {hint}"
            )
        }
        Err(_) => bail!("the Ballista scheduler at {scheduler} did not answer a call in 20 s"),
    }
}

/// A client session whose queries run on the scheduler at `scheduler` (`host:port`), planned
/// with `target_partitions` partitions (1 for a recipe's partition plans, more for a shuffle).
pub(crate) async fn client(
    scheduler: &Scheduler,
    target_partitions: usize,
) -> Result<SessionContext> {
    let (host, port) = parse_address(&scheduler.address)?;
    let (logical, physical) = codecs();
    let mut config = planner::config(target_partitions)
        .with_ballista_logical_extension_codec(logical)
        .with_ballista_physical_extension_codec(physical)
        .with_ballista_job_name("dj-fusion");
    if let Some(tls) = &scheduler.tls {
        config = config.with_ballista_override_create_grpc_client_endpoint(tls.endpoint_override());
    }
    let state = planner::state(config);
    SessionContext::remote_with_state(&format!("df://{host}:{port}"), state)
        .await
        .with_context(|| format!("cannot set up a Ballista session for scheduler {scheduler}"))
}

/// Every operator of the Ballista job that ran `plan` (the client's `DistributedQueryExec`), as
/// the scheduler collected them from the executors' task results: its display line and metrics.
/// This is how per-op counts and times come back from executors on other machines.
pub(crate) async fn executed_operators(
    scheduler: &Scheduler,
    plan: &Arc<dyn ExecutionPlan>,
) -> Result<Vec<(String, MetricsSet)>> {
    let mut job_id = None;
    plan.apply(|node| {
        if let Some(q) = node.downcast_ref::<DistributedQueryExec<LogicalPlanNode>>() {
            job_id = q.job_id();
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    let job_id = job_id.context("the partition's plan did not run as a Ballista job")?;
    let metrics = scheduler
        .grpc()
        .await?
        .get_job_metrics(GetJobMetricsParams {
            job_id: job_id.to_string(),
        })
        .await
        .with_context(|| format!("cannot get the metrics of Ballista job {job_id}"))?
        .into_inner();
    let mut operators = Vec::new();
    for stage in metrics.stages {
        for op in stage.operators {
            let set: MetricsSet = OperatorMetricsSet {
                metrics: op.metrics,
            }
            .try_into()
            .with_context(|| {
                format!("malformed metrics of {} in job {job_id}", op.operator_desc)
            })?;
            operators.push((op.operator_desc, set));
        }
    }
    Ok(operators)
}

/// Content-hashes, here, every partition that will read its input on the cluster and has no
/// saved hash yet, and records the hashes before any executor can write a checkpoint.
pub(crate) async fn hash_before_cluster_reads(
    index: &Arc<InputIndex>,
    ranges: &[RowRange],
    starts: &[Start],
    job: &JobCtx,
    concurrency: usize,
) -> Result<()> {
    let todo: Vec<(usize, Arc<dyn RangeHashSink>)> = starts
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Start::Input))
        .filter_map(|(p, _)| Some((p, job.hash_sinks.get(p).cloned().flatten()?)))
        .collect();
    let todo_ranges: Vec<RowRange> = todo.iter().map(|(p, _)| ranges[*p]).collect();
    let ctx = planner::session(1).task_ctx();
    let digests = hash_partitions(index, &todo_ranges, ctx, concurrency).await?;
    for ((_, sink), (rows, hash)) in todo.iter().zip(digests) {
        sink.range_hashed(0, dj_plans::source::RangeDigest { rows, hash })
            .map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// After a partition ran on the cluster: books the row counts and times its operators reported
/// with their task results (through the scheduler), and reports its checkpoints (their sinks ran
/// on executors, which cannot log events here).
pub(crate) async fn report_partition(
    plan: &PartitionPlan,
    scheduler: &Scheduler,
    listener: Option<&dyn CheckpointListener>,
    elapsed: Duration,
) -> Result<()> {
    let counters = &plan.compiled.counters;
    // The figures are the report's, not the data's: a scheduler that cannot give them (a
    // restart, a job already evicted) leaves them at 0 rather than failing the partition.
    match executed_operators(scheduler, &plan.physical).await {
        Ok(operators) => {
            for (operator, metrics) in operators {
                if plan.loaded_before && operator.starts_with("OpBoundaryExec: load") {
                    continue;
                }
                counters.record_executed(&operator, &metrics);
            }
        }
        Err(e) => tracing::warn!(
            "partition {}: per-op figures unavailable from the scheduler: {e:#}",
            plan.partition
        ),
    }
    let Some(listener) = listener else {
        return Ok(());
    };
    let mut targets = Vec::new();
    plan.compiled.plan.apply(|node| {
        if let datafusion::logical_expr::LogicalPlan::Extension(e) = node
            && let Some(c) = e.node.as_any().downcast_ref::<CheckpointNode>()
        {
            targets.push(c.target.clone());
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    targets.sort_by_key(|t| t.op_index);
    // A successful partition wrote every checkpoint of its plan (on an executor's disk, or
    // published to the job directory's bucket).
    for t in targets
        .into_iter()
        .filter(|t| t.path.is_file() || t.publish.is_some())
    {
        listener.saved(&SavedCheckpoint {
            op_index: t.op_index,
            op_name: t.op_name.clone(),
            partition: t.partition,
            path: t.path.clone(),
            rows: counters.rows_out(t.op_index),
            seconds: elapsed.as_secs_f64(),
            seal: dj_plans::seal::read_seal(&t.path),
            reason: None,
        });
    }
    Ok(())
}

/// Settings of `dj-cluster scheduler`.
#[derive(Debug, Clone)]
pub(crate) struct SchedulerOptions {
    pub bind: SocketAddr,
    /// Seconds without a heartbeat before an executor is declared dead and its tasks rerun.
    pub executor_timeout_seconds: u64,
    /// Serve over mutual TLS with these credentials (and call executors with them).
    pub tls: Option<Arc<ClusterTls>>,
}

/// Runs a scheduler until the process ends.
pub(crate) async fn run_scheduler(opts: SchedulerOptions) -> Result<()> {
    let (logical, physical) = codecs();
    let mut config = SchedulerConfig::default()
        .with_hostname(opts.bind.ip().to_string())
        .with_port(opts.bind.port())
        .with_scheduler_policy(TaskSchedulingPolicy::PullStaged)
        .with_override_session_builder(Arc::new(|config| Ok(planner::state(config))));
    config.bind_host = opts.bind.ip().to_string();
    config.override_logical_codec = Some(logical);
    config.override_physical_codec = Some(physical);
    config.executor_timeout_seconds = opts.executor_timeout_seconds;
    config.expire_dead_executor_interval_seconds = (opts.executor_timeout_seconds / 2).clamp(1, 15);
    if let Some(tls) = &opts.tls {
        config.override_create_grpc_client_endpoint = Some(tls.endpoint_override());
    }
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .context("cannot create the scheduler's cluster state")?;
    let Some(tls) = opts.tls else {
        return start_server(cluster, opts.bind, Arc::new(config))
            .await
            .with_context(|| format!("scheduler on {} stopped", opts.bind));
    };
    // Ballista's own server has no TLS: the same scheduler service is served here, through the
    // mutual-TLS acceptor (only its gRPC service: clients fetch results from the executors).
    config.validate()?;
    let (max_decoding, max_encoding) = (
        config.grpc_server_max_decoding_message_size as usize,
        config.grpc_server_max_encoding_message_size as usize,
    );
    let scheduler = ballista_scheduler::scheduler_process::create_scheduler::<
        LogicalPlanNode,
        datafusion_proto::protobuf::PhysicalPlanNode,
    >(cluster, Arc::new(config))
    .await
    .context("cannot start the scheduler")?;
    let service = SchedulerGrpcServer::new(scheduler)
        .max_decoding_message_size(max_decoding)
        .max_encoding_message_size(max_encoding);
    let listener = tokio::net::TcpListener::bind(opts.bind)
        .await
        .with_context(|| format!("cannot listen on {}", opts.bind))?;
    tracing::info!("scheduler listening on {} (mutual TLS)", opts.bind);
    create_grpc_server(&GrpcServerConfig::default())
        .add_service(service)
        .serve_with_incoming(tls::incoming(listener, tls.server_config(), "scheduler"))
        .await
        .with_context(|| format!("scheduler on {} stopped", opts.bind))
}

/// The executor's physical codec: confined to `roots` (each as written, made absolute, and
/// resolved; the object-storage cache added), or, with none, not confined.
fn executor_codec(roots: &[PathBuf]) -> Result<Arc<dyn PhysicalExtensionCodec>> {
    let codec = DjPhysicalCodec::new(Arc::new(BallistaPhysicalExtensionCodec::default()));
    if roots.is_empty() {
        tracing::warn!(
            "executor not confined: plans may name any path it can read or write \
             (dj-cluster executor --allow-root DIR confines it)"
        );
        return Ok(Arc::new(codec));
    }
    let cache = dj_plans::store::cache_dir();
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    // Each root as written (absolute) and resolved: the client names paths as written.
    let mut resolved = Vec::new();
    for root in roots.iter().chain([&cache]) {
        let real = std::fs::canonicalize(root)
            .with_context(|| format!("--allow-root {}: not a directory here", root.display()))?;
        resolved.push(std::path::absolute(root)?);
        resolved.push(real);
    }
    resolved.dedup();
    tracing::info!(roots = ?resolved, "executor confined to its roots");
    Ok(Arc::new(codec.confined_to(resolved)))
}

/// Refuses a `role` that would listen on `host` beyond this machine without credentials
/// (`--tls`) unless `insecure` allows it (then warns): without them the cluster's calls are not
/// authenticated, so whoever reaches a port could submit plans, and executors read and write
/// what those plans name.
pub(crate) fn check_bind(role: &str, host: &str, tls: bool, insecure: bool) -> Result<()> {
    let loopback = host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback || tls {
        return Ok(());
    }
    if !insecure {
        bail!(
            "the {role} would listen on {host}, beyond this machine, without credentials: anyone \
             who reaches it could run plans that read and write files. Give it --tls DIR (made \
             by `dj-cluster certs`), bind to 127.0.0.1, or pass --insecure on a network you trust"
        );
    }
    tracing::warn!(
        "{role} listening on {host} with --insecure: no authentication; anyone who reaches it can \
         run plans"
    );
    Ok(())
}

/// Settings of `dj-cluster executor`.
#[derive(Debug, Clone)]
pub(crate) struct ExecutorOptions {
    pub scheduler: String,
    pub bind_host: String,
    pub port: u16,
    pub grpc_port: u16,
    /// Tasks run at once.
    pub slots: usize,
    /// Where shuffle output is kept (a temporary directory when unset).
    pub work_dir: Option<PathBuf>,
    /// The directories a plan's local paths must lie under (empty: not confined).
    pub allow_roots: Vec<PathBuf>,
    pub heartbeat_seconds: u64,
    /// Serve Flight over mutual TLS with these credentials, and call the scheduler and other
    /// executors with them.
    pub tls: Option<Arc<ClusterTls>>,
}

/// Runs an executor until the process ends.
pub(crate) async fn run_executor(opts: ExecutorOptions) -> Result<()> {
    let (scheduler_host, scheduler_port) = parse_address(&opts.scheduler)?;
    let (logical, _) = codecs();
    let physical = executor_codec(&opts.allow_roots)?;
    let mut config = ExecutorProcessConfig {
        bind_host: opts.bind_host.clone(),
        external_host: Some(opts.bind_host.clone()),
        port: opts.port,
        grpc_port: opts.grpc_port,
        scheduler_host,
        scheduler_port,
        scheduler_connect_timeout_seconds: 30,
        vcores: opts.slots.max(1),
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        work_dir: opts.work_dir.map(|d| d.display().to_string()),
        executor_heartbeat_interval_seconds: opts.heartbeat_seconds.max(1),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..Default::default()
    };
    if let Some(tls) = &opts.tls {
        let endpoint = tls.endpoint_override();
        config.override_create_grpc_client_endpoint = Some(endpoint.clone());
        // Tasks fetch shuffle data from other executors with their session's override.
        config.override_config_producer = Some(Arc::new(move || {
            datafusion::prelude::SessionConfig::new_with_ballista()
                .with_ballista_override_create_grpc_client_endpoint(endpoint.clone())
        }));
        config.override_arrow_flight_service = Some(Arc::new(flight_over_tls(
            tls.clone(),
            config.grpc_max_decoding_message_size as usize,
            config.grpc_max_encoding_message_size as usize,
        )));
    }
    start_executor_process(Arc::new(config))
        .await
        .with_context(|| format!("executor on {}:{} stopped", opts.bind_host, opts.port))
}

/// The executor's Arrow Flight service (results and shuffle data), as Ballista's, served
/// through the mutual-TLS acceptor.
fn flight_over_tls(
    tls: Arc<ClusterTls>,
    max_decoding: usize,
    max_encoding: usize,
) -> impl Fn(
    String,
    SocketAddr,
    ballista_executor::shutdown::Shutdown,
    GrpcServerConfig,
) -> tokio::task::JoinHandle<Result<(), BallistaError>>
+ Send
+ Sync {
    move |work_dir, address, mut shutdown, grpc| {
        let tls = tls.clone();
        tokio::spawn(async move {
            let server = tls.server_config();
            let listener = tokio::net::TcpListener::bind(address).await?;
            tracing::info!("executor's Arrow Flight service listening on {address} (mutual TLS)");
            let service = FlightServiceServer::new(BallistaFlightService::new(work_dir))
                .max_decoding_message_size(max_decoding)
                .max_encoding_message_size(max_encoding);
            create_grpc_server(&grpc)
                .add_service(service)
                .serve_with_incoming_shutdown(
                    tls::incoming(listener, server, "executor's Arrow Flight service"),
                    shutdown.recv(),
                )
                .await
                .map_err(BallistaError::TonicError)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_need_no_insecure_flag() {
        for host in ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"] {
            check_bind("scheduler", host, false, false).unwrap();
        }
        for host in ["0.0.0.0", "10.77.0.3", "::", "example.org"] {
            let e = check_bind("executor", host, false, false)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(host) && e.contains("--insecure") && e.contains("--tls DIR"),
                "{e}"
            );
            check_bind("executor", host, false, true).unwrap();
            check_bind("executor", host, true, false).unwrap();
        }
    }

    #[test]
    fn addresses_are_host_and_port() {
        assert_eq!(
            parse_address("127.0.0.1:50050").unwrap(),
            ("127.0.0.1".to_string(), 50050)
        );
        assert_eq!(
            parse_address("127.0.0.1").unwrap_err().to_string(),
            "scheduler address `127.0.0.1` is not host:port"
        );
        assert_eq!(
            parse_address("h:x").unwrap_err().to_string(),
            "scheduler address `h:x`: `x` is not a port"
        );
    }
}
