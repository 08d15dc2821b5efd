//! Logging: `tracing` to stderr (level from `DJ_LOG`, default `warn`) and, once a job directory
//! exists, also at `info` level to a human-readable file in its `logs/`.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

static JOB_LOG: Mutex<Option<File>> = Mutex::new(None);

/// Writes to the job's log file, if one is open.
struct JobLogWriter;

impl Write for JobLogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match JOB_LOG.lock().unwrap().as_mut() {
            Some(f) => f.write(buf),
            None => Ok(buf.len()),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match JOB_LOG.lock().unwrap().as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Installs the subscriber (once per process; later calls do nothing).
pub(crate) fn init() {
    let stderr_filter =
        tracing_subscriber::EnvFilter::try_from_env("DJ_LOG").unwrap_or_else(|_| "warn".into());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(stderr_filter);
    let file = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(|| JobLogWriter)
        .with_filter(LevelFilter::INFO);
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
}

/// From now on, `info` and above also go to `dir/dj_<UTC stamp>.log`.
pub(crate) fn log_to_job_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = format!("dj_{}.log", chrono::Utc::now().format("%Y%m%d_%H%M%S"));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))?;
    *JOB_LOG.lock().unwrap() = Some(f);
    Ok(())
}
