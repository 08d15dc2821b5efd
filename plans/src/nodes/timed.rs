//! A stream that times its input's polls: how the global nodes, which drain their input in a
//! task of their own, measure the work upstream of them (see [`super::offline`]).

use std::pin::Pin;
use std::task::{Context, Poll};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream};
use datafusion::physical_plan::metrics::Time;
use futures::Stream;

/// `inner`, adding the time spent in its polls (the work upstream of the node) to `time`.
pub(crate) struct TimedStream {
    inner: SendableRecordBatchStream,
    time: Time,
}

impl TimedStream {
    pub(crate) fn new(inner: SendableRecordBatchStream, time: Time) -> Self {
        TimedStream { inner, time }
    }
}

impl Stream for TimedStream {
    type Item = Result<RecordBatch>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let _timer = this.time.timer();
        this.inner.as_mut().poll_next(cx)
    }
}

impl RecordBatchStream for TimedStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}
