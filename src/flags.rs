//! Command-line flags of `dj-run`/`dj-process` and `dj-plan`, documented in one place.
//!
//! Besides the flags below, every `--key value` (or `--key=value`) not listed is a Data-Juicer
//! recipe override: `--np 4`, `--export_path out.jsonl`, `--partition.mode manual`,
//! `--checkpoint.op_names a,b`, `--text_length_filter.min_len 20`.

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

/// The name of `dj-run`, as its resume commands spell it.
pub(crate) const RUN_BIN: &str = "dj-run";

/// Runs a Data-Juicer recipe on DataFusion.
#[derive(Debug, Parser)]
#[command(name = RUN_BIN, version, about, after_help = OVERRIDES_HELP)]
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
    /// What the deduplicators may hold in memory, in MB, before their keys go to disk (default:
    /// the recipe's `memory_budget_mb`, else a quarter of the available memory). The results do
    /// not depend on it, so it does not change the job's recipe hash.
    #[arg(long = "memory_budget_mb", value_parser = clap::value_parser!(u64).range(1..))]
    pub memory_budget_mb: Option<u64>,
    /// This client's credentials for a cluster that requires mutual TLS: a directory with
    /// `ca.pem`, `cert.pem` and `key.pem`, as `dj-cluster certs` makes (default: the
    /// `DJ_CLUSTER_TLS` environment variable).
    #[arg(long, value_name = "DIR")]
    pub tls: Option<PathBuf>,
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

/// The long flags a binary declares to clap (its subcommands' too, and the generated `--help`
/// and `--version`), with their aliases: every other `--key` is a recipe override.
#[derive(Debug, Default)]
pub(crate) struct OwnFlags {
    /// Flags that take a value (`--config r.yaml`, `--config=r.yaml`).
    takes_value: Vec<String>,
    /// Flags that take none (`--json`).
    switches: Vec<String>,
}

impl OwnFlags {
    /// The flags `F` declares.
    pub(crate) fn of<F: CommandFactory>() -> Self {
        let mut command = F::command();
        // Adds the generated `--help` and `--version`, here and in every subcommand.
        command.build();
        let mut own = OwnFlags::default();
        own.add(&command);
        own
    }

    fn add(&mut self, command: &clap::Command) {
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            let list = if arg.get_action().takes_values() {
                &mut self.takes_value
            } else {
                &mut self.switches
            };
            list.push(long.to_string());
            list.extend(
                arg.get_all_aliases()
                    .into_iter()
                    .flatten()
                    .map(str::to_string),
            );
        }
        for sub in command.get_subcommands() {
            self.add(sub);
        }
    }

    fn is_switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }

    fn takes_value(&self, name: &str) -> bool {
        self.takes_value.iter().any(|s| s == name)
    }
}

/// Splits `args` (without the program name) into the ones clap parses for `F` (the flags it
/// declares, see [`OwnFlags`]) and recipe overrides.
pub(crate) fn split_overrides<F: CommandFactory>(args: &[String]) -> (Vec<String>, Overrides) {
    split_with(args, &OwnFlags::of::<F>())
}

