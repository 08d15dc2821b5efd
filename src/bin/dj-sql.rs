//! `dj-sql`: query a job's checkpoints, export, events and input with SQL (see
//! `dj_fusion::jobtools::sql`).

fn main() -> std::process::ExitCode {
    dj_fusion::jobtools::sql::sql_main()
}
