//! Cores a run leaves idle, lent to the partitions still running. Partitions of equal bytes
//! seldom finish together (documents differ in cost, and this VM's cores in speed), and once one
//! is done or waits at a barrier its core idles until the last one ends. The runner publishes how
//! many of its cores are spare ([`set_spare_cores`]); an expensive batch of a text op then
//! computes its second half on a helper thread while the partition's own thread does the first.
//! Each row's result is the same either way.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};

/// Cores no running partition uses, as the runner last published.
static SPARE: Lender = Lender {
    spare: AtomicUsize::new(0),
};

/// A batch with fewer text bytes than this is not split: the hand-off costs tens of
/// microseconds, 256 KB of text a millisecond or more in the ops that matter (the repetition
/// filters, the models). 256 KB measured 4-6% faster than 1 MB on a skewed input.
pub(crate) const MIN_SPLIT_BYTES: usize = 1 << 18;

type Job = Box<dyn FnOnce() + Send>;

/// Sets how many cores no running partition uses (0 when the run ends).
pub fn set_spare_cores(n: usize) {
    SPARE.spare.store(n, Ordering::Relaxed);
}

/// Whether a core is spare now (a batch worth splitting may then find it taken).
pub(crate) fn any() -> bool {
    SPARE.spare.load(Ordering::Relaxed) > 0
}

/// Runs `here` on this thread and `there` on a helper when a core is spare, else both here;
/// returns both results. A panic in `there` is raised here. `there` must not call `join`
/// itself: it could wait for the helper it runs on.
pub(crate) fn join<A, B>(
    here: impl FnOnce() -> A,
    there: impl FnOnce() -> B + Send + 'static,
) -> (A, B)
where
    B: Send + 'static,
{
    SPARE.join(here, there)
}

/// A count of spare cores to claim from.
struct Lender {
    spare: AtomicUsize,
}

/// The helper threads' queue (a `Sender` is shared without a lock; the helpers share the one
/// receiver behind one); a helper starts with the first job and then waits for more.
fn helpers() -> &'static Sender<Job> {
    static HELPERS: OnceLock<Sender<Job>> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let (send, receive) = channel::<Job>();
        let receive = std::sync::Arc::new(Mutex::new(receive));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().max(2) - 1);
        for i in 0..threads {
            let receive = receive.clone();
            std::thread::Builder::new()
                .name(format!("dj-helper-{i}"))
                .spawn(move || {
                    loop {
                        let job = receive.lock().map(|r| r.recv());
                        match job {
                            Ok(Ok(job)) => job(),
                            _ => return,
                        }
                    }
                })
                .expect("spawn a helper thread");
        }
        send
    })
}

impl Lender {
    /// Claims a spare core, if there is one, until the claim is dropped.
    fn claim(&self) -> Option<Claim<'_>> {
        self.spare
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .ok()
            .map(|_| Claim(&self.spare))
    }

    /// [`join`] with this count.
    fn join<A, B>(
        &self,
        here: impl FnOnce() -> A,
        there: impl FnOnce() -> B + Send + 'static,
    ) -> (A, B)
    where
        B: Send + 'static,
    {
        let Some(_claim) = self.claim() else {
            let a = here();
            return (a, there());
        };
        let (send, receive) = channel();
        let job: Job = Box::new(move || {
            let _ = send.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                there,
            )));
        });
        let sent = helpers().send(job);
        let a = here();
        if let Err(std::sync::mpsc::SendError(job)) = sent {
            // No helper: run it here (the job, with `there` in it, came back in the error).
            job();
        }
        let b = receive.recv().expect("the job answers once run");
        match b {
            Ok(b) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// A spare core claimed, given back when dropped (a panic in `here` included), even if the
/// runner has set the count since: at worst one batch more is split.
struct Claim<'a>(&'a AtomicUsize);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a spare core the second half runs on a helper thread, without one here; a panic
    /// there comes back here, and the spare core is given back either way.
    #[test]
    fn second_half_runs_on_a_helper_only_when_a_core_is_spare() {
        let lender = Lender {
            spare: AtomicUsize::new(0),
        };
        let here = std::thread::current().id();
        let (_, there) = lender.join(|| (), || std::thread::current().id());
        assert_eq!(there, here);
        lender.spare.store(1, Ordering::Relaxed);
        let (a, there) = lender.join(|| 1, || std::thread::current().id());
        assert_eq!(a, 1);
        assert_ne!(there, here);
        assert_eq!(lender.spare.load(Ordering::Relaxed), 1);
        let caught = std::panic::catch_unwind(|| lender.join(|| (), || panic!("boom")));
        assert!(caught.is_err());
        assert_eq!(lender.spare.load(Ordering::Relaxed), 1);
        let caught = std::panic::catch_unwind(|| lender.join(|| panic!("here"), || ()));
        assert!(caught.is_err());
        assert_eq!(lender.spare.load(Ordering::Relaxed), 1);
    }
}
