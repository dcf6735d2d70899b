//! vg-root: print the project root the toolkit would use here.

use std::io::Write;

use vecgrep::records::{write_record, RootRecord};
use vecgrep_bins::app::{note_markers_passed_over, note_skipped_paths, resolve_root, run_main, PathsIn, EXIT_FOUND};
use vecgrep_bins::cli::RootCli;

fn main() {
    let (cli, _) = vecgrep_bins::app::parse_args::<RootCli>("vg-root");
    run_main("vg-root", || {
        let (cwd, root, admission, _) =
            resolve_root(&cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), PathsIn::WorkingTree)?;
        note_markers_passed_over("vg-root", cli.quiet.quiet, &cwd, &root);
        note_skipped_paths("vg-root", cli.quiet.quiet, &root, &admission);
        let mut out = vecgrep_bins::app::text_stdout(cli.json);
        if cli.json {
            write_record(&mut out, &RootRecord::new(&root))?;
        } else {
            writeln!(out, "{}", root.path.display())?;
        }
        out.flush()?;
        Ok(EXIT_FOUND)
    })
}
