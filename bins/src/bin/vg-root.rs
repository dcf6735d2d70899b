//! vg-root: print the project root the toolkit would use here.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use vecgrep::records::{write_record, RootRecord};
use vecgrep_bins::app::{resolve, run_main, EXIT_FOUND};
use vecgrep_bins::cli::RootCli;

fn main() -> ExitCode {
    let cli = RootCli::parse();
    run_main("vg-root", || {
        let inv = resolve("vg-root", &cli.paths, cli.skip_outside_root, Default::default())?;
        let mut out = std::io::stdout().lock();
        if cli.json {
            write_record(&mut out, &RootRecord::new(&inv.root))?;
        } else {
            writeln!(out, "{}", inv.root.path.display())?;
        }
        out.flush()?;
        Ok(EXIT_FOUND)
    })
}
