//! `dj-cluster`: start a Ballista scheduler or executor that runs dj-fusion plans (see
//! `dj_fusion::cluster`).

fn main() -> std::process::ExitCode {
    dj_fusion::cluster_main()
}
