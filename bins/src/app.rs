//! Glue shared by the binaries: the error and exit-code policy, resolving an
//! invocation (root, paths, config), loading the embedder, and reporting an
//! index run as records on stdout and progress on stderr.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use vecgrep::embed::{Embedder, LocalEmbedder, Profile};
use vecgrep::format::escape_controls;
use vecgrep::history::{Label, LabelRun};
use vecgrep::index::{EmbedderPool, FileOutcome, IndexObserver, IndexRequest, IndexSummary, RunProgress, WalkedSet};
use vecgrep::project::catalog::{admit_catalog_paths, load_context, Catalog, Catalogs};
use vecgrep::project::shown::SHOWN_PATH_CHARS;
use vecgrep::project::{admit_paths, select_root, Admission, AdmittedPath, ProjectRoot, RootMarker};
use vecgrep::project::{ConfigError, ConfigLayers, ConfigValues, EmbedderSource, ResolvedConfig, SETTINGS};
use vecgrep::project::{Skip, WalkOptions};
use vecgrep::records::{write_record, FileRecord, SkipRecord};
use vecgrep::search::MeaningSides;

use crate::cli::{CatalogArgs, LabelArgs};
/// Exit statuses, as in ripgrep.
pub const EXIT_FOUND: u8 = 0;
pub const EXIT_NOT_FOUND: u8 = 1;
pub const EXIT_ERROR: u8 = 2;
/// Stopped by Ctrl-C (or SIGTERM), as a shell reports a process SIGINT ended.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Run a binary's body: print any error as one line `tool: cause: cause`,
/// treat a closed stdout as success, and end the process with the outcome's
/// exit code.
pub fn run_main(tool: &str, body: impl FnOnce() -> Result<u8>) -> ! {
    ignore_file_size_signal();
    let code = match body() {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => EXIT_FOUND,
        Err(e) if e.is::<SaidBefore>() => EXIT_ERROR,
        Err(e) => {
            say_line(tool, &error_line(&e));
            EXIT_ERROR
        }
    };
    end_process(code)
}

/// The working directory, or the one-line error every tool gives when it
/// was removed under the shell.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|e| anyhow!("cannot read the current directory: {e}"))
}

/// An error and its causes as one line, each cause said once (the
/// library's, which servers' notes and answers use too).
pub use vecgrep::project::shown::error_line;

/// End the process with `code`, its output flushed, without running the
/// exit handlers of the native libraries it loaded. ONNX Runtime's tear
/// down its globals even while another thread is inside it, and the process
/// then dies of SIGSEGV (exit 139) after its work is done: the picker closed
/// while its search thread was still loading the model did (CI, and 2 in
/// ~65 runs of `pick::the_picker_runs_on_a_shared_index…` under load; the
/// core showed `exit` in ORT's handlers beside `commit_from_memory`). What the
/// tool owns was dropped when its body returned; threads still running are
/// abandoned as a normal exit abandons them, and no index write depends on
/// an exit handler (a kill -9 leaves each index whole too).
fn end_process(code: u8) -> ! {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    end_now(code)
}

/// End the process with `code` at once, as a signal would: no exit
/// handler runs and nothing buffered is written.
#[allow(unsafe_code)]
fn end_now(code: u8) -> ! {
    // SAFETY: `_exit` ends the process and touches no memory of ours.
    unsafe { libc::_exit(i32::from(code)) }
}

/// A write past the file size limit (`ulimit -f`) then fails with EFBIG,
/// which the tool reports in one line as it does a full disk, instead of
/// SIGXFSZ ending it without a word (exit 153) in the middle of a write.
#[allow(unsafe_code)]
fn ignore_file_size_signal() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: ignoring a signal installs no handler, so nothing runs in
    // signal context; the previous disposition is not needed.
    let _ = unsafe { signal(Signal::SIGXFSZ, SigHandler::SigIgn) };
}

/// Set by `vecgrep` on the tools it runs: their messages go under its name,
/// the command the user typed.
pub const RUN_BY_ENV: &str = "VECGREP_RUN_BY";

/// Set by `vecgrep --answer` on its search (vg-query): the search an
/// answer is made from is held to `privacy_mode` as the answer is.
pub const ANSWERING_ENV: &str = "VECGREP_ANSWERING";

/// Set by `vecgrep` on the tools its results are piped to (vg-answer,
/// vg-format) when it searched a catalog, named by `--catalog` or the
/// default context: the catalog searched, whose config they read
/// (`catalog_of_hits`), which a project in two catalogs left unknown.
pub const CATALOG_SEARCHED_ENV: &str = "VECGREP_CATALOG_SEARCHED";

/// Set by `vecgrep` on the tools after the first of a pipeline, which has
/// said what of the project's config it passed over: one note, not one per tool.
pub const CONFIG_NOTED_ENV: &str = "VECGREP_CONFIG_NOTED";

/// The name a tool's errors and notes go under: `vecgrep` when the
/// porcelain ran it, its own otherwise.
pub fn shown_name(tool: &str) -> &str {
    match std::env::var(RUN_BY_ENV) {
        Ok(by) if by == "vecgrep" => "vecgrep",
        _ => tool,
    }
}

/// `written`, or nothing when it failed because the reader of stdout left:
/// what a tool writes after its work is done must not turn the work's
/// outcome (an error, an interrupt) into a closed pipe's success.
pub fn unless_reader_gone(written: io::Result<()>) -> Result<()> {
    match written {
        Err(e) if reader_gone(&e) => Ok(()),
        other => Ok(other?),
    }
}

fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe && stdout_reader_gone()
}

/// Whether an error is a write to a pipe whose reader has gone (`| head`):
/// a broken pipe, and stdout's reader gone. A broken pipe of another
/// connection (a database the server hung up) is an error like any other;
/// it used to end a run with status 0 and nothing said.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<io::Error>()).any(reader_gone)
}

/// Whether stdout is a pipe or socket whose reading end is closed: polling
/// it says so (POLLERR, POLLHUP) without writing to it.
#[allow(unsafe_code)]
pub fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd { fd: libc::STDOUT_FILENO, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd, owned here, for the duration of the call; a zero
    // timeout returns at once.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// Standard output, locked, whose write errors say it was stdout that
/// failed ("cannot write to stdout: No space left on device"): a bare OS
/// error does not say which of the files a tool writes it was. The error's
/// kind is kept, so a reader gone (`| head`) is still told apart.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

pub struct Stdout(io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(on_stdout)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(on_stdout)
    }
}

/// Standard output for text meant to be read (vg-root's, `--stats`',
/// vg-catalog's): on a terminal, the control characters a path or an
/// index's own text may hold (a title or clipboard write, a screen clear)
/// are shown as `^[`…, never obeyed; in a pipe the bytes are as they are,
/// so `cd "$(vg-root)"` still works. Records (`json`) are written as they are.
pub fn text_stdout(json: bool) -> TextStdout {
    TextStdout { out: stdout(), escape: !json && io::stdout().is_terminal() }
}

