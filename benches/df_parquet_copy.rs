//! The baseline of `benches/scan_write.sh`: DataFusion's own parquet scan-and-write of a file,
//! with no operator, at the given target partitions.
//!
//!     cargo run --profile bench-fast --example df_parquet_copy -- IN.parquet OUT.parquet [PARTITIONS]

use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::error::Result;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output, rest @ ..] = args.as_slice() else {
        eprintln!("usage: df_parquet_copy IN.parquet OUT.parquet [PARTITIONS]");
        std::process::exit(2);
    };
    let partitions = rest.first().map_or(Ok(2), |p| p.parse()).unwrap_or(2);
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let df = ctx
        .read_parquet(input, ParquetReadOptions::default())
        .await?;
    let written = df
        .write_parquet(
            output,
            DataFrameWriteOptions::new().with_single_file_output(true),
            None,
        )
        .await?;
    let rows: u64 = written
        .iter()
        .filter_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::UInt64Array>()
                .map(|a| a.value(0))
        })
        .sum();
    println!("{rows} rows");
    Ok(())
}