fn split_with(args: &[String], own: &OwnFlags) -> (Vec<String>, Overrides) {
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
        if own.is_switch(name) {
            kept.push(a.clone());
            i += 1;
        } else if own.takes_value(name) {
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

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn separates_own_flags_from_overrides() {
        let args = strings(&[
            "--config",
            "r.yaml",
            "--partition.mode",
            "manual",
            "--np=3",
            "--json",
            "--keep_stats_in_res_ds",
        ]);
        let (kept, o) = split_overrides::<RunFlags>(&args);
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

    /// Every long flag `F` declares to clap (and its subcommands, and `--help`/`--version`),
    /// walked here on its own, with whether it takes a value.
    fn declared<F: CommandFactory>() -> Vec<(String, bool)> {
        fn walk(c: &clap::Command, out: &mut Vec<(String, bool)>) {
            for a in c.get_arguments() {
                if let Some(long) = a.get_long() {
                    out.push((long.to_string(), a.get_action().takes_values()));
                }
            }
            c.get_subcommands().for_each(|s| walk(s, out));
        }
        let mut c = F::command();
        c.build();
        let mut out = vec![];
        walk(&c, &mut out);
        out
    }

    /// No declared flag of `F` is read as a recipe override, in any spelling; a flag that takes
    /// a value keeps it, and a switch leaves the next argument alone.
    fn declared_flags_are_own<F: CommandFactory>(expected: &[&str]) {
        let flags = declared::<F>();
        for name in expected {
            assert!(
                flags.iter().any(|(f, _)| f == name),
                "--{name} is not declared"
            );
        }
        for (name, takes_value) in flags {
            let flag = format!("--{name}");
            let spellings = if takes_value {
                vec![vec![flag.clone(), "v".into()], vec![format!("{flag}=v")]]
            } else {
                vec![vec![flag.clone()]]
            };
            for args in spellings {
                let (kept, overrides) = split_overrides::<F>(&args);
                assert_eq!(kept, args, "{flag}");
                assert!(overrides.is_empty(), "{flag} read as an override");
            }
            if !takes_value {
                let (kept, overrides) = split_overrides::<F>(&strings(&[&flag, "--np", "4"]));
                assert_eq!(kept, vec![flag.clone()]);
                assert_eq!(overrides, vec![("np".to_string(), "4".to_string())]);
            }
        }
    }

    #[test]
    fn run_flags_are_not_overrides() {
        declared_flags_are_own::<RunFlags>(&[
            "config",
            "json",
            "job_id",
            "resume",
            "engine",
            "scheduler",
            "help",
            "version",
        ]);
    }

    #[test]
    fn plan_flags_are_not_overrides() {
        declared_flags_are_own::<PlanFlags>(&["format", "help", "version"]);
    }

    #[test]
    fn analyze_flags_are_not_overrides() {
        declared_flags_are_own::<AnalyzeFlags>(&["config", "output", "job", "help", "version"]);
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
        /// Serve over mutual TLS: callers must show a certificate from the cluster's CA. A
        /// directory with `ca.pem`, `cert.pem` and `key.pem`, as `dj-cluster certs` makes.
        #[arg(long, value_name = "DIR")]
        tls: Option<PathBuf>,
        /// Allow a non-loopback --bind without --tls: anyone who reaches the port can then run
        /// plans (see the README's Security).
        #[arg(long)]
        insecure: bool,
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
        /// Serve Flight over mutual TLS, and call the scheduler and other executors with these
        /// credentials (see the scheduler's --tls).
        #[arg(long, value_name = "DIR")]
        tls: Option<PathBuf>,
        /// Allow a non-loopback --bind-host without --tls (see the scheduler's --insecure).
        #[arg(long)]
        insecure: bool,
        /// Confine the executor: every local path a plan names (inputs, checkpoints, key files,
        /// removed-row lists) must lie under one of these directories (repeat the flag; the
        /// object-storage cache, DJ_CACHE_DIR, is added). A plan naming anything else is refused
        /// before it runs. Unset: not confined (a warning says so).
        #[arg(long = "allow-root", value_name = "DIR")]
        allow_roots: Vec<PathBuf>,
    },
    /// Make the cluster's credentials for --tls: a CA (OUT/ca.pem and OUT/ca.key, made unless
    /// both exist, then reused) and, for each --name, a directory OUT/NAME with `ca.pem`,
    /// `cert.pem` and `key.pem` to give that member. Keep OUT/ca.key off the cluster.
    Certs {
        /// Where to write.
        #[arg(long)]
        out: PathBuf,
        /// A member to make credentials for (repeat: scheduler, executor-1, client...).
        #[arg(long = "name", value_name = "NAME", required = true)]
        names: Vec<String>,
        /// Days the certificates are valid.
        #[arg(long, default_value_t = 825)]
        days: u32,
    },
}