/// `text_stdout`'s writer.
pub struct TextStdout {
    out: Stdout,
    escape: bool,
}

impl Write for TextStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.out.write(buf);
        }
        // A newline that ends what is written ends a line (`write_fmt`
        // hands over a whole line); one inside is a value's, shown (`^J`),
        // so that a path cannot forge a line of its own
        // ("index:    /etc/passwd").
        let text = String::from_utf8_lossy(buf);
        let (text, end) = text.strip_suffix('\n').map_or((&*text, ""), |text| (text, "\n"));
        self.out.write_all(escape_controls(text).as_bytes())?;
        self.out.write_all(end.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// A line is formatted whole before it is written: `writeln!` hands a
    /// value apart from its line's end, so a value that itself ended in a
    /// newline (a directory named `tail\n`) was taken for the line's end
    /// and broke the line. Whole, only the last newline ends it.
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        if !self.escape {
            return self.out.write_fmt(args);
        }
        self.write_all(args.to_string().as_bytes())
    }
}

fn on_stdout(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write to stdout: {e}"))
}

/// Print a note on stderr unless quiet.
pub fn note(tool: &str, quiet: bool, message: &str) {
    if !quiet {
        say_line(tool, message);
    }
}

/// One line on stderr under the tool's shown name, its control characters
/// made visible as results show them: the names of a repository's files
/// reach the terminal here too, and one holding ESC must not drive it.
pub fn say_line(tool: &str, message: &str) {
    let clipped = vecgrep::project::shown::clipped(message, MAX_SAID_CHARS);
    let said = escape_controls(&clipped);
    // One write: stderr is unbuffered, and a line written in pieces took
    // another writer's words between them (ONNX Runtime's complaints, a
    // reply on a shared stream).
    let _ = io::stderr().write_all(format!("{}: {said}\n", shown_name(tool)).as_bytes());
}

/// The most characters of a line said on stderr: far above any message a
/// tool writes, whose values from outside are clipped where they are
/// quoted; this bounds one that a cause quotes whole (another library's
/// words about a reply of a megabyte).
const MAX_SAID_CHARS: usize = 4000;

/// The root, admitted paths and settings of one invocation.
pub struct Invocation {
    pub cwd: PathBuf,
    pub root: ProjectRoot,
    pub paths: Vec<AdmittedPath>,
    pub config: ResolvedConfig,
    /// The label of the default context, when it chose the catalog searched.
    pub context_label: Option<String>,
}

/// The settings given on the command line: each flag whose id is a
/// setting's key (`vecgrep::project::SETTINGS`), as the user typed it.
pub fn cli_config(matches: &ArgMatches) -> Result<ConfigValues> {
    let given_here = |id: &str| {
        matches!(matches.try_get_raw(id), Ok(Some(_))) && matches.value_source(id) == Some(ValueSource::CommandLine)
    };
    let given: Vec<(&str, String)> = SETTINGS
        .iter()
        .filter_map(|s| {
            // A switch's `--no-` twin (`cli::with_negations`) sets it false.
            if s.switch && given_here(&crate::cli::negation_id(s.key)) {
                return Some((s.key, "false".to_string()));
            }
            if !given_here(s.key) {
                return None;
            }
            let raw = matches.get_raw(s.key)?.next()?;
            Some((s.key, raw.to_string_lossy().into_owned()))
        })
        .collect();
    ConfigValues::from_flags(given.iter().map(|(k, v)| (*k, v.as_str()))).map_err(|e| anyhow!(e))
}

/// Select the root and admit the paths, without reading any config (so that
/// `vg-root` works even where a config file is broken). `catalog` is None
/// for a tool that never searches a catalog (vg-log), else its `--catalog`.
pub fn resolve_root(
    paths: &[PathBuf],
    skip_outside_root: bool,
    catalog: Option<&CatalogArgs>,
    paths_in: PathsIn,
) -> Result<(PathBuf, ProjectRoot, Admission, Option<String>)> {
    let cwd = current_dir()?;
    let in_catalog = |catalog: Catalog, label| {
        let in_label = paths_in == PathsIn::Label;
        let admission = admit_catalog_paths(&catalog, &cwd, paths, skip_outside_root, in_label)?;
        Ok((cwd.clone(), catalog.root(), admission, label))
    };
    if let Some(name) = catalog.and_then(|c| c.catalog.as_deref()) {
        return in_catalog(Catalogs::of_user()?.open(name)?, None);
    }
    let root = match paths_in {
        PathsIn::WorkingTree | PathsIn::Label => select_root(&cwd, paths)?,
        // A place in the revision gone from the working tree chooses the
        // root by what is left of it (`../repo/src` deleted since: from
        // outside the project, the root was refused as missing).
        PathsIn::Revision => select_root(&cwd, &revision_paths_on_disk(paths))?,
    };
    // An explicit --rev names a revision of the project here: the default
    // context gives way to it (catalogs.md), as its label does.
    let rev_here = paths_in == PathsIn::Revision && !matches!(root.marker, RootMarker::None | RootMarker::Catalog);
    if catalog.is_some() && paths.is_empty() && !rev_here {
        if let Some((catalog, label)) = catalog_here(&root, &cwd)? {
            return in_catalog(catalog, label);
        }
    }
    let admission = match paths_in {
        PathsIn::WorkingTree | PathsIn::Label => admit_paths(&root, &cwd, paths, skip_outside_root)?,
        PathsIn::Revision => in_revision(&root, &cwd, paths, skip_outside_root)?,
    };
    Ok((cwd, root, admission, None))
}

/// Where the PATH arguments of a command name places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathsIn {
    /// The working tree: each must exist.
    WorkingTree,
    /// A git revision searched (`--rev`): a place in it need not exist in
    /// the working tree (a directory since deleted), so each is taken by
    /// its text (`admit_paths_lexically`).
    Revision,
    /// A catalog's label searched (`--label`): a place in a project's tree
    /// at the label need not exist on disk now, and is taken by its text
    /// below what is left of it; outside a catalog, as the working tree's.
    Label,
}

/// What of a revision's PATHs chooses the root: those on disk, or with
/// none, what is left of each (a gone one beside another made two, and
/// no root was chosen from them).
fn revision_paths_on_disk(paths: &[PathBuf]) -> Vec<PathBuf> {
    let present: Vec<PathBuf> = paths.iter().filter(|p| p.symlink_metadata().is_ok()).cloned().collect();
    match present.is_empty() {
        true => paths.iter().map(|p| nearest_on_disk(p)).collect(),
        false => present,
    }
}

