//! Human progress while a job runs: on a terminal, indicatif bars (one per partition, at most
//! [`MAX_BARS`], and a total) with rows/s and ETA; otherwise a plain log line every
//! [`LOG_EVERY`]. Rows are counted where they enter the first op of each partition's plan.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dj_plans::nodes::OpCounters;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

const MAX_BARS: usize = 8;
const LOG_EVERY: Duration = Duration::from_secs(10);

/// One partition to watch: its counters and how many rows it reads.
pub(crate) struct Watched {
    pub partition: usize,
    pub counters: Arc<OpCounters>,
    pub rows: u64,
}

/// Stops the reporter when dropped.
pub(crate) struct Progress {
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Starts reporting on `watched`.
pub(crate) fn start(watched: Vec<Watched>) -> Progress {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handle = {
        let stop = stop.clone();
        Some(std::thread::spawn(move || report(watched, &stop)))
    };
    Progress { stop, handle }
}

fn report(watched: Vec<Watched>, stop: &std::sync::atomic::AtomicBool) {
    let total: u64 = watched.iter().map(|w| w.rows).sum();
    let started = Instant::now();
    let done = |w: &Watched| w.counters.rows_loaded().min(w.rows);
    if std::io::stderr().is_terminal() {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix:>14} [{bar:30}] {pos}/{len} rows {per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let bar = |prefix: String, len: u64| {
            let b = multi.add(
                ProgressBar::new(len)
                    .with_style(style.clone())
                    .with_prefix(prefix),
            );
            b.enable_steady_tick(Duration::from_millis(200));
            b
        };
        let overall = bar("total".into(), total);
        let bars: Vec<ProgressBar> = watched
            .iter()
            .take(MAX_BARS)
            .map(|w| bar(format!("partition {}", w.partition), w.rows))
            .collect();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            for (b, w) in bars.iter().zip(&watched) {
                b.set_position(done(w));
            }
            overall.set_position(watched.iter().map(done).sum());
            std::thread::sleep(Duration::from_millis(100));
        }
        for b in bars.iter().chain([&overall]) {
            b.finish_and_clear();
        }
        return;
    }
    let mut last = Instant::now();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if last.elapsed() < LOG_EVERY {
            continue;
        }
        last = Instant::now();
        let rows: u64 = watched.iter().map(done).sum();
        let finished = watched.iter().filter(|w| done(w) == w.rows).count();
        let secs = started.elapsed().as_secs_f64();
        let rate = rows as f64 / secs.max(1e-9);
        let eta = if rate > 0.0 {
            (total - rows) as f64 / rate
        } else {
            f64::INFINITY
        };
        let line = format!(
            "progress: {rows}/{total} rows ({:.1}%), partitions read {finished}/{}, {rate:.0} rows/s, eta {eta:.0}s",
            100.0 * rows as f64 / total.max(1) as f64,
            watched.len()
        );
        eprintln!("{line}");
        tracing::info!("{line}");
    }
}
