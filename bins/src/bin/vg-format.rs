//! vg-format: render hit records (and the judgement and answer that may
//! end them) from stdin for a terminal or a pipe.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use vecgrep::format::{render, render_answer, render_judgement, FormatOptions, OutputMode};
use vecgrep::records::{parse_stream_line, StreamRecord};
use vecgrep_bins::app::{run_main, use_color, EXIT_FOUND, EXIT_NOT_FOUND};
use vecgrep_bins::cli::FormatCli;

fn main() -> ExitCode {
    let (cli, _) = vecgrep_bins::app::parse_args::<FormatCli>("vg-format");
    run_main("vg-format", || {
        let o = &cli.output;
        let mut hits = Vec::new();
        let mut judgement = None;
        let mut answer = None;
        for (i, line) in std::io::stdin().lock().split(b'\n').enumerate() {
            let line = line.context("cannot read standard input")?;
            let text = String::from_utf8(line).map_err(|_| anyhow::anyhow!("line {}: not valid UTF-8", i + 1))?;
            match parse_stream_line(&text, i + 1)? {
                Some(StreamRecord::Hit(hit)) => hits.push(hit),
                Some(StreamRecord::Judgement(j)) => judgement = Some(j),
                Some(StreamRecord::Answer(a)) => answer = Some(a),
                None => {}
            }
        }
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
            cwd: std::env::current_dir().context("cannot read the current directory")?,
        };
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        render(&mut out, &hits, &opts)?;
        if let Some(j) = &judgement {
            render_judgement(&mut out, j, &opts)?;
        }
        if let Some(a) = &answer {
            render_answer(&mut out, a, &hits, &opts)?;
        }
        out.flush()?;
        Ok(if hits.is_empty() { EXIT_NOT_FOUND } else { EXIT_FOUND })
    })
}