/// `path`, or its nearest ancestor on disk (`.` for a relative one none
/// of whose ancestors is there).
fn nearest_on_disk(path: &Path) -> PathBuf {
    let found = path.ancestors().find(|a| !a.as_os_str().is_empty() && a.symlink_metadata().is_ok());
    found.map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn in_revision(root: &ProjectRoot, cwd: &Path, paths: &[PathBuf], skip_outside_root: bool) -> Result<Admission> {
    let lexical = vecgrep::project::admit_paths_lexically(root, cwd, paths, skip_outside_root)?;
    let admitted = lexical
        .admitted
        .into_iter()
        .map(|rel| {
            let abs = root.path.join(&rel);
            AdmittedPath { is_dir: abs.is_dir(), abs, rel }
        })
        .collect();
    Ok(Admission { admitted, skipped: lexical.skipped })
}

/// The catalog a search here with `paths` and no `--catalog` searches by
/// the default context (`vg-catalog use`), as `resolve` decides it; None
/// where the project here is searched. The porcelain tells the tools its
/// results are piped to (`CATALOG_SEARCHED_ENV`).
pub fn default_context_catalog(paths: &[PathBuf]) -> Option<String> {
    if !paths.is_empty() {
        return None;
    }
    let cwd = current_dir().ok()?;
    let root = select_root(&cwd, paths).ok()?;
    catalog_here(&root, &cwd).ok().flatten().map(|(catalog, _)| catalog.name)
}

/// The catalog a command given no `--catalog` and no PATH searches from
/// `cwd`, whose root is `here`, with the label the default context adds:
/// in a catalog's own directory, that catalog; else the default context's
/// (`vg-catalog use`) when the current directory is in no project or in
/// one of that catalog's (a project of its own keeps its own search).
fn catalog_here(here: &ProjectRoot, cwd: &Path) -> Result<Option<(Catalog, Option<String>)>> {
    if here.marker == RootMarker::Catalog {
        return Ok(Some((Catalog::read(&here.path)?, None)));
    }
    // Inside a project, a context that cannot be read is no reason to fail
    // its own search; outside any, it is what would be searched.
    let in_a_project = here.marker != RootMarker::None;
    let context = match load_context() {
        Err(_) if in_a_project => return Ok(None),
        read => read?,
    };
    let Some(name) = context.catalog else { return Ok(None) };
    let catalog = match Catalogs::of_user().and_then(|c| c.open(&name)) {
        Err(_) if in_a_project => return Ok(None),
        opened => opened.with_context(|| {
            format!("the default context names catalog '{name}' (vg-catalog use --clear forgets it)")
        })?,
    };
    // The catalog's project here may be the root found or a subdirectory of
    // it (a monorepo's service); a repository nested in one of its projects
    // is a project of its own.
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let holds_cwd_within_root = |p: &Path| p.starts_with(&here.path) && cwd.starts_with(p);
    let applies = !in_a_project || catalog.projects.iter().any(|p| holds_cwd_within_root(&p.path));
    Ok(applies.then_some((catalog, context.label)))
}

/// The catalog label an invocation indexes or searches: `--label`, else
/// the default context's when it chose the catalog; an error when there
/// is a label but no catalog.
/// `rev_given`: an explicit `--rev`, which the context's label gives way to.
pub fn label_of(label: &LabelArgs, inv: &Invocation, rev_given: bool) -> Result<Option<(Catalog, String)>> {
    let context = inv.context_label.clone().filter(|_| !rev_given);
    let Some(name) = label.label.clone().or(context) else { return Ok(None) };
    if inv.root.marker != RootMarker::Catalog {
        return Err(anyhow!("--label needs a catalog (--catalog NAME, or a default context set by vg-catalog use)"));
    }
    Ok(Some((Catalog::read(&inv.root.path)?, name)))
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

/// Each project of the catalog a label names nothing in, and why.
pub fn note_unresolved(tool: &str, quiet: bool, label: &Label) {
    for (project, why) in &label.unresolved {
        note(
            tool,
            quiet,
            &format!("label '{}' names nothing in project {project} ({why}); it is left out", label.state.label),
        );
    }
}

/// Say how many chunks were stored without a vector, if any.
pub fn note_holes(tool: &str, quiet: bool, holes: u64) {
    if holes > 0 {
        let (n, verb) = if holes == 1 { ("1 chunk", "it") } else { (&*format!("{holes} chunks"), "them") };
        note(
            tool,
            quiet,
            &format!("{n} could not be embedded and will be found only by a search of words (--mode lexical) (holes); the next run tries {verb} again"),
        );
    }
}

/// Report paths skipped under `--skip-outside-root`.
pub fn note_skipped_paths(tool: &str, quiet: bool, root: &ProjectRoot, admission: &Admission) {
    let outside = match root.marker {
        // A catalog's directory is named as the catalog.
        RootMarker::Catalog => format!(
            "in none of the projects of catalog '{}'",
            root.path.file_name().unwrap_or_default().to_string_lossy()
        ),
        _ => format!("outside the project root '{}'", root.path.display()),
    };
    for p in &admission.skipped {
        let shown = vecgrep::project::shown::clipped_middle(&p.to_string_lossy(), SHOWN_PATH_CHARS);
        note(tool, quiet, &format!("skipping '{shown}': {outside}"));
    }
}

/// Say which markers another user put in a shared directory were not
/// taken as the root (`project::planted_by`): the root is elsewhere, and why.
pub fn note_markers_passed_over(tool: &str, quiet: bool, cwd: &Path, root: &ProjectRoot) {
    for (marker, owner) in vecgrep::project::markers_passed_over(cwd, root) {
        let message = format!(
            "passing over '{}': user {owner}'s, in a shared directory anyone may add to; the project root is '{}'",
            marker.display(),
            root.path.display()
        );
        note(tool, quiet, &message);
    }
}

/// Whether the porcelain's first tool has said what of the config and the
/// root it passed over (`CONFIG_NOTED_ENV`).
fn config_noted() -> bool {
    std::env::var_os(CONFIG_NOTED_ENV).is_some_and(|v| v == "1")
}

/// The settings that say only how an index is built: given with
/// `--no-index`, which builds none, they were passed over in silence.
const BUILD_ONLY: [&str; 5] = ["chunk_size", "chunk_overlap", "embed_all", "index_warn_threshold", "include_generated"];

/// Refuse a setting of how the index is built (`BUILD_ONLY`, or its
/// `--no-` twin) given on the command line with `--no-index`.
pub fn refuse_build_settings_without_indexing<T: clap::CommandFactory>(matches: &ArgMatches) -> Result<()> {
    let cmd = command::<T>();
    for id in crate::cli::expand_groups(&cmd, &BUILD_ONLY) {
        if matches.value_source(&id) == Some(clap::parser::ValueSource::CommandLine) {
            let arg = cmd.get_arguments().find(|a| a.get_id().as_str() == id).expect("a setting of the command");
            let flag = crate::cli::flag_name(arg);
            return Err(anyhow!("{flag} says how the index is built; --no-index searches it as it is"));
        }
    }
    Ok(())
}

/// Refuse `--index-warn-threshold` given on the command line to a tool
/// whose runs ask no one: a server's, or the picker's in the background
/// (`why`). It was taken and passed over.
pub fn refuse_warn_threshold(matches: &ArgMatches, why: &str) -> Result<()> {
    match matches.value_source("index_warn_threshold") {
        Some(ValueSource::CommandLine) => Err(anyhow!("--index-warn-threshold does nothing here: {why}")),
        _ => Ok(()),
    }
}

/// Select the root (or the catalog: see `resolve_root`), admit the paths and
/// resolve the config.
pub fn resolve(
    tool: &str,
    paths: &[PathBuf],
    skip_outside_root: bool,
    catalog: Option<&CatalogArgs>,
    cli: ConfigValues,
) -> Result<Invocation> {
    resolve_in(tool, paths, skip_outside_root, catalog, cli, PathsIn::WorkingTree)
}

/// As `resolve`, with the PATH arguments naming places `paths_in` says.
pub fn resolve_in(
    tool: &str,
    paths: &[PathBuf],
    skip_outside_root: bool,
    catalog: Option<&CatalogArgs>,
    cli: ConfigValues,
    paths_in: PathsIn,
) -> Result<Invocation> {
    let (cwd, mut root, admission, context_label) = resolve_root(paths, skip_outside_root, catalog, paths_in)?;
    let config = resolve_config(tool, &root, cli)?;
    root.shared = vecgrep::project::shared_index(&root, &config);
    if !config_noted() {
        note_markers_passed_over(tool, config.quiet, &cwd, &root);
    }
    note_skipped_paths(tool, config.quiet, &root, &admission);
    Ok(Invocation { cwd, root, paths: admission.admitted, config, context_label })
}

/// An error the tool before this one in the porcelain's pipeline said
/// already (a config file it read too): the status is 2, the line is not
/// written twice.
#[derive(Debug)]
pub struct SaidBefore(anyhow::Error);

impl std::fmt::Display for SaidBefore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for SaidBefore {}

/// The settings of `root` with `cli` on top, saying which of the project's
/// own keys were passed over because it is not trusted.
pub fn resolve_config(tool: &str, root: &ProjectRoot, cli: ConfigValues) -> Result<ResolvedConfig> {
    let advice = trust_advice(&cli);
    resolve_config_advising(tool, root, cli, &advice, config_noted())
}

/// `resolve_config` of a root whose config the pipeline's first tool did
/// not read (a catalog's project, where it read the catalog's): what is
/// wrong with it is said here, whatever the porcelain says was noted.
pub fn resolve_config_unread(tool: &str, root: &ProjectRoot, cli: ConfigValues) -> Result<ResolvedConfig> {
    let advice = trust_advice(&cli);
    resolve_config_advising(tool, root, cli, &advice, false)
}

/// How to trust a project's config: not after `--no-trust-project-config`,
/// which said not to (the advice sent the user to the global file that
/// trusts it already).
fn trust_advice(cli: &ConfigValues) -> String {
    if cli.trust_project_config == Some(false) {
        return "--no-trust-project-config was given".to_string();
    }
    let global =
        vecgrep::project::global_config_path().map_or("your global config".to_string(), |p| p.display().to_string());
    format!("pass --trust-project-config or set trust_project_config = true in {global} to allow it")
}

/// `resolve_config` for a root a stream named rather than the user chose
/// (vg-answer's, from its hits): trusting one's own projects' configs is
/// not trusting any directory a stream names, so its config is trusted
/// only when this command line says so.
pub fn resolve_stream_root_config(tool: &str, root: &ProjectRoot, mut cli: ConfigValues) -> Result<ResolvedConfig> {
    if cli.trust_project_config != Some(true) {
        cli.trust_project_config = Some(false);
    }
    let advice =
        "the results came from there, not from the project you run in; pass --trust-project-config to allow it";
    // No tool before it read that root's config.
    resolve_config_advising(tool, root, cli, advice, false)
}

/// The config at `root`, its notes said with `advice` on trusting it,
/// unless `noted`: the pipeline's first tool read the same config and said
/// them. Only the user's own `quiet` silences them: an untrusted file's
/// would hide what of it was passed over.
fn resolve_config_advising(
    tool: &str,
    root: &ProjectRoot,
    cli: ConfigValues,
    advice: &str,
    noted: bool,
) -> Result<ResolvedConfig> {
    let qualifiers_given = (cli.embedder_url.is_some(), cli.store_project.is_some() || cli.store_adopt == Some(true));
    let config = match ConfigLayers::load(cli, &root.config_path()) {
        // A file's fault: the first tool of the pipeline read it too, and said so.
        Err(e @ (ConfigError::Read { .. } | ConfigError::Parse { .. })) if noted => {
            return Err(SaidBefore(e.into()).into())
        }
        loaded => loaded?.resolve()?,
    };
    if let Some((path, keys)) = config.untrusted.as_ref().filter(|_| !noted) {
        note(
            tool,
            config.quiet_by_user,
            &format!(
                "ignoring {} of {}: a repository's own config may not {}; {advice}",
                keys.join(", "),
                path.display(),
                vecgrep::project::why_untrusted(keys)
            ),
        );
    }
    if let Some((path, asked)) = config.bounded.as_ref().filter(|_| !noted && walks_files(tool)) {
        note(
            tool,
            config.quiet_by_user,
            &format!(
                "holding {} of {} to your own settings or the defaults: a repository's own config may make a run or a server's limits smaller, not larger, unless trusted (--trust-project-config)",
                asked.join(", "),
                path.display()
            ),
        );
    }
    if !noted {
        note_unused_qualifiers(tool, &config, qualifiers_given);
    }
    Ok(config)
}

/// Whether `tool` reads a project's files, and so the settings that bound
/// a run over them and the store their index is kept in: vg-log reads its
/// history, whose commit log stays in the checkout, and was told both.
fn walks_files(tool: &str) -> bool {
    !tool.ends_with("vg-log")
}

/// Flags that only qualify another setting, given without it: taken and
/// passed over in silence (`--embedder-url` with the local model, which a
/// user took for remote embedding). Notes of the user's own command line,
/// silenced by any `quiet`; vg-log says of the store flags its own.
fn note_unused_qualifiers(tool: &str, config: &ResolvedConfig, (url_given, store_given): (bool, bool)) {
    use vecgrep::project::EmbedderSource;
    if url_given && config.embedder_source == EmbedderSource::Local {
        let why =
            "--embedder-url is not used: embedder_source is local (--embedder-source remote sends the chunks there)";
        note(tool, config.quiet, why);
    }
    if store_given && config.store_url.is_none() && walks_files(tool) {
        let why = "--store-project and --store-adopt are not used: no shared store is set (--store URL, or store_url)";
        note(tool, config.quiet, why);
    }
}

/// A binary's clap definition as it parses: with its long help and each
/// setting's note in its help (`cli::finished`).
pub fn command<T: clap::CommandFactory>() -> clap::Command {
    crate::cli::finished(T::command())
}

/// ONNX Runtime 1.31 keeps a telemetry event store and a device id under
/// ~/.cache/Microsoft unless its environment variable says not to; turning
/// its events off through the API (`embed::session`) comes after the store
/// is made. Set first thing, while the process has one thread, for it and
/// the tools it runs: vecgrep works offline and keeps to itself.
fn keep_onnx_runtime_to_itself() {
    let (name, value) = vecgrep::embed::ORT_TELEMETRY_OFF;
    std::env::set_var(name, value);
}

/// Parse the command line into the binary's arguments, keeping what clap
/// saw (which flags were given, as typed); a usage error is one line on
/// stderr and status 2.
pub fn parse_args<T: clap::Parser>(tool: &str) -> (T, ArgMatches) {
    keep_onnx_runtime_to_itself();
    let parsed =
        command::<T>().try_get_matches().and_then(|matches| T::from_arg_matches(&matches).map(|args| (args, matches)));
    match parsed {
        Ok(parsed) => parsed,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // clap would print the whole help; one line names what is missing.
            let cmd = command::<T>();
            let names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).filter(|n| *n != "help").collect();
            exit_with_usage_line(tool, &format!("say what to do: {}", names.join(", ")))
        }
        Err(e) => usage_error(tool, e),
    }
}

