//! `dj-sql`: query a job's checkpoints, export, events and input with SQL (see
//! `dj_fusion::sql`).

fn main() -> std::process::ExitCode {
    dj_fusion::sql_main()
}
