//! vg-serve: the HTTP search server. Its definition exists so that help,
//! man page and completions are in place; the server itself is not built yet.

use std::process::ExitCode;

use vecgrep_bins::app::run_main;
use vecgrep_bins::cli::ServeCli;

fn main() -> ExitCode {
    let _cli = vecgrep_bins::app::parse_args::<ServeCli>("vg-serve");
    run_main("vg-serve", || Err(anyhow::anyhow!("the HTTP server is not available in this version; see vg-serve --help")))
}
