//! The runner's limit on concurrently running partitions, shared with the global nodes (dedup and
//! selector barriers) so that a partition waiting at one hands its permit back.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The runner's limit on concurrently running partitions, with one permit slot per partition so
/// that a partition blocked at a dedup or selector barrier can hand its permit back.
pub struct Concurrency {
    semaphore: Arc<Semaphore>,
    /// The partitions that may run at once, on at most this machine's cores.
    cores: usize,
    slots: Vec<Mutex<Option<OwnedSemaphorePermit>>>,
    peak: std::sync::atomic::AtomicUsize,
}

impl Concurrency {
    pub fn new(limit: usize, partitions: usize) -> Arc<Self> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Arc::new(Concurrency {
            semaphore: Arc::new(Semaphore::new(limit.max(1))),
            cores: limit.max(1).min(cores),
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
        self.publish_spare_cores();
    }

    /// Gives partition `p`'s permit back.
    pub fn release(&self, p: usize) {
        self.slots[p].lock().unwrap().take();
        self.publish_spare_cores();
    }

    /// Lends the spare cores to the expensive batches of the partitions that run
    /// ([`dj_udfs::spare`]).
    fn publish_spare_cores(&self) {
        dj_udfs::spare::set_spare_cores(self.spare_cores());
    }

    /// The cores, up to the limit, that no partition runs on while none waits for a permit
    /// (one that waits would take the core).
    fn spare_cores(&self) -> usize {
        if self.semaphore.available_permits() > 0 {
            self.cores.saturating_sub(self.running())
        } else {
            0
        }
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

impl Drop for Concurrency {
    fn drop(&mut self) {
        dj_udfs::spare::set_spare_cores(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A core is spare once a partition stops (done, or waiting at a barrier) and no other
    /// waits for its permit; never more than the limit allows.
    #[tokio::test]
    async fn spare_cores_follow_the_running_partitions() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let c = Concurrency::new(2, 3);
        assert_eq!(c.spare_cores(), cores.min(2));
        c.acquire(0).await;
        c.acquire(1).await;
        assert_eq!(c.spare_cores(), 0);
        // Partition 2 waits for a permit: the one partition 0 gives back goes to it.
        let waiting = {
            let c = c.clone();
            tokio::spawn(async move { c.acquire(2).await })
        };
        tokio::task::yield_now().await;
        c.release(0);
        waiting.await.unwrap();
        assert_eq!(c.spare_cores(), 0);
        c.release(1);
        assert_eq!(c.spare_cores(), cores.min(2) - 1);
        c.release(2);
        assert_eq!(c.spare_cores(), cores.min(2));
        let one = Concurrency::new(1, 2);
        one.acquire(0).await;
        assert_eq!(one.spare_cores(), 0, "np 1 lends no core");
    }
}