fn usage_error(tool: &str, e: clap::Error) -> ! {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        print_help_or_version(tool, &e);
    }
    if let (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) = (e.kind(), e.get(ContextKind::InvalidArg)) {
        if let Some(cause) = vg_formats_flag(tool, arg).or_else(|| vg_indexs_flag(tool, arg)) {
            exit_with_usage_line(tool, &cause);
        }
    }
    let rendered = e.render().to_string();
    let cause: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let cause = cause.join(" ");
    exit_with_usage_line(tool, cause.strip_prefix("error: ").unwrap_or(&cause))
}

/// Print `--help` or `--version` as clap would, but say a failed write:
/// clap's own printing ignores it and exits 0 (`vecgrep --help > /dev/full`).
fn print_help_or_version(tool: &str, e: &clap::Error) -> ! {
    let styled = e.render();
    let text = if use_color(crate::cli::ColorChoice::Auto) { styled.ansi().to_string() } else { styled.to_string() };
    let mut out = stdout();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => end_process(EXIT_FOUND),
        Err(e) if reader_gone(&e) => end_process(EXIT_FOUND),
        Err(e) => {
            say_line(tool, &e.to_string());
            end_process(EXIT_ERROR)
        }
    }
}

/// Why `arg` is refused by `tool`, when it is an output flag of vg-format's
/// and `tool` writes the records vg-format shows: clap's own tip points at
/// a flag of similar spelling (`--files`: "--max-filesize").
fn vg_formats_flag(tool: &str, arg: &str) -> Option<String> {
    if !["vg-query", "vg-log", "vg-answer"].contains(&tool) {
        return None;
    }
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    let format = command::<crate::cli::FormatCli>();
    let known = format.get_arguments().any(|a| match name.strip_prefix("--") {
        Some(long) => a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|all| all.contains(&long)),
        None => name.len() == 2 && a.get_short() == name.chars().nth(1),
    });
    known.then(|| {
        format!("'{name}' is an output option of vg-format's, not {tool}'s: {tool} … | vg-format {name} (vecgrep passes it there)")
    })
}

