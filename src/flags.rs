//! Command-line flags of `dj-run`/`dj-process` and `dj-plan`, documented in one place.
//!
//! Besides the flags below, every `--key value` (or `--key=value`) not listed is a Data-Juicer
//! recipe override: `--np 4`, `--export_path out.jsonl`, `--partition.mode manual`,
//! `--checkpoint.op_names a,b`, `--text_length_filter.min_len 20`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Runs a Data-Juicer recipe on DataFusion.
#[derive(Debug, Parser)]
#[command(name = "dj-run", version, about, after_help = OVERRIDES_HELP)]
pub(crate) struct RunFlags {
    /// The recipe YAML file.
    #[arg(long, short = 'c')]
    pub config: PathBuf,
    /// Print the run report as JSON on stdout instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Name a new job (partitioned executor). Rerunning with the same id reuses matching
    /// checkpoints and clears mismatched ones (Data-Juicer's legacy path).
    #[arg(long = "job_id")]
    pub job_id: Option<String>,
    /// Strictly resume the job with this id: validate config, row boundaries and content hashes,
    /// then run only the unfinished work. Fails without touching checkpoints if anything differs.
    #[arg(long)]
    pub resume: Option<String>,
    /// Where the partitions run: in this process, or on an Apache Ballista cluster (see
    /// `dj-cluster`). Overrides the recipe's `engine` without changing the job's recipe hash, so a
    /// job resumes on either engine.
    #[arg(long, value_enum)]
    pub engine: Option<EngineFlag>,
    /// The Ballista scheduler's host:port (default: the recipe's `scheduler`, else
    /// 127.0.0.1:50050).
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Recipe overrides (`--key value`), collected by [`split_overrides`].
    #[arg(skip)]
    pub overrides: Vec<(String, String)>,
}

/// Shows how a recipe compiles to DataFusion plans.
#[derive(Debug, Parser)]
#[command(name = "dj-plan", version, about, after_help = OVERRIDES_HELP)]
pub(crate) struct PlanFlags {
    #[command(subcommand)]
    pub command: PlanCommand,
    #[arg(skip)]
    pub overrides: Vec<(String, String)>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Print the logical and physical plan of a recipe, labelled with its op names.
    Explain {
        /// The recipe YAML file.
        recipe: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

/// Computes every filter's stat of a recipe over its input, without filtering, and writes
/// summaries, histograms and an HTML report (as Data-Juicer's analyzer).
#[derive(Debug, Parser)]
#[command(name = "dj-analyze", version, about, after_help = OVERRIDES_HELP)]
pub(crate) struct AnalyzeFlags {
    /// The recipe YAML file.
    #[arg(long)]
    pub config: PathBuf,
    /// Where to write the analysis (default: `analysis/` next to the recipe's export).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Analyze the rows job ID of the recipe's `work_dir` saved in its checkpoints (after the
    /// latest op every partition checkpointed that the recipe shares with it) instead of the
    /// input: their stats are read, and only later filters' stats are computed.
    #[arg(long, value_name = "ID")]
    pub job: Option<String>,
    #[arg(skip)]
    pub overrides: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineFlag {
    Local,
    Ballista,
}

impl From<EngineFlag> for dj_plans::recipe::Engine {
    fn from(e: EngineFlag) -> Self {
        match e {
            EngineFlag::Local => dj_plans::recipe::Engine::Local,
            EngineFlag::Ballista => dj_plans::recipe::Engine::Ballista,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}

const OVERRIDES_HELP: &str = "Any other --key value pair overrides the recipe, Data-Juicer style: \
--np 4, --export_path out.jsonl, --partition.mode manual, --partition.num_of_partitions 4, \
--checkpoint.strategy every_op, --checkpoint.op_names a,b, --<op_name>.<param> value.";

/// Recipe overrides, `(dotted key, value)` in command-line order.
pub(crate) type Overrides = Vec<(String, String)>;

/// Splits `args` (without the program name) into the ones clap parses and recipe overrides.
/// `own` lists this program's flags that take a value; `switches` those that take none.
pub(crate) fn split_overrides(
    args: &[String],
    own: &[&str],
    switches: &[&str],
) -> (Vec<String>, Overrides) {
    let mut kept = Vec::new();
    let mut overrides = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some(flag) = a.strip_prefix("--").filter(|f| !f.is_empty()) else {
            kept.push(a.clone());
            i += 1;
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        if switches.contains(&name) {
            kept.push(a.clone());
            i += 1;
        } else if own.contains(&name) {
            kept.push(a.clone());
            if inline.is_none() && i + 1 < args.len() {
                kept.push(args[i + 1].clone());
                i += 1;
            }
            i += 1;
        } else {
            let value = match inline {
                Some(v) => v,
                None if i + 1 < args.len() && !args[i + 1].starts_with("--") => {
                    i += 1;
                    args[i].clone()
                }
                // A bare flag is a boolean override, as jsonargparse reads it.
                None => "true".to_string(),
            };
            overrides.push((name.to_string(), value));
            i += 1;
        }
    }
    (kept, overrides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_own_flags_from_overrides() {
        let args: Vec<String> = [
            "--config",
            "r.yaml",
            "--partition.mode",
            "manual",
            "--np=3",
            "--json",
            "--keep_stats_in_res_ds",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (kept, o) = split_overrides(&args, &["config"], &["json", "help", "version"]);
        assert_eq!(kept, vec!["--config", "r.yaml", "--json"]);
        assert_eq!(
            o,
            vec![
                ("partition.mode".to_string(), "manual".to_string()),
                ("np".to_string(), "3".to_string()),
                ("keep_stats_in_res_ds".to_string(), "true".to_string())
            ]
        );
    }
}

/// Starts the processes of an Apache Ballista cluster that runs dj-fusion plans
/// (`dj-run --engine ballista`). Plain Ballista binaries cannot: they lack dj-fusion's operators
/// and plan codecs.
#[derive(Debug, Parser)]
#[command(name = "dj-cluster", version, about)]
pub(crate) struct ClusterFlags {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ClusterCommand {
    /// Run a scheduler (until killed).
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
        /// Seconds without a heartbeat before an executor is declared dead and its work rerun.
        #[arg(long, default_value_t = 30)]
        executor_timeout: u64,
    },
    /// Run an executor that registers with the scheduler (until killed).
    Executor {
        /// The scheduler's host:port.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// Host to listen on, as other processes reach it.
        #[arg(long, default_value = "127.0.0.1")]
        bind_host: String,
        /// Arrow Flight port (results and shuffle data).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// gRPC port (tasks).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once (default: the number of cores).
        #[arg(long)]
        slots: Option<usize>,
        /// Directory for shuffle output (default: a temporary directory).
        #[arg(long)]
        work_dir: Option<PathBuf>,
        /// Seconds between heartbeats to the scheduler.
        #[arg(long, default_value_t = 5)]
        heartbeat: u64,
    },
}
