//! `dj-job`: monitor, stop and list partitioned jobs (see `dj_fusion::jobtools`).

fn main() -> std::process::ExitCode {
    dj_fusion::job_main()
}
