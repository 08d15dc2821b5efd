//! `checkpoint.strategy: auto`: checkpoints placed by measured cost. Every op of a partition's
//! plan gets a checkpoint sink that decides when its first batch (or the end of its input)
//! arrives, which is after the sinks below it have decided: it writes when the estimated work
//! since the partition's last checkpoint costs more than writing this one. Work is estimated per
//! input byte from what earlier partitions of the run measured for each op (priors until one has
//! finished: model ops, deduplicators and audio/video ops 20 ns/byte, other ops 2 ns/byte); the
//! write from the checkpoints written so far (prior 10 ns/byte, as if every input byte were
//! written).

use std::sync::Mutex;

/// What the cost model assumes before anything is measured, per input byte.
pub const PRIOR_EXPENSIVE_NS: f64 = 20.0;
pub const PRIOR_CHEAP_NS: f64 = 2.0;
pub const PRIOR_WRITE_NS: f64 = 10.0;

/// One sink's decision and why, as the events record it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub checkpoint: bool,
    pub reason: String,
}

#[derive(Debug, Default, Clone, Copy)]
struct Measured {
    nanos: f64,
    bytes: f64,
}

impl Measured {
    fn per_byte(self) -> Option<f64> {
        (self.bytes > 0.0).then(|| self.nanos / self.bytes)
    }
}

#[derive(Debug)]
struct State {
    ops: Vec<Measured>,
    /// Checkpoint writes: time against the input bytes of their partitions.
    write: Measured,
    /// Each write's time by (partition, op): the next op's boundary timed it too, which its
    /// measured cost must not include.
    writes: std::collections::HashMap<(usize, usize), u64>,
    /// Per partition and op, the decision once made.
    decided: Vec<Vec<Option<bool>>>,
}

/// The cost model shared by every partition of one run.
#[derive(Debug)]
pub struct AutoCheckpoints {
    /// Prior work per input byte of each op (by its kind).
    priors: Vec<f64>,
    /// Input bytes of each partition.
    partition_bytes: Vec<u64>,
    state: Mutex<State>,
}

impl AutoCheckpoints {
    /// `expensive[i]`: op `i` runs a model or is a deduplicator (the prior for its kind).
    pub fn new(expensive: &[bool], partition_bytes: Vec<u64>) -> AutoCheckpoints {
        let ops = expensive.len();
        AutoCheckpoints {
            priors: expensive
                .iter()
                .map(|e| {
                    if *e {
                        PRIOR_EXPENSIVE_NS
                    } else {
                        PRIOR_CHEAP_NS
                    }
                })
                .collect(),
            state: Mutex::new(State {
                ops: vec![Measured::default(); ops],
                write: Measured::default(),
                writes: Default::default(),
                decided: vec![vec![None; ops]; partition_bytes.len()],
            }),
            partition_bytes,
        }
    }

    /// Whether partition `p` checkpoints after op `op`, deciding it the first time it is asked:
    /// the estimated work of the ops since its last checkpoint (or its start, `first_op`) against
    /// the estimated cost of the write.
    pub fn decide(&self, p: usize, first_op: usize, op: usize) -> Decision {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = self.partition_bytes.get(p).copied().unwrap_or(0) as f64;
        let since = (first_op..op)
            .rev()
            .find(|k| s.decided[p][*k] == Some(true))
            .map_or(first_op, |k| k + 1);
        let mut work_ns = 0.0;
        let mut measured = true;
        for k in since..=op {
            match s.ops[k].per_byte() {
                Some(ns) => work_ns += ns,
                None => {
                    work_ns += self.priors[k];
                    measured = false;
                }
            }
        }
        let (write_ns, write_measured) = match s.write.per_byte() {
            Some(ns) => (ns, true),
            None => (PRIOR_WRITE_NS, false),
        };
        let checkpoint = work_ns > write_ns;
        let source = |m: bool| if m { "measured" } else { "prior" };
        let reason = format!(
            "auto: ops {}-{} cost {:.1} ns/byte ({}) x {} bytes = {:.3} ms {} writing {:.1} ns/byte ({}) = {:.3} ms",
            since,
            op,
            work_ns,
            source(measured),
            bytes as u64,
            work_ns * bytes / 1e6,
            if checkpoint { ">" } else { "<=" },
            write_ns,
            source(write_measured),
            write_ns * bytes / 1e6
        );
        s.decided[p][op] = Some(checkpoint);
        Decision { checkpoint, reason }
    }

    /// What partition `p` measured: each op's time in nanoseconds, as its op boundaries timed
    /// it (a checkpoint written after op `k` is taken out of op `k + 1`'s time).
    pub fn record_partition(&self, p: usize, op_nanos: &[(usize, u64)]) {
        let bytes = self.partition_bytes.get(p).copied().unwrap_or(0) as f64;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for (op, nanos) in op_nanos {
            let written = op
                .checked_sub(1)
                .and_then(|before| s.writes.get(&(p, before)).copied())
                .unwrap_or(0);
            if let Some(m) = s.ops.get_mut(*op) {
                m.nanos += nanos.saturating_sub(written) as f64;
                m.bytes += bytes;
            }
        }
    }

    /// The checkpoint of partition `p` after op `op` took `nanos` to write.
    pub fn record_write(&self, p: usize, op: usize, nanos: u64) {
        let bytes = self.partition_bytes.get(p).copied().unwrap_or(0) as f64;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.write.nanos += nanos as f64;
        s.write.bytes += bytes;
        s.writes.insert((p, op), nanos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With priors only: a cheap chain checkpoints once its work passes one write (after the
    /// fifth cheap op), an expensive op right after it.
    #[test]
    fn priors_checkpoint_after_expensive_ops_and_long_cheap_chains() {
        let mut expensive = [false; 9];
        expensive[2] = true;
        let auto = AutoCheckpoints::new(&expensive, vec![1 << 20]);
        let decisions: Vec<bool> = (0..9).map(|op| auto.decide(0, 0, op).checkpoint).collect();
        // ops 0-2: 2 + 2 + 20 > 10 at op 2; then 2 x 5 = 10 is not > 10, the sixth cheap op is.
        assert_eq!(
            decisions,
            [false, false, true, false, false, false, false, false, true]
        );
        let d = auto.decide(0, 0, 2);
        assert!(d.checkpoint, "a decision is made once and kept");
    }

    /// Measurements replace the priors: an op measured slow gets a checkpoint, and a measured
    /// fast write makes checkpoints cheaper.
    #[test]
    fn later_partitions_use_what_earlier_ones_measured() {
        let auto = AutoCheckpoints::new(&[false, false], vec![1_000_000, 1_000_000]);
        assert!(!auto.decide(0, 0, 0).checkpoint);
        // Partition 0 measured op 0 at 30 ns/byte.
        auto.record_partition(0, &[(0, 30_000_000), (1, 1_000_000)]);
        let d = auto.decide(1, 0, 0);
        assert!(d.checkpoint, "{}", d.reason);
        assert!(d.reason.contains("30.0 ns/byte (measured)"), "{}", d.reason);
        assert!(d.reason.contains("10.0 ns/byte (prior)"), "{}", d.reason);
        // Writes measured at 0.5 ns/byte: op 1 (1 ns/byte) alone is worth one.
        auto.record_write(0, 1, 500_000);
        assert!(auto.decide(1, 0, 1).checkpoint);
        // A partition that resumes after op 0 starts counting there.
        let auto = AutoCheckpoints::new(&[true, false], vec![1 << 20]);
        assert!(!auto.decide(0, 1, 1).checkpoint);
    }
}
