//! vg-root: print the project root the toolkit would use here.

use std::io::Write;

use vecgrep::records::{write_record, RootRecord};
use vecgrep_bins::app::{note_markers_passed_over, note_skipped_paths, resolve_root, run_main, PathsIn, EXIT_FOUND};
use vecgrep_bins::cli::RootCli;

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<RootCli>("vg-root");
    run_main("vg-root", || {
        let (cwd, root, admission, _) =
            resolve_root(&cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), PathsIn::WorkingTree)?;
        let quiet = quiet_as_configured(&matches, &root).unwrap_or(cli.quiet.quiet);
        note_markers_passed_over("vg-root", quiet, (&cwd, &cli.paths), &root);
        note_skipped_paths("vg-root", quiet, &root, &admission);
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

/// `-q`, `--no-quiet` or the config's `quiet`, as every tool reads them;
/// None when the config does not load, which is left to the tools that use
/// it: vg-root is what finds the project whose config it is.
fn quiet_as_configured(matches: &clap::ArgMatches, root: &vecgrep::project::ProjectRoot) -> Option<bool> {
    let given = vecgrep_bins::app::cli_config(matches).ok()?;
    let layers = vecgrep::project::ConfigLayers::load(given, &root.config_path()).ok()?;
    Some(layers.resolve().ok()?.quiet)
}
