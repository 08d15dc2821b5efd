//! `dj-run`: runs a Data-Juicer recipe (see `dj_fusion::flags`).

fn main() -> std::process::ExitCode {
    dj_fusion::run_main()
}
