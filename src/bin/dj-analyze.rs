//! `dj-analyze`: every filter's stat over a recipe's input, with summaries, histograms and an
//! HTML report (see `dj_fusion::analyze`).

fn main() -> std::process::ExitCode {
    dj_fusion::analyze_main()
}
