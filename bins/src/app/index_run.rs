//! A blocking index run as the command-line tools make it: records on
//! stdout, a progress bar and notes on stderr.

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vecgrep::history::LabelRun;
use vecgrep::index::{EmbedderPool, FileOutcome, IndexObserver, IndexRequest, IndexSummary, RunProgress, WalkedSet};
use vecgrep::project::catalog::Catalog;
use vecgrep::project::shown::SHOWN_PATH_CHARS;
use vecgrep::project::{Skip, WalkOptions};
use vecgrep::records::{write_record, FileRecord, SkipRecord};

use super::embedders::embedder_pool;
use super::interrupt::{answer_unless_interrupted, interrupted, stoppable, INTERRUPTED};
use super::invocation::Invocation;
use super::notes::{note_unresolved, SkipTally};
use super::output::{note, reader_gone, say_line, shown_name, stdout};

/// How a blocking index run reports and what it does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Blocking {
    /// Write `file` and `skip` records on stdout.
    pub records: bool,
    /// Mention routine skips on stderr, not only errors.
    pub notable_skips: bool,
    /// Rebuild the index from nothing.
    pub reindex: bool,
}

/// A blocking index run of the invocation's paths
/// (BlockingModesStartBlockingIndexRun): a progress bar and the large-run
/// prompt on the terminal, records on stdout when asked for. A failure to
/// write the records is the run's error.
pub fn index_blocking(
    tool: &'static str,
    inv: &Invocation,
    walk: &WalkOptions,
    embedders: &mut EmbedderPool,
    how: Blocking,
) -> Result<(IndexSummary, WalkedSet, SkipTally)> {
    let mut obs = CliObserver::new(tool, inv.config.quiet, how.records);
    obs.notable_skips = how.notable_skips;
    let request = IndexRequest {
        root: &inv.root,
        paths: &inv.paths,
        walk,
        config: &inv.config,
        reindex: how.reindex,
        warn_on_large: true,
        smallest_first: false,
    };
    let result = stoppable(|| vecgrep::index::run(&request, embedders, &mut obs));
    obs.finish();
    let (summary, files) = result?;
    // A run stopped before its walk (recomputing static vectors) said so itself.
    if summary.cancelled && obs.done.1 > 0 {
        let (done, total) = obs.done;
        // A plain run gives the rest static vectors only: --full embeds them.
        let next = if inv.config.embed_all { "the next run with --full" } else { "the next run" };
        note(
            tool,
            inv.config.quiet,
            &format!("interrupted after {done} of {total} files: what they added is kept, and {next} indexes the rest"),
        );
    }
    match obs.write_error.take() {
        // The reader left; the run went on to its end, and its outcome
        // (files it could not read, an interrupt) is the status still.
        Some(e) if !reader_gone(&e) => Err(e.into()),
        _ => Ok((summary, files, std::mem::take(&mut obs.tally))),
    }
}

/// Index `label` of `catalog` unless it is indexed already (with
/// `reindex`, its index is dropped and made again), with the
/// progress of any index run, saying which projects it names nothing in;
/// with `records`, the run's `file` and `skip` records on stdout.
pub fn index_label(
    tool: &'static str,
    inv: &Invocation,
    (catalog, label): (&Catalog, &str),
    records: bool,
    reindex: bool,
) -> Result<LabelRun> {
    let mut obs = CliObserver::new(tool, inv.config.quiet, records);
    let ran = stoppable(|| {
        let pool = &mut embedder_pool(&inv.config);
        vecgrep::history::index_label(catalog, &inv.root, label, &inv.config, (pool, &mut obs), reindex)
    });
    obs.finish();
    let ran = ran?;
    note_unresolved(tool, inv.config.quiet, &ran.label);
    Ok(ran)
}

/// Reports an index run: records on stdout (when wanted) and, when stderr
/// is a terminal, a progress bar and notes.
pub struct CliObserver {
    tool: &'static str,
    quiet: bool,
    /// Write `file` and `skip` records to stdout.
    records: bool,
    /// Mention routine skips (too large, non-UTF-8 paths) on stderr, not only errors.
    pub notable_skips: bool,
    bar: Option<ProgressBar>,
    /// When the bar was made: it is drawn once the run has lasted
    /// `BAR_AFTER` (or a model loads), so a warm run that rechecks a few
    /// files does not flash one.
    bar_made: Option<Instant>,
    /// A model loaded before the first file: its seconds must not weigh
    /// on the bar's ETA, which is reset at the first file.
    loaded_model: bool,
    /// First error writing records (a closed pipe), reported after the run.
    pub write_error: Option<io::Error>,
    /// The files passed over, by reason.
    tally: SkipTally,
    /// Files processed of those needing work, as last reported.
    done: (usize, usize),
}

impl CliObserver {
    pub fn new(tool: &'static str, quiet: bool, records: bool) -> Self {
        CliObserver {
            tool,
            quiet,
            records,
            notable_skips: true,
            bar: None,
            bar_made: None,
            loaded_model: false,
            write_error: None,
            tally: SkipTally::default(),
            done: (0, 0),
        }
    }

    fn emit<T: serde::Serialize>(&mut self, record: &T) {
        if self.records && self.write_error.is_none() {
            let mut out = stdout();
            if let Err(e) = write_record(&mut out, record) {
                self.write_error = Some(e);
            }
        }
    }

    fn say(&self, message: &str) {
        if !self.quiet {
            self.say_always(message);
        }
    }

