//! vg-pick: the interactive picker behind `vecgrep -i`. skim draws the list;
//! what is in it comes from semantic searches run as the user types, over an
//! index kept fresh in the background (`vecgrep::live`).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use skim::item::MatchedItem;
use skim::prelude::*;
use skim::tui::Size;
use skim::{DisplayContext, PreviewContext, PreviewPosition};
use vecgrep::embed::LazyEmbedder;
use vecgrep::embed::Profile;
use vecgrep::format::{escape_controls, shown_score, ScoreBand};
use vecgrep::live::{LiveIndex, Searcher, Target};
use vecgrep::pick::{self, OpenPlan};
use vecgrep::project::ResolvedConfig;
use vecgrep::records::HitRecord;
use vecgrep::search::FileFilter;
use vecgrep::store::{self, IndexReader};
use vecgrep_bins::app::{
    cli_config, embedder_pool, index_blocking, interrupted, load_query_embedder, note, on_screen, resolve, run_main,
    static_loader, Blocking, EXIT_ERROR, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_FOUND,
};
use vecgrep_bins::cli::PickCli;

const TOOL: &str = "vg-pick";
/// Exit status after Esc or Ctrl-C, as a shell reports an interrupt.
const EXIT_ABORTED: u8 = 130;
/// A search starts once typing has paused this long.
const DEBOUNCE: Duration = Duration::from_millis(120);
/// How often the status line and, while indexing, the results are refreshed.
const REFRESH: Duration = Duration::from_millis(500);
/// How often the background indexer looks for changed files.
const REINDEX: Duration = Duration::from_secs(2);

fn main() {
    let (cli, matches) = vecgrep_bins::app::parse_args::<PickCli>(TOOL);
    run_main(TOOL, || pick(cli, &matches))
}

fn pick(mut cli: PickCli, matches: &clap::ArgMatches) -> Result<u8> {
    // --query makes every positional argument a path.
    let initial = match cli.pick.query.take() {
        Some(q) => {
            if let Some(first) = cli.query_arg.take() {
                cli.paths.insert(0, PathBuf::from(first));
            }
            q
        }
        None => cli.query_arg.take().unwrap_or_default(),
    };
    let pipelines = "use vg-query or vecgrep for pipelines";
    if !std::io::stderr().is_terminal() {
        return Err(anyhow!("the picker needs a terminal (stderr is not one); {pipelines}"));
    }
    if let Err(e) = std::fs::File::open("/dev/tty") {
        return Err(anyhow!("the picker needs a controlling terminal (cannot open /dev/tty: {e}); {pipelines}"));
    }
    let mut inv = resolve(TOOL, &cli.paths, cli.outside.skip_outside_root, Some(&cli.catalog), cli_config(matches)?)?;
    if !inv.config.full_index {
        let why = "the picker indexes in the background; with --full-index it indexes first, and asks";
        vecgrep_bins::app::refuse_warn_threshold(matches, why)?;
    }
    let config = inv.config.clone();
    // A command that cannot be filled in safely is refused before anything
    // is picked: open_cmd's, and the editor's Enter would run.
    if let Some(template) = &config.open_cmd {
        pick::expand(template, "file", 1, 1).map_err(|e| anyhow!("open_cmd: {e}"))?;
    }
    if let OpenPlan::Command { template, from, .. } = open_plan(&config, 1) {
        pick::expand(&template, "file", 1, 1).map_err(|e| anyhow!("{from}: {e}"))?;
    }
    let walk = cli.walk.to_options(&config);
    vecgrep::project::check_walk_options(&inv.root, &walk)?;
    let mut index_embedders = embedder_pool(&config);
    let mut blocking = None;
    if config.full_index {
        // BlockingModesStartBlockingIndexRun: progress and the large-index prompt as in vg-index.
        let how = Blocking { records: false, notable_skips: false, reindex: false };
        // Complete as the servers' --full-index is: every chunk with the model's vector.
        inv.config.embed_all = true;
        let began = std::time::Instant::now();
        let (summary, walked, _) = index_blocking(TOOL, &inv, &walk, &mut index_embedders, how)?;
        if summary.aborted {
            note(TOOL, false, "indexing declined; the picker was not opened");
            return Ok(EXIT_NOT_FOUND);
        }
        // Ctrl-C stopped the run (it said what it kept): the picker is not
        // opened, as vg-index and vecgrep stop there too.
        if summary.cancelled {
            return Ok(EXIT_INTERRUPTED);
        }
        blocking = Some((began, walked, summary.errors));
    }

    let shutdown = Arc::new(AtomicBool::new(false));
    // The terminal belongs to the picker: notes are counted on the status
    // line and said once it closes (they were dropped: a skip, a damaged
    // index rebuilt, went unsaid).
    let notes: Arc<Notes> = Arc::default();
    let sink = Arc::clone(&notes);
    let cwd = inv.cwd.clone();
    let target = Target { root: inv.root, paths: inv.paths, walk, config: config.clone() };
    let live = LiveIndex::new(target, Arc::clone(&shutdown), Box::new(move |m| sink.keep(m)));
    let blocking_run = blocking.map(|(began, walked, errors)| {
        live.mark_indexed(walked, errors);
        began
    });
    let indexer = live.spawn(index_embedders, REINDEX, blocking_run).context("cannot start the indexing thread")?;
    let query_config = config.clone();
    let searcher = Arc::new(Searcher::new(
        Arc::clone(&live),
        // One thread: the word index is searched beside it (live::Searcher).
        LazyEmbedder::new(move || load_query_embedder(&query_config, Profile::Index, 1))
            .with_static(static_loader(&config)),
    ));
    let filter = cli.filter.to_filter().map_err(|e| anyhow!(e))?;
    let (jobs, results) = spawn_search_worker(Arc::clone(&searcher), config.clone(), filter, cwd.clone());
    let counts = spawn_counter(Arc::clone(&live), Arc::clone(&shutdown));

    let picked = on_screen(|| run_picker(&initial, &live, &notes, &counts, &jobs, &results));
    shutdown.store(true, Ordering::SeqCst);
    drop(jobs);
    // The indexer stops after the file in hand; what it wrote is committed.
    let _ = indexer.join();
    notes.say(config.quiet);
    let output = picked?;
    let code = finish(output, &config, &cwd)?;
    // Nothing picked from an index its last run could not make or update
    // (said above: `indexing failed: …`) is an error, not "nothing found"
    // (audit 254: a `.vecgrep` file in the way exited 1). One this user may
    // not write was searched as it is, as vg-query searches it (review 255).
    let searched_as_it_is = vecgrep::store::unwritable_index(&live.target.root).is_some();
    if code == EXIT_NOT_FOUND && live.progress().error.is_some() && !searched_as_it_is {
        return Ok(EXIT_ERROR);
    }
    Ok(code)
}