/// Why `arg` is refused by `tool`, when it is one of the flags that turn
/// vg-index from indexing to looking after the index: clap's tip for
/// `--verify` was "--version".
fn vg_indexs_flag(tool: &str, arg: &str) -> Option<String> {
    const UPKEEP: [&str; 5] = ["verify", "forget", "stats", "clear-cache", "reindex"];
    let long = arg.split_once('=').map_or(arg, |(name, _)| name).strip_prefix("--")?;
    (tool != "vg-index" && UPKEEP.contains(&long))
        .then(|| format!("'--{long}' is an option of vg-index's, not {tool}'s: vg-index --{long}"))
}

/// A usage error's one line, pointing at `--help`, and status 2.
fn exit_with_usage_line(tool: &str, cause: &str) -> ! {
    say_line(tool, &format!("{cause} (see '{tool} --help')"));
    std::process::exit(EXIT_ERROR as i32);
}

/// The user's catalog a stream's hits come from, when they name their
/// project: the one catalog that holds a project of that name at the hit's
/// root. A catalog's search reads the catalog's config, never its
/// projects' (catalogs.md), and so do the tools its results are piped to:
/// vg-answer asked the model the top hit's project named, and a typo in
/// that project's config lost the answer. None where no catalog, or more
/// than one, holds it, unless the porcelain said which it searched
/// (`CATALOG_SEARCHED_ENV`).
pub fn catalog_of_hits(hits: &[vecgrep::records::HitRecord]) -> Option<ProjectRoot> {
    let (project, root) = hits.iter().find_map(|h| Some((h.project.as_deref()?, h.root.as_deref()?)))?;
    let holds = |c: &Catalog| c.projects.iter().any(|p| p.name == project && p.path == Path::new(root));
    let searched = std::env::var(CATALOG_SEARCHED_ENV).ok().and_then(|name| Catalogs::of_user().ok()?.open(&name).ok());
    if let Some(catalog) = searched.filter(holds) {
        return Some(catalog.root());
    }
    let (catalogs, _) = Catalogs::of_user().ok()?.list().ok()?;
    let mut holding = catalogs.into_iter().filter(holds);
    let first = holding.next()?;
    holding.next().is_none().then(|| first.root())
}

/// A search of a catalog's index as it is (`--no-index`: no run walks it)
/// says the projects whose directories moved or vanished, as every run
/// does; their hits named directories that were gone, in silence.
pub fn note_missing_projects(tool: &str, quiet: bool, root: &ProjectRoot) {
    if root.marker != RootMarker::Catalog {
        return;
    }
    let Ok(missing) = vecgrep::project::catalog::missing_projects(root) else { return };
    for (name, at) in missing {
        note(
            tool,
            quiet,
            &format!(
                "skipping {name}: the catalog's project is not at {at} (the index holds its files until a run drops them; vg-catalog remove-project drops it)"
            ),
        );
    }
}

