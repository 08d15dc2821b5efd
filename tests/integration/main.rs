//! dj-fusion's integration tests (one binary, to link DataFusion once).

mod analyze;
mod budget;
mod cli;
mod cluster;
mod common;
mod dashboard;
mod explain;
mod formats;
mod fuzz;
mod golden;
mod hostile;
mod integrity;
mod jobtools;
mod layout;
mod machines;
#[cfg(feature = "media")]
mod media;
mod models;
mod object_store;
mod resume;
mod reuse;
mod staged;
