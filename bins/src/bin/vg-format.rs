//! vg-format: render hit and commit records (and the judgement and answer
//! that may end hits) from stdin for a terminal or a pipe.

use std::io::IsTerminal;
use std::path::PathBuf;

use vecgrep::format::{files_left_out, judgement_note, render_stream, FormatOptions, OutputMode};
use vecgrep::project::ConfigLayers;
use vecgrep_bins::app::{cli_config, note, run_main, use_color, EXIT_FOUND, EXIT_NOT_FOUND};
use vecgrep_bins::cli::FormatCli;

const TOOL: &str = "vg-format";

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<FormatCli>(TOOL);
    run_main(TOOL, || {
        let o = &cli.output;
        let mode = if o.json {
            OutputMode::Json
        } else if o.files {
            OutputMode::Files
        } else if o.count {
            OutputMode::Count
        } else if o.heading || (!o.no_heading && std::io::stdout().is_terminal()) {
            OutputMode::Pretty
        } else {
            OutputMode::Flat
        };
        let context = o.context.unwrap_or(0);
        let opts = FormatOptions {
            lines_per_hit: o.lines.map(|n| n as usize).unwrap_or(if mode == OutputMode::Pretty { 3 } else { 1 }),
            mode,
            color: use_color(o.color),
            before: o.before_context.unwrap_or(context),
            after: o.after_context.unwrap_or(context),
            // A working directory removed since: no path leads from it, so
            // paths are shown whole (an empty base), as rg shows them there.
            cwd: std::env::current_dir().unwrap_or_default(),
            line_number: !o.no_line_number,
            with_filename: !o.no_filename,
            terminal: std::io::stdout().is_terminal(),
            null: o.null,
            max_columns: o.max_columns,
            max_columns_preview: o.max_columns_preview,
        };
        let (stdout, reader_gone) = (vecgrep_bins::app::stdout(), vecgrep_bins::app::stdout_reader_gone);
        let stream = render_stream(std::io::stdin().lock(), stdout, &opts, &reader_gone)?;
        // A note as any other: -q (or the config's quiet) silences it.
        if let Some(why) = files_left_out(&stream.commits, opts.mode).filter(|_| !quiet(&cli, &matches, &stream)) {
            note(TOOL, false, &why);
        }
        let advice = stream.judgement.as_ref().and_then(|j| judgement_note(j, opts.mode));
        if let Some(advice) = advice.filter(|_| !quiet(&cli, &matches, &stream)) {
            note(TOOL, false, &advice);
        }
        Ok(if stream.hits.is_empty() && stream.commits.is_empty() { EXIT_NOT_FOUND } else { EXIT_FOUND })
    })
}

/// `-q`, or `quiet` in the config of the project searched: the one the
/// hits come from, or with no hits the judgement's (streams older than its
/// `root`: the current directory's). The setting that search read, the
/// command line first (`--no-quiet` undoes a config file's `quiet = true`).
/// A config that cannot be read is that search's to report, and silences
/// nothing here.
fn quiet(cli: &FormatCli, matches: &clap::ArgMatches, stream: &vecgrep::records::SearchStream) -> bool {
    let hits_root = stream.hits.first().and_then(|h| h.root.as_deref());
    let judged_root = stream.judgement.as_ref().and_then(|j| j.root.as_deref());
    // A log's stream holds commits alone: their root (the current
    // directory's was read, another project's from outside it).
    let commits_root = stream.commits.first().map(|c| c.root.as_str());
    let root =
        hits_root.or(judged_root).or(commits_root).map(PathBuf::from).filter(|r| r.is_absolute()).or_else(|| {
            let cwd = std::env::current_dir().ok()?;
            vecgrep::project::select_root(&cwd, &[]).ok().map(|r| r.path)
        });
    let Ok(flags) = cli_config(matches) else { return cli.quiet };
    // A catalog's hits: the catalog's setting, as its search read it.
    let root = vecgrep_bins::app::catalog_of_hits(&stream.hits).map(|c| c.path).or(root);
    let Some(root) = root else { return cli.quiet };
    let config = root.join(vecgrep::project::PROJECT_DIR).join("config.toml");
    ConfigLayers::load(flags, &config).and_then(|l| l.resolve()).map_or(cli.quiet, |c| c.quiet)
}