/// Say that the index of `searched`, searched as it is (not brought up to
/// date first), may lack files: a run is under way, or the last one over
/// the whole project did not finish. Whether it said so.
pub fn note_if_incomplete(
    tool: &str,
    quiet: bool,
    searched: &ProjectRoot,
    store: &dyn vecgrep::store::IndexReader,
) -> Result<bool> {
    if !store.run_unfinished()? {
        return Ok(false);
    }
    let said = if vecgrep::store::run_under_way(searched) {
        "an index run is under way: results may miss the files it has not reached yet"
    } else {
        "the index is incomplete (no run over the whole project has finished since it was stopped or rebuilt, or could read every file): results may miss files; vg-index completes it"
    };
    note(tool, quiet, said);
    Ok(true)
}

/// Embedders for `config` set up for indexing, loaded when first needed.
pub fn embedder_pool(config: &ResolvedConfig) -> EmbedderPool {
    let statics = static_loader(config);
    let config = config.clone();
    let pool = EmbedderPool::new(move |threads| load_embedder(&config, Profile::Index, threads));
    match statics {
        Some(loader) => pool.with_static(loader),
        None => pool,
    }
}

/// The static tier's table for the local model; None with a remote
/// embedder, whose vectors a table trained on the local model's would not match.
pub fn static_loader(config: &ResolvedConfig) -> Option<vecgrep::embed::StaticLoader> {
    if config.embedder_source == EmbedderSource::Remote {
        return None;
    }
    let model = config.embedder_model.clone();
    Some(Box::new(move || vecgrep::embed::StaticModel::load(&vecgrep::embed::locate_model(&model)?)))
}

/// Threads a query model uses: all the cores, for the one text it embeds.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Load the embedder `config` names for embedding chunks, prepared for
/// `profile`, on `threads` threads.
pub fn load_embedder(config: &ResolvedConfig, profile: Profile, threads: usize) -> Result<Box<dyn Embedder>> {
    load_embedder_for(config, profile, threads, false)
}

/// Load the embedder `config` names for embedding questions (a remote
/// server's requests are tried once: `RemoteSettings::for_queries`).
pub fn load_query_embedder(config: &ResolvedConfig, profile: Profile, threads: usize) -> Result<Box<dyn Embedder>> {
    load_embedder_for(config, profile, threads, true)
}

fn load_embedder_for(
    config: &ResolvedConfig,
    profile: Profile,
    threads: usize,
    queries: bool,
) -> Result<Box<dyn Embedder>> {
    if config.embedder_source == EmbedderSource::Remote {
        let url = config.embedder_url.as_deref().ok_or_else(|| {
            anyhow!("embedder_source = \"remote\" needs embedder_url, the server's /v1/embeddings endpoint (set it in your global config or pass --embedder-url)")
        })?;
        let settings = vecgrep::embed::RemoteSettings::new(
            url,
            &config.embedder_model,
            std::time::Duration::from_secs_f64(config.embedder_timeout),
            config.embedder_batch_size,
        );
        let settings = if queries { settings.for_queries() } else { settings };
        let count = vecgrep::embed::local_token_counter(&config.embedder_model)
            .unwrap_or_else(|| Box::new(vecgrep::embed::estimate_tokens));
        return Ok(Box::new(vecgrep::embed::RemoteEmbedder::connect(settings, count)?));
    }
    let assets = vecgrep::embed::locate(&config.embedder_model)?;
    Ok(Box::new(LocalEmbedder::load(&assets, &config.embedder_model, profile, threads)?))
}

/// Start loading the query embedder on another thread, so that its start-up
/// overlaps the index freshness check instead of following it.
pub fn preload_query_embedder(config: &ResolvedConfig) -> std::thread::JoinHandle<Result<Box<dyn Embedder>>> {
    let config = config.clone();
    std::thread::spawn(move || load_query_embedder(&config, Profile::Query, all_cores()))
}

/// The embedder `preload_query_embedder` started loading.
pub fn join_embedder(handle: std::thread::JoinHandle<Result<Box<dyn Embedder>>>) -> Result<Box<dyn Embedder>> {
    handle.join().unwrap_or_else(|_| Err(anyhow!("loading the embedding model panicked")))
}

/// The models a one-shot search may rank by, loading on other threads while
/// its index pass runs: the model for the query where the index holds the
/// model's vectors, the static table where it ranks statically (reading
/// the tokenizer and the table is a fifth of a search on tokio).
#[derive(Default)]
pub struct Preloading {
    pub query_embedder: Option<std::thread::JoinHandle<Result<Box<dyn Embedder>>>>,
    pub statics: Option<std::thread::JoinHandle<Result<vecgrep::embed::StaticModel>>>,
}

impl Preloading {
    /// Start loading what a search in `config`'s mode needs: the model when
    /// `model_likely`, else the static table (none for a lexical search).
    pub fn start(config: &ResolvedConfig, model_likely: bool) -> Preloading {
        if !vecgrep::search::needs_embedder(config.mode) {
            return Preloading::default();
        }
        if model_likely {
            return Preloading { query_embedder: Some(preload_query_embedder(config)), statics: None };
        }
        Preloading { query_embedder: None, statics: static_loader(config).map(std::thread::spawn) }
    }

    /// `start` for a search of `inv`'s index (vg-query, vg-ask).
    pub fn start_for(inv: &Invocation) -> Preloading {
        Preloading::start(&inv.config, may_need_model(inv))
    }

    /// Wait for what is still loading: a process that exits under a loading
    /// ONNX Runtime can crash.
    pub fn finish(self) {
        if let Some(loading) = self.query_embedder {
            let _ = loading.join();
        }
        if let Some(loading) = self.statics {
            let _ = loading.join();
        }
    }
}

/// Whether the search may need the model for the query, to start loading it
/// (else the static table) while the index is brought up to date: not for
/// a static index, whose meaning the static table ranks (nor for one not
/// made yet, which an index run makes static), unless the config asks
/// every chunk to be embedded. A shared index is not looked at: that would
/// be a connection of its own to a server that may be far away or not
/// answering, before the run's; its search loads the model if it must.
fn may_need_model(inv: &Invocation) -> bool {
    let has_statics = static_loader(&inv.config).is_some();
    let sides_now = |s: &dyn vecgrep::store::IndexReader| MeaningSides::of(s, inv.config.mode, true);
    let local_has_model_vectors = || {
        inv.root.shared.is_none()
            && vecgrep::store::open_for_reading(&inv.root).is_ok_and(|s| sides_now(&*s).is_ok_and(|m| m.by_model))
    };
    vecgrep::search::needs_embedder(inv.config.mode)
        && (!has_statics || inv.config.embed_all || local_has_model_vectors())
}

