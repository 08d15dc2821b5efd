//! The runner's limit on concurrently running partitions, shared with the global nodes (dedup and
//! selector barriers) so that a partition waiting at one hands its permit back.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The runner's limit on concurrently running partitions, with one permit slot per partition so
/// that a partition blocked at a dedup or selector barrier can hand its permit back.
pub struct Concurrency {
    semaphore: Arc<Semaphore>,
    slots: Vec<Mutex<Option<OwnedSemaphorePermit>>>,
    peak: std::sync::atomic::AtomicUsize,
}

impl Concurrency {
    pub fn new(limit: usize, partitions: usize) -> Arc<Self> {
        Arc::new(Concurrency {
            semaphore: Arc::new(Semaphore::new(limit.max(1))),
            slots: (0..partitions).map(|_| Mutex::new(None)).collect(),
            peak: Default::default(),
        })
    }

    /// Waits for a permit for partition `p` and holds it in `p`'s slot.
    pub async fn acquire(&self, p: usize) {
        let permit = self
            .semaphore
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore never closed");
        *self.slots[p].lock().unwrap() = Some(permit);
        self.peak
            .fetch_max(self.running(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Gives partition `p`'s permit back.
    pub fn release(&self, p: usize) {
        self.slots[p].lock().unwrap().take();
    }

    /// The most partitions that ever ran at once.
    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many partitions run now.
    pub fn running(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.lock().unwrap().is_some())
            .count()
    }
}
