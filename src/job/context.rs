//! The job-directory context a partitioned run plans and runs with: paths, event log, the
//! partitions' content-hash sinks, the object-storage mirror and the auto-checkpoint model.

use std::sync::Arc;

use dj_plans::nodes::CheckpointListener;
use dj_plans::nodes::auto::AutoCheckpoints;
use dj_plans::source::RangeHashSink;

use super::JobPaths;
use super::events::EventLog;
use super::mirror::{JobMirror, Publishing};

/// Job-directory context of a partitioned run.
pub(crate) struct JobCtx {
    pub(crate) paths: JobPaths,
    pub(crate) events: Arc<EventLog>,
    /// Per partition: where the content hash goes when the partition reads its input
    /// (`None`: already known, or not needed).
    pub(crate) hash_sinks: Vec<Option<Arc<dyn RangeHashSink>>>,
    /// The job directory is on object storage: this publishes it.
    pub(crate) mirror: Option<Arc<JobMirror>>,
    /// `checkpoint.strategy: auto`: the run's cost model.
    pub(crate) auto: Option<Arc<AutoCheckpoints>>,
}

impl JobCtx {
    /// Told about each durable checkpoint: logs `checkpoint_save`, then publishes the job
    /// directory when it lives on object storage.
    pub(crate) fn checkpoint_listener(&self) -> Arc<dyn CheckpointListener> {
        match &self.mirror {
            None => self.events.clone(),
            Some(m) => Arc::new(Publishing {
                events: self.events.clone(),
                mirror: m.clone(),
            }),
        }
    }
}