/// A one-shot search (vg-query, vg-ask) of `store`, the index of
/// `searched`: with the static table where the index has chunks with
/// static vectors only (the index's first tier), and with the model for
/// the query only where it has chunks with the model's vector; each the
/// one `preloading` is loading, or loaded now.
pub fn search_once(
    store: &dyn vecgrep::store::IndexReader,
    preloading: &mut Preloading,
    request: &vecgrep::search::SearchRequest<'_>,
    config: &ResolvedConfig,
    searched: &ProjectRoot,
) -> Result<Vec<vecgrep::search::Hit>> {
    let loader = static_loader(config);
    let sides = MeaningSides::of(store, request.mode, loader.is_some())?;
    let statics = match loader {
        Some(load) if sides.by_statics => {
            if !vecgrep::search::statics_match(store)? {
                return Err(anyhow!(
                    "the index's static vectors come from another static table ({}); run vg-index, or search without --no-index, to recompute them",
                    vecgrep::embed::why_another_table()
                ));
            }
            Some(match preloading.statics.take() {
                Some(loading) => {
                    loading.join().unwrap_or_else(|_| Err(anyhow!("loading the static table panicked")))?
                }
                None => load()?,
            })
        }
        _ => None,
    };
    if sides.by_model {
        refuse_another_model(store, config)?;
    }
    let mut model = match preloading.query_embedder.take() {
        Some(loading) => Some(join_embedder(loading)?),
        None if sides.by_model => Some(load_query_embedder(config, Profile::Query, all_cores())?),
        None => None,
    };
    let embedder = model.as_mut().map(|e| &mut **e as &mut dyn Embedder);
    let hits = vecgrep::search::search_index(searched, store, embedder, statics.as_ref(), sides, request);
    // Freeing the tokenizer's 60k strings one by one takes ~8 ms: done
    // beside the hits' output, or not at all if the process ends first.
    if let Some(statics) = statics {
        std::thread::spawn(move || drop(statics));
    }
    hits
}

/// A query embedded by one model is not compared with chunks embedded by
/// another: their cosines mean nothing (an index run rebuilds such an
/// index first; `--no-index` searches it as it is).
fn refuse_another_model(store: &dyn vecgrep::store::IndexReader, config: &ResolvedConfig) -> Result<()> {
    match vecgrep::store::other_model(store, &config.embedder_model)? {
        Some(other) => Err(anyhow!(
            "the index's vectors were made by {other}, not {}; run vg-index, or search without --no-index, to rebuild it",
            config.embedder_model
        )),
        None => Ok(()),
    }
}

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

/// A server's shutdown flag (`embedders_stop_with`).
static SERVER_STOPPING: std::sync::OnceLock<std::sync::Arc<AtomicBool>> = std::sync::OnceLock::new();

/// Have a remote embedder stop its retries and its request in hand once a
/// server's `shutdown` is set (a signal): a server that does not answer
/// held the signal for every retry, minutes at the defaults.
pub fn embedders_stop_with(shutdown: &std::sync::Arc<AtomicBool>) {
    let _ = SERVER_STOPPING.set(std::sync::Arc::clone(shutdown));
    vecgrep::embed::stop_when(|| SERVER_STOPPING.get().is_some_and(|s| s.load(Ordering::SeqCst)));
}

/// Set by the first Ctrl-C (or SIGTERM) during an index run.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Whether an index run (`index_blocking`) is under way.
static INDEXING: AtomicBool = AtomicBool::new(false);
/// Whether a screen is open (`on_screen`): the picker's.
static ON_SCREEN: AtomicBool = AtomicBool::new(false);

/// When the first Ctrl-C (or SIGTERM) of an index run came.
static FIRST_INTERRUPT: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// A second signal this soon after the first is the same one delivered
/// twice, not the user's second Ctrl-C: `vecgrep` passes on what it
/// receives, and cannot tell whether its tools had it too (Ctrl-C reaches
/// the whole process group, `kill` the one process).
const SAME_INTERRUPT: Duration = Duration::from_millis(300);

/// Ctrl-C during an index run stops it within a few chunks, with what was
/// written kept and said (an index is never left half-written either way);
/// a second one, or one at any other time (a search, a chat model's
/// answer), ends the process at once, as it would without a handler.
fn stop_on_interrupt() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        vecgrep::embed::stop_when(interrupted);
        // A tool with a handler of its own (the servers) keeps it.
        let _ = ctrlc::set_handler(|| {
            if !INDEXING.load(Ordering::SeqCst) && !ON_SCREEN.load(Ordering::SeqCst) {
                // Not `exit`: a search thread may be inside the model (end_process).
                end_now(EXIT_INTERRUPTED);
            }
            if !INTERRUPTED.swap(true, Ordering::SeqCst) {
                let _ = FIRST_INTERRUPT.set(Instant::now());
            } else if FIRST_INTERRUPT.get().is_none_or(|first| first.elapsed() >= SAME_INTERRUPT) {
                end_now(EXIT_INTERRUPTED);
            }
        });
    });
}

/// Run `work` as an index run is run: the first Ctrl-C or SIGTERM only
/// sets `interrupted()`, for `work` to stop at a safe point (a wait for
/// another run's lock, say); a second ends the process.
pub fn stoppable<T>(work: impl FnOnce() -> T) -> T {
    hearing_interrupts(&INDEXING, work)
}

/// Run `work` with a screen open (the picker's alternate screen, raw
/// mode, mouse reporting): the first Ctrl-C, SIGTERM or SIGHUP only sets
/// `interrupted()`, for `work` to close its screen and return; ended at
/// once, the process left the terminal in the screen's modes (no echo, the
/// mouse sending escape codes to the shell). A second ends the process.
pub fn on_screen<T>(work: impl FnOnce() -> T) -> T {
    hearing_interrupts(&ON_SCREEN, work)
}

/// Run `work` with `during` set, so that the first Ctrl-C, SIGTERM or
/// SIGHUP only sets `interrupted()` (`stop_on_interrupt`).
fn hearing_interrupts<T>(during: &AtomicBool, work: impl FnOnce() -> T) -> T {
    stop_on_interrupt();
    during.store(true, Ordering::SeqCst);
    let done = work();
    during.store(false, Ordering::SeqCst);
    done
}

/// The project's write lock, waited for while another run holds it (said
/// once), or None when Ctrl-C or SIGTERM ended the wait (said too): what
/// writes outside an index run (vg-log, `--forget`, `--verify`'s word
/// check) takes turns as a run does.
pub fn wait_for_write_lock(
    tool: &str,
    root: &ProjectRoot,
    quiet: bool,
) -> Result<Option<vecgrep::store::WriteLock>, vecgrep::store::StoreError> {
    let mut waited = false;
    let waiting = &mut || {
        waited = true;
        note(tool, quiet, vecgrep::index::LOCK_WAIT);
    };
    let lock = stoppable(|| vecgrep::store::lock_for_writing_unless(root, waiting, &interrupted))?;
    if lock.is_none() {
        note(tool, false, vecgrep::index::stopped_before_the_lock(waited));
    }
    Ok(lock)
}