/// A search the worker is asked to run.
struct Job {
    /// Which query edit this answers; results for older edits are dropped.
    seq: u64,
    query: String,
}

/// What a search found.
struct Found {
    seq: u64,
    items: Vec<Arc<dyn SkimItem>>,
    error: Option<String>,
}

/// One thread runs the searches, newest query first: a query is searched
/// once no newer one arrived for DEBOUNCE, so fast typing costs nothing.
fn spawn_search_worker(
    searcher: Arc<Searcher>,
    config: ResolvedConfig,
    filter: FileFilter,
    cwd: PathBuf,
) -> (mpsc::Sender<Job>, mpsc::Receiver<Found>) {
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let (found_tx, found_rx) = mpsc::channel::<Found>();
    std::thread::spawn(move || {
        // The model loads while the user types the first words.
        let _ = searcher.load_model();
        let mut store: Option<Box<dyn IndexReader>> = None;
        while let Ok(mut job) = job_rx.recv() {
            loop {
                match job_rx.recv_timeout(DEBOUNCE) {
                    Ok(newer) => job = newer,
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            let found = if job.query.trim().is_empty() {
                Found { seq: job.seq, items: Vec::new(), error: None }
            } else {
                let mut request =
                    searcher.request(&job.query, config.top_k, config.threshold_in(config.mode), config.mode);
                request.filter = filter.clone();
                match searcher.search(&mut store, &request) {
                    Ok(hits) => {
                        let root = &searcher.live().target.root;
                        let items = hits
                            .into_iter()
                            .map(|h| {
                                Arc::new(PickItem::new(HitRecord::new(root, h, &job.query), &cwd)) as Arc<dyn SkimItem>
                            })
                            .collect();
                        Found { seq: job.seq, items, error: None }
                    }
                    Err(e) => Found { seq: job.seq, items: Vec::new(), error: Some(format!("{e:#}")) },
                }
            };
            if found_tx.send(found).is_err() {
                return;
            }
        }
    });
    (job_tx, found_rx)
}

/// Run skim until the user accepts or quits.
fn run_picker(
    initial: &str,
    live: &Arc<LiveIndex>,
    notes: &Notes,
    counts: &Mutex<IndexNow>,
    jobs: &mpsc::Sender<Job>,
    results: &mpsc::Receiver<Found>,
) -> Result<SkimOutput> {
    let options = picker_options(initial, live, notes)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the picker's runtime")?;
    runtime.block_on(async {
        // No items from skim's own reader: they come from our searches.
        let (done_tx, done_rx) = unbounded::<Vec<Arc<dyn SkimItem>>>();
        drop(done_tx);
        let mut skim = Skim::init(options, Some(done_rx)).map_err(|e| anyhow!("cannot start the picker: {e}"))?;
        skim.start();
        skim.init_tui().map_err(|e| anyhow!("cannot open the terminal: {e}"))?;
        skim.enter().await.map_err(|e| anyhow!("cannot open the terminal: {e}"))?;
        let mut seq = 0u64;
        let mut asked: Option<String> = None;
        let mut pending = false;
        // The index as last seen (chunks, whether a run has completed,
        // whether a fill is at work), and as it was when the shown results
        // were asked for: when they differ, the results are refreshed for
        // the query already shown (a search made while the fill had given
        // no chunk the model's vector found nothing, and stayed so).
        // Its generation too (`IndexNow`): the chunk count alone kept a
        // rewritten file's old hit.
        let mut index_state = (0u64, 0i64, false, false);
        let mut asked_state = index_state;
        let mut error: Option<String> = None;
        let mut last_refresh: Option<Instant> = None;
        let mut previewed: Option<usize> = None;
        // Whether the results awaited are a new query's, which start at the
        // best: the cursor kept its row, and Enter opened a lower hit.
        let mut new_query = false;
        // A refresh of the same query, and what the user had chosen in the
        // list it replaces, to put back once skim shows it (`restore`).
        let mut to_restore: Option<(Vec<Arc<dyn SkimItem>>, ChosenRows)> = None;
        while !skim.tick().await.map_err(|e| anyhow!("the picker failed: {e}"))? {
            // A signal: the screen is closed as Esc closes it (`on_screen`).
            if interrupted() {
                break;
            }
            keep_preview_current(skim.app_mut(), &mut previewed);
            // UpdateQuery: a changed query is searched (after the debounce).
            let query = skim.app().input.value.clone();
            if asked.as_deref() != Some(query.as_str()) {
                seq += 1;
                let _ = jobs.send(Job { seq, query: query.clone() });
                asked = Some(query);
                asked_state = index_state;
                pending = true;
                new_query = true;
            }
            while let Ok(found) = results.try_recv() {
                if found.seq != seq {
                    continue;
                }
                pending = false;
                error = found.error;
                let pending = to_restore.take().map(|(_, chosen)| chosen);
                to_restore = show(skim.app_mut(), found.items, !std::mem::take(&mut new_query), pending);
            }
            if to_restore.as_ref().is_some_and(|(items, _)| showing(skim.app(), items)) {
                if let Some((items, chosen)) = to_restore.take() {
                    chosen.restore(skim.app_mut(), &items);
                }
            }
            if last_refresh.is_none_or(|t| t.elapsed() >= REFRESH) {
                last_refresh = Some(Instant::now());
                let now = *counts.lock().unwrap_or_else(|e| e.into_inner());
                let progress = live.progress();
                index_state = (now.chunks, now.generation, progress.ran, progress.filling);
                let header = status(live, notes, now, error.as_deref());
                let app = skim.app_mut();
                if app.header.header != header {
                    app.header.header = header;
                    app.needs_render.store(true, Ordering::Relaxed);
                }
                if index_state != asked_state && !pending {
                    if let Some(q) = asked.clone() {
                        let _ = jobs.send(Job { seq, query: q });
                        pending = true;
                    }
                    asked_state = index_state;
                }
            }
        }
        Ok(skim.output())
    })
}

/// Put `items` in the list. A new query's start at the best; a refresh of
/// the same one keeps what the user chose, found again once skim shows the
/// new list: the list to find it in, and what it is, are returned. What a
/// refresh not yet shown is to restore (`pending`) is what was chosen: the
/// list skim shows until then has lost its marks.
fn show(
    app: &mut skim::tui::App,
    items: Vec<Arc<dyn SkimItem>>,
    refresh: bool,
    pending: Option<ChosenRows>,
) -> Option<(Vec<Arc<dyn SkimItem>>, ChosenRows)> {
    let to_restore = refresh.then(|| (items.clone(), pending.unwrap_or_else(|| ChosenRows::of(app))));
    app.item_list.clear_selection();
    app.item_pool.clear();
    app.item_pool.append(items);
    app.restart_matcher(true);
    if !refresh {
        app.item_list.jump_to_first();
    }
    app.needs_render.store(true, Ordering::Relaxed);
    to_restore
}

/// What the user chose in the list: the result under the cursor and the
/// marked ones (`pick::Chosen`).
struct ChosenRows {
    cursor: Option<pick::Chosen>,
    marked: Vec<pick::Chosen>,
}

impl ChosenRows {
    fn of(app: &mut skim::tui::App) -> ChosenRows {
        let chosen = |m: &MatchedItem| m.downcast_item::<PickItem>().map(|p| pick::Chosen::of(&p.hit));
        let cursor = app.item_list.selected();
        ChosenRows { cursor: cursor.as_ref().and_then(chosen), marked: marked(app).iter().filter_map(chosen).collect() }
    }

    /// Put the cursor and the marks on the same results in `items`, the
    /// list skim now shows; one not found again is left unmarked (the
    /// count of marks says so).
    fn restore(&self, app: &mut skim::tui::App, items: &[Arc<dyn SkimItem>]) {
        let rows: Vec<&HitRecord> =
            items.iter().filter_map(|i| (**i).as_any().downcast_ref::<PickItem>()).map(|p| &p.hit).collect();
        if let Some(at) = self.cursor.as_ref().and_then(|c| c.find_in(&rows)) {
            app.item_list.jump_to_first();
            app.item_list.scroll_by(i32::try_from(at).unwrap_or(i32::MAX));
        }
        for at in self.marked.iter().filter_map(|m| m.find_in(&rows)) {
            app.item_list.select_row(at);
        }
        app.needs_render.store(true, Ordering::Relaxed);
    }
}

/// The marked results. skim gives the result under the cursor when none
/// is marked: whether it is marked itself is told by flipping every mark.
fn marked(app: &mut skim::tui::App) -> Vec<MatchedItem> {
    let results = app.results();
    let Some(cursor) = app.item_list.selected() else { return results };
    if results.len() != 1 || address(&results[0].item) != address(&cursor.item) {
        return results;
    }
    app.item_list.toggle_all();
    let flipped = app.results();
    app.item_list.toggle_all();
    // Flipped, the cursor's result is among the marks if it was not one;
    // in a list of one it is there either way, and taken as unmarked.
    let unmarked = app.item_list.count() < 2 || flipped.iter().any(|m| address(&m.item) == address(&cursor.item));
    if unmarked {
        Vec::new()
    } else {
        results
    }
}

/// Whether skim shows `items` now (it takes a new list at its next draw):
/// the result under the cursor is one of them, or both are empty.
fn showing(app: &skim::tui::App, items: &[Arc<dyn SkimItem>]) -> bool {
    match app.item_list.selected() {
        Some(m) => items.iter().any(|i| address(i) == address(&m.item)),
        None => app.item_list.count() == items.len(),
    }
}

/// An item's address, which tells one list's results from another's.
fn address(item: &Arc<dyn SkimItem>) -> usize {
    Arc::as_ptr(item).cast::<()>() as usize
}

/// Preview the row under the cursor whenever it is another than the one
/// last previewed (`previewed`, the item's address), and show nothing when
/// no row is: skim previews again only when its cursor moves, so a list
/// replaced under it (a new query, an index run's refresh) kept the old
/// file beside the new row, or beside an empty list.
fn keep_preview_current(app: &mut skim::tui::App, previewed: &mut Option<usize>) {
    let under_cursor = app.item_list.selected().map(|m| address(&m.item));
    if under_cursor == *previewed {
        return;
    }
    *previewed = under_cursor;
    match under_cursor {
        Some(_) => app.pending_preview_run = true,
        None => {
            let _ = app.preview.content(b"");
            app.needs_render.store(true, Ordering::Relaxed);
        }
    }
}

/// The picker's skim options: our ranking shown as it is (skim's own sorting
/// and filtering off), the status line as its header.
fn picker_options(initial: &str, live: &Arc<LiveIndex>, notes: &Notes) -> Result<SkimOptions> {
    SkimOptionsBuilder::default()
        .disabled(true)
        .no_sort(true)
        .multi(true)
        .reverse(true)
        .prompt("vecgrep> ".to_string())
        .query(initial.to_string())
        .header(status(live, notes, IndexNow::default(), None))
        .preview(String::new())
        .preview_window("right:50%")
        .bind(vec![
            "f2:toggle-preview".to_string(),
            "alt-p:toggle-preview".to_string(),
            // skim's own modes (fuzzy filtering of our ranking) make no sense here.
            "ctrl-q:ignore".to_string(),
            "ctrl-r:ignore".to_string(),
        ])
        .build()
        .map_err(|e| anyhow!("cannot set up the picker: {e}"))
}

/// A thread that keeps the index's counts for the status line, read every
/// REFRESH until `shutdown`. Not on the picker's runtime: a shared index's
/// client runs a runtime of its own, which cannot start inside another,
/// and a slow database must not hold up the keys.
fn spawn_counter(live: Arc<LiveIndex>, shutdown: Arc<AtomicBool>) -> Arc<Mutex<IndexNow>> {
    let counts = Arc::new(Mutex::new(IndexNow::default()));
    let shown = Arc::clone(&counts);
    std::thread::spawn(move || {
        let mut store: Option<Box<dyn IndexReader>> = None;
        while !shutdown.load(Ordering::SeqCst) {
            let now = chunk_counts(&mut store, &live);
            *shown.lock().unwrap_or_else(|e| e.into_inner()) = now;
            std::thread::sleep(REFRESH);
        }
    });
    counts
}

/// What the index holds now, for the status line and the refresh; 0s
/// before it exists.
#[derive(Clone, Copy, Default)]
struct IndexNow {
    chunks: u64,
    /// Chunks with the model's vector.
    vectors: u64,
    /// Moved by each write: a file rewritten with as many chunks as before
    /// changes it alone.
    generation: i64,
}

fn chunk_counts(store: &mut Option<Box<dyn IndexReader>>, live: &LiveIndex) -> IndexNow {
    if store.is_none() {
        *store = store::open_for_reading(&live.target.root).ok();
    }
    let read = store.as_ref().map(|s| s.stats().and_then(|stats| Ok((stats, s.generation()?))));
    match read {
        Some(Ok((s, generation))) => IndexNow { chunks: s.chunks, vectors: s.vectors(), generation },
        Some(Err(_)) => {
            *store = None;
            IndexNow::default()
        }
        None => IndexNow::default(),
    }
}

/// The status line: progress, root and scope, the notes kept for the
/// close, and why the last search failed.
fn status(live: &LiveIndex, notes: &Notes, IndexNow { chunks, vectors, .. }: IndexNow, error: Option<&str>) -> String {
    let t = &live.target;
    let mut line = pick::status_line(&live.progress(), chunks, vectors, &t.root.path, &t.scope_names());
    match notes.count() {
        0 => {}
        1 => line.push_str("\n1 note from the index, said when the picker closes"),
        n => line.push_str(&format!("\n{n} notes from the index, said when the picker closes")),
    }
    match error {
        Some(e) => format!("{line}\nsearch failed: {}", escape_controls(e)),
        None => line,
    }
}

/// What the index runs said while the picker held the terminal: each
/// once, the first `MAX_NOTES` of them.
#[derive(Default)]
struct Notes(Mutex<Vec<String>>);

const MAX_NOTES: usize = 50;

impl Notes {
    fn keep(&self, note: &str) {
        // A run's report of its work is no news once the picker has closed.
        if vecgrep::live::is_run_report(note) {
            return;
        }
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < MAX_NOTES && !kept.iter().any(|k| k == note) {
            kept.push(note.to_string());
        }
    }

    fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Say them on stderr, the picker closed.
    fn say(&self, quiet: bool) {
        for kept in self.0.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            note(TOOL, quiet, kept);
        }
    }
}

/// OpenSelectedResult, after the picker has closed.
fn finish(output: SkimOutput, config: &ResolvedConfig, cwd: &Path) -> Result<u8> {
    if output.is_abort {
        return Ok(EXIT_ABORTED);
    }
    let picked: Vec<&PickItem> = output.selected_items.iter().filter_map(|m| m.downcast_item::<PickItem>()).collect();
    if picked.is_empty() {
        return Ok(EXIT_NOT_FOUND);
    }
    match open_plan(config, picked.len()) {
        OpenPlan::Print => {
            use std::io::Write;
            let terminal = std::io::stdout().is_terminal();
            let mut out = vecgrep_bins::app::stdout();
            for item in &picked {
                // As vg-format: a name's control characters are shown on a
                // terminal, never obeyed; a pipe gets the name as it is.
                let path =
                    if terminal { vecgrep::format::escape_controls(&item.path) } else { item.path.as_str().into() };
                writeln!(out, "{path}:{}", item.row.line)?;
            }
            out.flush()?;
            Ok(EXIT_FOUND)
        }
        OpenPlan::Command { template, from, written } => {
            let item = picked[0];
            let command = pick::expand(&template, &item.path, item.row.line, item.hit.end_line)
                .map_err(|e| anyhow!("{from}: {e}"))?;
            let shown = format!("{from} {written:?} on {:?} at line {}", command.file, item.row.line);
            // The editor is the user's, not a tool vecgrep runs: its own
            // tools name themselves (`vecgrep -i` set RUN_BY_ENV for vg-pick).
            let mut process = command.process(cwd);
            // The picker's own stdin may be a pipe (`rg -l x | xargs
            // vg-pick`): the editor reads the keys the picker read.
            if !std::io::stdin().is_terminal() {
                if let Ok(tty) = std::fs::File::open("/dev/tty") {
                    process.stdin(tty);
                }
            }
            let status = process
                .env_remove(vecgrep_bins::app::RUN_BY_ENV)
                .status()
                .with_context(|| format!("cannot run {shown}"))?;
            if status.success() {
                Ok(EXIT_FOUND)
            } else {
                note(TOOL, false, &format!("{shown} failed ({status})"));
                Ok(EXIT_ERROR)
            }
        }
    }
}

/// What Enter does with `picked` results, by the config and the editor
/// variables.
fn open_plan(config: &ResolvedConfig, picked: usize) -> OpenPlan {
    let visual = std::env::var("VISUAL").ok();
    let editor = std::env::var("EDITOR").ok();
    let terminal = std::io::stdout().is_terminal();
    pick::open_plan(config.open_cmd.as_deref(), visual.as_deref(), editor.as_deref(), terminal, picked)
}

/// One result in the list.
struct PickItem {
    hit: HitRecord,
    /// The path relative to the current directory.
    path: String,
    row: pick::Row,
    /// `path:line`, unique per result: skim tells items apart by it.
    key: String,
}

impl PickItem {
    fn new(hit: HitRecord, cwd: &Path) -> Self {
        let path = vecgrep::format::display_path(&hit, cwd);
        let row = pick::row(&hit, cwd);
        let key = format!("{path}:{}", row.line);
        PickItem { hit, path, row, key }
    }
}

impl SkimItem for PickItem {
    fn text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.key)
    }

    fn display(&self, ctx: DisplayContext) -> Line<'_> {
        let base = ctx.base_style;
        let (fit, band) = shown_score(self.row.fit, 2);
        let score_style = match band {
            ScoreBand::Strong => Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            ScoreBand::Fair => Style::new().fg(Color::Yellow),
            ScoreBand::Weak => Style::new().add_modifier(Modifier::DIM),
        };
        Line::from(vec![
            Span::styled(pick::shown(&self.key), base.patch(Style::new().fg(Color::Magenta))),
            Span::styled(format!("  {fit}  "), base.patch(score_style)),
            Span::styled(self.row.snippet.clone(), base),
        ])
    }

    fn preview(&self, ctx: PreviewContext) -> ItemPreview {
        let root = self.hit.root.as_deref().map(Path::new).unwrap_or(Path::new("."));
        let (text, top) = pick::preview(&self.hit, root, ctx.height, true);
        let position = PreviewPosition {
            h_scroll: Size::Fixed(0),
            h_offset: Size::Fixed(0),
            v_scroll: Size::Fixed(top as u16),
            v_offset: Size::Fixed(0),
        };
        ItemPreview::AnsiWithPos(text, position)
    }

    fn output(&self) -> Cow<'_, str> {
        Cow::Owned(format!("{}:{}", self.path, self.row.line))
    }
}
