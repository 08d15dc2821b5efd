//! How to run a recipe, as the command line or a library caller asks: job id, resume token,
//! engine and scheduler overrides, progress, and who hears about the run as it goes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dj_plans::Recipe;
use dj_plans::recipe::Engine;

/// How to run a recipe: `--job_id` / `--resume` and the engine as given on the command line,
/// and what the caller wants to hear while it runs.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub job_id: Option<String>,
    pub resume: Option<String>,
    /// The command that started the job (for the resume command shown to the user).
    pub command: Vec<String>,
    /// Told about the job as it starts (the CLI prints the resume token); `None`: nobody.
    pub observer: Option<Arc<dyn RunObserver>>,
    /// Test hook: a pause after every event, so kill tests can hit every moment.
    pub event_delay: Option<Duration>,
    /// Show progress (bars on a terminal, else a log line every 10 s) on stderr.
    pub progress: bool,
    /// `--engine`: overrides the recipe's `engine`.
    pub engine: Option<Engine>,
    /// `--scheduler`: overrides the recipe's `scheduler`.
    pub scheduler: Option<String>,
    /// `--memory_budget_mb`: overrides the recipe's `memory_budget_mb`.
    pub memory_budget_mb: Option<u64>,
    /// `--tls` (or `DJ_CLUSTER_TLS`): this client's credentials for a cluster that requires
    /// mutual TLS, a directory made by `dj-cluster certs`.
    pub cluster_tls: Option<PathBuf>,
}

/// Where the partitions' plans run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local,
    /// A Ballista cluster, by its scheduler's `host:port`, with this client's TLS credentials
    /// when the cluster requires them.
    Ballista {
        scheduler: String,
        tls: Option<PathBuf>,
    },
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("job_id", &self.job_id)
            .field("resume", &self.resume)
            .field("command", &self.command)
            .field("engine", &self.engine)
            .field("scheduler", &self.scheduler)
            .field("memory_budget_mb", &self.memory_budget_mb)
            .field("cluster_tls", &self.cluster_tls)
            .field("event_delay", &self.event_delay)
            .field("progress", &self.progress)
            .finish()
    }
}

/// What a partitioned job tells its caller while it runs; the library itself prints nothing.
pub trait RunObserver: Send + Sync {
    /// A new checkpointed job started: `resume_command` resumes it if it stops.
    fn resume_token(&self, job_id: &str, resume_command: &[String]);
    /// Something the user should know that does not stop the run.
    fn warning(&self, message: &str);
    /// What the run does that is worth a line (checkpoints reused from another job).
    fn note(&self, message: &str);
}

impl RunOptions {
    /// Tells the observer, if any, that `message` is worth a warning.
    pub(crate) fn warn(&self, message: &str) {
        if let Some(o) = &self.observer {
            o.warning(message);
        }
    }

    /// What the global operators may hold in memory: the flag's budget, else the recipe's, else
    /// a quarter of the memory available (to this process's cgroup, when it has a limit), at
    /// least 64 MB.
    pub fn memory_budget_bytes(&self, recipe: &Recipe) -> u64 {
        if let Some(mb) = self.memory_budget_mb.or(recipe.memory_budget_mb) {
            return mb << 20;
        }
        (available_memory() / 4).max(64 << 20)
    }

    /// The engine the flags choose, else the recipe's.
    pub fn target(&self, recipe: &Recipe) -> Target {
        match self.engine.unwrap_or(recipe.engine) {
            Engine::Local => Target::Local,
            Engine::Ballista => Target::Ballista {
                scheduler: self
                    .scheduler
                    .clone()
                    .unwrap_or_else(|| recipe.scheduler.clone()),
                tls: self.cluster_tls.clone(),
            },
        }
    }
}

/// The memory this process may still take: the host's available memory, or less when the
/// process's cgroup (v1 or v2) has a limit.
fn available_memory() -> u64 {
    let Ok(mut sys) = sysinfo::System::new() else {
        return 0;
    };
    sys.refresh_memory();
    let host = sys.available_memory();
    let Ok(pid) = sysinfo::get_current_pid() else {
        return host;
    };
    sys.refresh_processes(sysinfo::ProcessesToUpdate::Some(&[pid]), false);
    let cgroup = sys.process(pid).and_then(|p| p.cgroup_limits());
    cgroup.map_or(host, |c| host.min(c.free_memory))
}