/// A line typed at `tty`, or None when Ctrl-C or SIGTERM came first or the
/// terminal failed. The read waits in `poll`, since a blocking read is
/// restarted after the signal and would wait on for Enter.
fn answer_unless_interrupted(tty: &std::fs::File) -> Option<String> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    const LOOK_AGAIN_MS: u16 = 100;
    loop {
        if interrupted() {
            return None;
        }
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(LOOK_AGAIN_MS)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => {
                let mut answer = String::new();
                return io::BufReader::new(tty).read_line(&mut answer).ok().map(|_| answer);
            }
            Err(_) => return None,
        }
    }
}

/// Whether Ctrl-C or SIGTERM came during `stoppable` work or an index run.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The files an index run passed over: counted by reason
/// (`SkipReason::code`), and named, since some (binary files) are found
/// only once read, after the walk counted them in.
#[derive(Default)]
pub struct SkipTally {
    pub by_reason: std::collections::BTreeMap<&'static str, u64>,
    pub paths: std::collections::HashSet<String>,
    /// What the skips that are warnings (a catalog's project gone) said,
    /// for a response that carries its warnings (`--ask`).
    pub warnings: Vec<String>,
}

/// The name of the catalog `root` is, when it holds no project.
fn empty_catalog(root: &ProjectRoot) -> Option<String> {
    if root.marker != RootMarker::Catalog {
        return None;
    }
    let catalog = Catalog::read(&root.path).ok()?;
    catalog.projects.is_empty().then_some(catalog.name)
}

/// When every file under the PATHs (or that the walk's filters, `-g`,
/// `-t`, chose) was skipped, or there was none, say so and why: else a
/// search that finds nothing reads as if no such file existed, or held
/// nothing relevant.
pub fn note_all_skipped(tool: &str, inv: &Invocation, walk: &WalkOptions, files: &WalkedSet, tally: &SkipTally) {
    let (quiet, paths) = (inv.config.quiet, inv.paths.as_slice());
    let filtered = walk.is_filtered();
    if files.is_empty() && tally.by_reason.is_empty() {
        // A catalog of no projects: the walk advice below would not apply
        // (audit 186).
        if let Some(name) = empty_catalog(&inv.root) {
            let add = format!("vg-catalog add {name} PATH... adds one");
            note(tool, quiet, &format!("no files were searched: catalog '{name}' has no projects ({add})"));
            return;
        }
        // As ripgrep says it: nothing was there to search, which a search
        // that finds nothing would not tell apart from nothing relevant.
        // The flags that could let more in are named only when not given,
        // and not for paths that no flag lets in.
        let never = paths.iter().all(|p| vecgrep::project::in_always_excluded_dir(&p.rel));
        let why = match (filtered, never || walk.hidden && walk.no_ignore) {
            _ if never => "the paths lie in .git, .hg, .jj or .vecgrep, which are never searched",
            (true, _) => "the filters (-t, -T, -g, --max-depth) chose none of the files under the paths",
            (false, false) => {
                "there are none under the paths that the ignore and hidden rules let in (--no-ignore, --hidden)"
            }
            (false, true) => "there are none under the paths (.git, .hg, .jj and .vecgrep are never searched)",
        };
        note(tool, quiet, &format!("no files were searched: {why}"));
        return;
    }
    if files.iter().any(|f| !tally.paths.contains(f)) || tally.by_reason.is_empty() {
        return;
    }
    let why: Vec<String> = tally
        .by_reason
        .iter()
        .map(|(code, n)| {
            let hint = match *code {
                "generated" => " (lock files, minified bundles, generated code: --include-generated indexes them)",
                "too_large" => " (over max_filesize: --max-filesize raises it)",
                "symlink" => " (links: --follow follows them)",
                _ => "",
            };
            format!("{n} {}{hint}", code.replace('_', " "))
        })
        .collect();
    let skipped: u64 = tally.by_reason.values().sum();
    let chosen = if filtered { "the filters chose" } else { "searched" };
    let files =
        if skipped == 1 { format!("the 1 file {chosen} was") } else { format!("all {skipped} files {chosen} were") };
    note(tool, quiet, &format!("{files} skipped: {}", why.join(", ")));
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
        let path = || vecgrep::project::shown::clipped_middle(&skip.path, SHOWN_PATH_CHARS);
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
        bar.set_position(p.bytes);
        bar.set_message(format!("{}/{} files, {} chunks", p.files, p.of_files, p.chunks));
        self.draw_when_due();
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
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix);
    bar
}

/// Whether to color output for `choice` on stdout.
pub fn use_color(choice: crate::cli::ColorChoice) -> bool {
    match choice {
        crate::cli::ColorChoice::Always => true,
        crate::cli::ColorChoice::Never => false,
        // A terminal that says it is dumb (Emacs' shell), or says nothing
        // of itself (TERM unset), may show escapes as text: no color there,
        // as ripgrep decides.
        crate::cli::ColorChoice::Auto => {
            io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_setting_flag_reaches_the_config() {
        let mut flagged = BTreeSet::new();
        // The porcelain reads no config; its flags reach the tools (`porcelain`'s tests).
        for cmd in crate::cli::commands().into_iter().filter(|c| c.get_name() != "vecgrep") {
            let tool = cmd.get_name().to_string();
            for arg in cmd.get_arguments() {
                let Some(setting) = vecgrep::project::setting(arg.get_id().as_str()) else { continue };
                let mut argv = vec![tool.clone(), format!("--{}", arg.get_long().unwrap())];
                argv.extend(crate::cli::sample(arg));
                if cmd.get_positionals().next().is_some() {
                    argv.push("query".into());
                }
                let matches = cmd.clone().try_get_matches_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                let values = cli_config(&matches).unwrap();
                assert!(values.sets(setting.key), "{argv:?} does not set {}", setting.key);
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(help.ends_with(&setting.help_note()), "{tool} --{}: {help}", setting.key);
                flagged.insert(setting.key);
            }
        }
        let file_only: Vec<&str> = SETTINGS.iter().map(|s| s.key).filter(|k| !flagged.contains(k)).collect();
        assert_eq!(file_only, ["embedder_timeout", "embedder_batch_size", "llm_timeout"], "settings no flag gives");
    }

    #[test]
    fn flags_that_are_not_settings_give_none() {
        let cmd = crate::app::command::<crate::cli::QueryCli>();
        let matches = cmd.try_get_matches_from(["vg-query", "--no-index", "-k", "3", "q"]).unwrap();
        let values = cli_config(&matches).unwrap();
        assert_eq!(values, ConfigValues { top_k: Some(3), ..Default::default() });
    }
}