    /// What makes the status 2 is said even with `--quiet`: an error is
    /// never silent (spec/exit-codes.md).
    fn say_always(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| say_line(self.tool, message)),
            None => say_line(self.tool, message),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Draw the bar once the run has lasted `BAR_AFTER`.
    fn draw_when_due(&self) {
        let Some(bar) = &self.bar else { return };
        if bar.is_hidden() && self.bar_made.is_some_and(|t| t.elapsed() >= BAR_AFTER) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl IndexObserver for CliObserver {
    fn note(&mut self, message: &str) {
        self.say(message);
    }

    fn planned(&mut self, _files: usize, to_embed: usize, _rechecks: usize, bytes: u64) {
        self.done = (0, to_embed);
        if self.quiet || to_embed == 0 || !io::stderr().is_terminal() {
            return;
        }
        let bar = progress_bar(
            format!("{}: indexing", shown_name(self.tool)),
            bytes,
            "{binary_bytes}/{binary_total_bytes}, {msg}",
        );
        bar.set_message(format!("0/{to_embed} files"));
        self.bar = Some(bar);
        self.bar_made = Some(Instant::now());
    }

    fn loading_model(&mut self) {
        if let Some(bar) = &self.bar {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.set_message("loading the model");
            self.loaded_model = true;
        }
    }

    fn confirm_large(&mut self, to_embed: usize, threshold: u64) -> bool {
        // No terminal to ask on means proceed (BlockingIndexMayWarnAndAbort).
        if !io::stderr().is_terminal() {
            return true;
        }
        let Ok(tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else {
            return true;
        };
        // A Ctrl-C typed before the question stops the run, which it then
        // says, as one during the run would.
        if interrupted() {
            return true;
        }
        let mut writer = &tty;
        let _ = write!(
            writer,
            "{}: {to_embed} files need indexing (more than index_warn_threshold = {threshold}); this may take a while. Continue? [y/N] ",
            shown_name(self.tool)
        );
        // Ctrl-C or SIGTERM at the question declines it (the run then
        // ends as a stopped one, 130), so that an index this run made for
        // the question is removed, not left empty and marked unfinished.
        let Some(answer) = answer_unless_interrupted(&tty) else { return false };
        matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }

    fn skipped(&mut self, skip: &Skip) {
        *self.tally.by_reason.entry(skip.reason.code()).or_default() += 1;
        self.tally.paths.insert(skip.path.clone());
        let path = || {
            vecgrep::project::shown::clipped_middle(vecgrep::project::shown::rel_or_dot(&skip.path), SHOWN_PATH_CHARS)
        };
        let message = || format!("skipping {}: {}", path(), skip.reason.describe());
        if skip.reason.is_warning() {
            self.tally.warnings.push(message());
        }
        if skip.reason.is_error() {
            self.say_always(&message());
        } else if skip.reason.is_warning() || (self.notable_skips && skip.reason.is_notable()) {
            self.say(&message());
        }
        self.emit(&SkipRecord::new(skip));
    }

    fn file(&mut self, rel: &str, outcome: FileOutcome, chunks: u64) {
        self.emit(&FileRecord::new(rel, outcome, chunks));
    }

    fn cancelled(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }

    fn progress(&mut self, p: &RunProgress) {
        self.done = (p.files, p.of_files);
        let Some(bar) = &self.bar else { return };
        if std::mem::take(&mut self.loaded_model) {
            bar.reset_eta();
        }
        bar.set_position((p.bytes + p.bytes_in_hand).min(p.of_bytes));
        bar.set_message(format!("{}/{} files, {} chunks", p.files, p.of_files, p.chunks));
        self.draw_when_due();
    }

    fn still_working(&mut self) {
        let Some(bar) = &self.bar else { return };
        // The model has loaded once the embedders work: the files stand
        // where the last of them left them.
        if std::mem::take(&mut self.loaded_model) {
            bar.reset_eta();
            bar.set_message(format!("{}/{} files", self.done.0, self.done.1));
        }
        self.draw_when_due();
        bar.tick();
    }

    fn restatic_progress(&mut self, done: u64, of: u64) {
        if self.quiet || !io::stderr().is_terminal() {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            progress_bar(format!("{}: recomputing static vectors", shown_name(self.tool)), of, "{pos}/{len} chunks")
        });
        bar.set_position(done);
        self.bar_made.get_or_insert_with(Instant::now);
        self.draw_when_due();
        if done >= of {
            // The walk's bar, if the run has work, is its own.
            self.finish();
            self.bar_made = None;
        }
    }
}

/// The bar's `eta`: indicatif's estimate, or `?` while it has none. It
/// says `0s` before anything is done or just after a reset, which read as
/// nearly finished while one big file embedded for minutes (audit 237).
fn time_left(state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write) {
    let left = state.eta();
    let _ = if left.is_zero() && state.len().is_some_and(|len| state.pos() < len) {
        write!(out, "?")
    } else {
        write!(out, "{:#}", indicatif::HumanDuration(left))
    };
}

/// How long an index run goes before its bar is drawn.
const BAR_AFTER: Duration = Duration::from_millis(400);

/// A progress bar for stderr, not drawn until given a draw target:
/// `prefix [=====>    ] COUNTED (elapsed, eta)`, COUNTED an indicatif
/// template piece saying how far it is (`{pos}/{len} commits`).
pub fn progress_bar(prefix: String, len: u64, counted: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(&format!("{{prefix}} [{{bar:30}}] {counted} ({{elapsed}}, eta {{eta}})"))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("eta", time_left)
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix);
    bar
}
