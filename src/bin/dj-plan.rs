//! `dj-plan`: explains how a recipe compiles (see `dj_fusion::flags`).

fn main() -> std::process::ExitCode {
    dj_fusion::plan_main()
}
