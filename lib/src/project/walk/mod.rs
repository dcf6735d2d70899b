//! Walking the admitted paths: which files are candidates for the index.
//!
//! Uses the `ignore` crate, so `.gitignore`, `.ignore`, `.vecgrepignore`,
//! hidden files, file types and globs behave as they do in ripgrep. Files that
//! cannot be indexed are reported as skips rather than silently dropped.

mod ignore_files;
mod own_output;
mod skip;

pub use own_output::{own_output_for_stages, OWN_OUTPUT_VAR};
pub use skip::{Skip, SkipReason};

use ignore_files::{check_global_git_ignore, check_ignore_files_above, unreadable, unreadable_ignore_file};
use own_output::{is_own_output, is_the_data_dir, linked_data_dir, own_outputs, FileId};

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::UNIX_EPOCH;

use anyhow::{anyhow, Context, Result};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::WalkBuilder;

use super::generated::by_name;
use super::root::{rel_to_string, AdmittedPath, ProjectRoot, RootMarker};
use super::small_file;

/// Directories never indexed, even with `--hidden` or `--no-ignore`.
const ALWAYS_EXCLUDED_DIRS: [&str; 4] = [".git", ".hg", ".jj", crate::project::PROJECT_DIR];

/// Per-project ignore file, read like `.gitignore`.
pub const IGNORE_FILE_NAME: &str = ".vecgrepignore";

/// The ignore files the walker reads in each directory it enters.
const IGNORE_FILE_NAMES: [&str; 4] = [".gitignore", ".ignore", IGNORE_FILE_NAME, ".git/info/exclude"];

/// The file types `-t` and `-T` know: ripgrep's (`rg --type-list`).
fn file_types() -> TypesBuilder {
    let mut types = TypesBuilder::new();
    types.add_defaults();
    types
}

/// The names `-t` and `-T` accept, aliases included, sorted: what the
/// shell completions offer, taken from the walk's own definitions so that
/// the two cannot differ.
pub fn type_names() -> &'static [String] {
    static NAMES: LazyLock<Vec<String>> =
        LazyLock::new(|| file_types().definitions().iter().map(|d| d.name().to_string()).collect());
    &NAMES
}

#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// `-t`: only files of these types.
    pub types: Vec<String>,
    /// `-T`: no files of these types.
    pub types_not: Vec<String>,
    /// `-g`: include globs, or exclude with a leading `!`.
    pub globs: Vec<String>,
    pub max_depth: Option<usize>,
    pub follow: bool,
    pub hidden: bool,
    pub no_ignore: bool,
    pub ignore_files: Vec<PathBuf>,
    pub max_filesize: u64,
    /// `max_filesize` was given for this run (`--max-filesize`) below the
    /// config's: a filter of the run's, as `-g` is.
    pub max_filesize_given: bool,
    /// Index lock files, minified bundles and generated code too.
    pub include_generated: bool,
}

impl WalkOptions {
    /// No filters: every file under the paths, within the config's limits.
    pub fn unfiltered(config: &super::ResolvedConfig) -> Self {
        WalkOptions {
            max_filesize: config.max_filesize,
            include_generated: config.include_generated,
            ..WalkOptions::default()
        }
    }

    /// Whether filters narrow the walk below "every file under the paths",
    /// so that a file not walked is not necessarily gone.
    pub fn is_filtered(&self) -> bool {
        !self.types.is_empty() || !self.types_not.is_empty() || !self.globs.is_empty() || self.max_depth.is_some()
    }

    /// Whether this run leaves out files that stay the project's: the
    /// filters, `--ignore-file` and a `--max-filesize` given for it. The
    /// entries of such files stay in the index (a search with
    /// `--ignore-file tests.ignore` emptied it of the tests, and their
    /// model vectors went with them), and its searches keep to the files
    /// it walked.
    pub fn leaves_out_for_this_run(&self) -> bool {
        self.is_filtered() || !self.ignore_files.is_empty() || self.max_filesize_given
    }

    /// What of `leaves_out_for_this_run` was given, in words for a note:
    /// one that blamed the filters when `--max-filesize` or an
    /// `--ignore-file` left every file out sent the user after flags they
    /// had not given (audit 192).
    pub fn left_out_by(&self) -> Vec<&'static str> {
        let given = [
            (self.is_filtered(), "the filters (-t, -T, -g, --max-depth)"),
            (!self.ignore_files.is_empty(), "--ignore-file"),
            (self.max_filesize_given, "--max-filesize"),
        ];
        given.into_iter().filter(|(given, _)| *given).map(|(_, what)| what).collect()
    }
}

/// A file that may be indexed.
#[derive(Clone, Debug)]
pub struct WalkedFile {
    /// Root-relative, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: i64,
    /// Status-change time (`ctime_ns`): what an edit that kept the size and
    /// mtime (`touch -r`, `cp -p`, `rsync -t`) still moves.
    pub ctime_ns: i64,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    pub files: Vec<WalkedFile>,
    pub skips: Vec<Skip>,
    /// What the walked directories' ignore files got wrong, one line each
    /// (a glob that does not parse): the file's other rules still apply,
    /// so nothing is skipped for it, but a user should hear why a rule of
    /// theirs does nothing, as ripgrep says so.
    pub ignore_file_warnings: Vec<IgnoreFileWarning>,
}

/// A rule of an ignore file that the walker left out, and why.
#[derive(Clone, Debug)]
pub struct IgnoreFileWarning {
    /// The ignore file, root-relative where possible.
    pub file: String,
    /// The walker's words: the line and what is wrong with it.
    pub error: String,
    /// An `--ignore-file`'s, named as given: every project's of a catalog.
    pub given: bool,
}

impl std::fmt::Display for IgnoreFileWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ignore file {}, a rule left out: {}", self.file, self.error)
    }
}

/// Walk `paths` under `root` and collect indexable files, sorted by path.
///
/// With `follow`, links are followed only where they lead inside `paths`
/// (those given, else the current directory; for a server, the paths it
/// serves): a link to a directory elsewhere is one skip, never walked
/// (issue 42: a link to `/` was walked on each refresh of a server), and
/// a link to a file elsewhere is a skip.
pub(in crate::project) fn walk_tree(
    root: &ProjectRoot,
    paths: &[AdmittedPath],
    opts: &WalkOptions,
) -> Result<WalkResult> {
    let mut out = WalkResult::default();
    // The walker filters what it meets, not where it starts: `.git` given
    // as a PATH (or the current directory inside it) is left out as the
    // directory is when met.
    // A bare repository's too (`mirror.git` given as a PATH), as one met is.
    let paths: Vec<AdmittedPath> = paths
        .iter()
        .filter(|p| !in_always_excluded_dir(&p.rel) && !in_bare_repository(&root.path, p))
        .cloned()
        .collect();
    let paths = &paths[..];
    let bounds = Bounds {
        root: root.path.clone(),
        paths: paths.iter().map(|p| p.abs.clone()).collect(),
        own_outputs: own_outputs(),
        linked_data_dir: linked_data_dir(root),
    };
    let outside: Arc<Mutex<Vec<Skip>>> = Arc::default();
    let Some((builder, warnings)) = builder(root, paths, opts, &bounds, &outside)? else {
        return Ok(out);
    };
    out.ignore_file_warnings = warnings;
    for entry in builder.build() {
        match entry {
            Ok(entry) => {
                match entry.error() {
                    Some(err) if is_ignore_rule_error(err) => {
                        ignore_file_warnings(&root.path, err, &mut out.ignore_file_warnings);
                    }
                    // An ignore file that failed as it was read: what it
                    // would ignore is unknown, as for one that cannot be read.
                    Some(err) => {
                        let path = error_path(err).map(|p| display_rel(&root.path, &p)).unwrap_or_default();
                        out.skips.push(Skip { path, reason: SkipReason::Error(err_message(err)) });
                    }
                    None => {}
                }
                admit(&bounds, &entry, opts, &mut out)
            }
            // The ignore files above a walked subdirectory come as an error
            // of their own, not with an entry.
            Err(err) if is_ignore_rule_error(&err) => {
                ignore_file_warnings(&root.path, &err, &mut out.ignore_file_warnings);
            }
            Err(err) => {
                let at = error_path(&err);
                let path = at.as_ref().map(|p| display_rel(&root.path, p)).unwrap_or_default();
                // Deleted between the directory's listing and its look at
                // the file (or its directory replaced by a file): gone, as
                // one deleted before the read is, and so is one made again
                // since, which the next walk meets (a dangling link, still
                // there, is an error).
                let gone = err.io_error().zip(at.as_deref()).is_some_and(|(e, p)| is_gone(e, p));
                let reason = if gone { SkipReason::Vanished } else { SkipReason::Error(err_message(&err)) };
                out.skips.push(Skip { path, reason });
            }
        }
    }
    out.skips.append(&mut outside.lock().unwrap_or_else(|e| e.into_inner()));
    // Paths inside one another are walked each (`root::admit_paths`): what
    // both meet is said once.
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.files.dedup_by(|a, b| a.rel == b.rel);
    let mut said = std::collections::HashSet::new();
    out.skips.retain(|skip| said.insert(format!("{}\0{}", skip.path, skip.reason.code())));
    Ok(out)
}

/// Whether `path` lies in a bare git repository below `root`, whose files
/// are git's own and never walked.
pub fn in_bare_repository(root: &Path, path: &AdmittedPath) -> bool {
    path.abs.ancestors().take_while(|d| *d != root).any(crate::project::root::is_git_directory)
}

/// Whether root-relative `rel` lies in a directory never indexed (`.git`,
/// `.hg`, `.jj`, `.vecgrep`), whatever the flags.
pub fn in_always_excluded_dir(rel: &str) -> bool {
    rel.split('/').any(|part| ALWAYS_EXCLUDED_DIRS.contains(&part))
}

/// Where a followed link may lead: inside the root, and inside the paths
/// walked; and the files never admitted, those this process writes to.
#[derive(Clone)]
struct Bounds {
    root: PathBuf,
    paths: Vec<PathBuf>,
    own_outputs: Vec<FileId>,
    /// The directory the data directory links to, when `.vecgrep` is a
    /// link: walked under its own name, the index's files were indexed.
    linked_data_dir: Option<FileId>,
}

impl Bounds {
    /// Why `path` (a link, or reached through one) may not be walked or
    /// indexed, if it may not: where it really is, or that it is nowhere.
    fn outside(&self, path: &Path) -> Option<SkipReason> {
        let real = match path.canonicalize() {
            Ok(real) => real,
            Err(e) => return Some(SkipReason::Error(e.to_string())),
        };
        // By component: a name that is not UTF-8 beside `.git` is still in it (review 238).
        let never_walked = || {
            real.strip_prefix(&self.root)
                .is_ok_and(|rel| rel.components().any(|c| ALWAYS_EXCLUDED_DIRS.iter().any(|x| c.as_os_str() == *x)))
        };
        if !real.starts_with(&self.root) {
            Some(SkipReason::OutsideRoot)
        } else if !self.paths.iter().any(|p| real.starts_with(p)) || never_walked() {
            // A link into `.git` leads where no walk goes: its config and
            // hooks were indexed and served (audit 235).
            Some(SkipReason::OutsidePaths)
        } else {
            None
        }
    }
}

/// The `ignore` walker over `paths` with the options' filters, as ripgrep
/// sets one up, and the rules of its `--ignore-file`s left out; None when
/// there is nothing to walk.
fn builder(
    root: &ProjectRoot,
    paths: &[AdmittedPath],
    opts: &WalkOptions,
    bounds: &Bounds,
    outside: &Arc<Mutex<Vec<Skip>>>,
) -> Result<Option<(WalkBuilder, Vec<IgnoreFileWarning>)>> {
    let Some((first, rest)) = paths.split_first() else {
        return Ok(None);
    };
    if !opts.no_ignore {
        check_ignore_files_above(root, paths)?;
        check_global_git_ignore()?;
    }
    let mut builder = WalkBuilder::new(&first.abs);
    for p in rest {
        builder.add(&p.abs);
    }
    builder
        .max_depth(opts.max_depth)
        .follow_links(opts.follow)
        .standard_filters(!opts.no_ignore)
        .hidden(!opts.hidden)
        // Ignore files between the root and a walked subdirectory still apply;
        // a revision's files keep to their own.
        .parents(!opts.no_ignore && root.marker != RootMarker::Revision)
        .require_git(git_work_tree_top(root).is_some())
        .filter_entry(keep_entry(opts, bounds.clone(), Arc::clone(outside)));
    if !opts.no_ignore {
        builder.add_custom_ignore_filename(IGNORE_FILE_NAME);
    }
    let warnings = with_options(&mut builder, root, opts)?;
    Ok(Some((builder, warnings)))
}

/// That the walk's own options can be used (each `--ignore-file` a file,
/// each type known, each glob valid), as a walk finds at its start: a
/// server checks them before it listens (one given `-t nosuch` answered
/// every search with nothing, its runs failing behind it).
pub fn check_walk_options(root: &ProjectRoot, opts: &WalkOptions) -> Result<()> {
    with_options(&mut WalkBuilder::new(&root.path), root, opts).map(drop)
}

/// `builder` with the walk's ignore files, types and globs; the rules of
/// an `--ignore-file` left out, as those of an ignore file in the tree are
/// (they stopped the run; audit 192).
fn with_options(builder: &mut WalkBuilder, root: &ProjectRoot, opts: &WalkOptions) -> Result<Vec<IgnoreFileWarning>> {
    let mut warnings = Vec::new();
    for f in &opts.ignore_files {
        match small_file::is_regular(f) {
            Ok(true) => {}
            Ok(false) => return Err(anyhow!("ignore file {}: no such file", f.display())),
            Err(e) => return Err(anyhow!("ignore file {}: {e}", f.display())),
        }
        // A line that is not UTF-8 ends what the walker reads of the file.
        if let Some(why) = unreadable(f) {
            return Err(anyhow!("ignore file {}: {why}", f.display()));
        }
        match builder.add_ignore(f) {
            Some(err) if is_ignore_rule_error(&err) => {
                let from = warnings.len();
                ignore_file_warnings(&root.path, &err, &mut warnings);
                // Named as given, whichever root (a catalog's project) walks.
                warnings[from..].iter_mut().for_each(|w| (w.file, w.given) = (f.display().to_string(), true));
            }
            Some(err) => return Err(anyhow!("ignore file {}: {}", f.display(), err_message(&err))),
            None => {}
        }
    }
    if !opts.types.is_empty() || !opts.types_not.is_empty() {
        let mut types = file_types();
        for t in &opts.types {
            types.select(t);
        }
        for t in &opts.types_not {
            types.negate(t);
        }
        builder.types(types.build().map_err(|e| anyhow!("file types: {e}"))?);
    }
    if !opts.globs.is_empty() {
        let mut ov = OverrideBuilder::new(&root.path);
        for g in &opts.globs {
            ov.add(g).with_context(|| format!("invalid glob '{g}'"))?;
        }
        builder.overrides(ov.build().context("globs")?);
    }
    Ok(warnings)
}

/// The top of the git work tree the root is in (the nearest directory at
/// or above it with `.git`), if any: git's own bounds then hold, as in
/// ripgrep, and no `.gitignore` above it (another repository's, a
/// `~/.gitignore` of `*`) hides the project's files. Outside git (a project
/// marked by `.vecgrep` alone) `.gitignore` files apply all the same, as
/// with ripgrep's `--no-require-git`; a revision's tree keeps to its own.
fn git_work_tree_top(root: &ProjectRoot) -> Option<&Path> {
    if root.marker == RootMarker::Revision {
        return None;
    }
    root.path.ancestors().find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
}

/// Which directories the walk enters, and which files it passes over: a
/// `.git` file (a worktree's or a submodule's link to its repository) is
/// the repository's as its directory is. Never the always-excluded ones, none
/// whose ignore file cannot be read (a skip in `outside`: what it would
/// ignore is unknown), and with `follow`, no linked directory outside
/// `bounds` (a skip in `outside` instead, so that nothing beyond the link is
/// read).
fn keep_entry(
    opts: &WalkOptions,
    bounds: Bounds,
    outside: Arc<Mutex<Vec<Skip>>>,
) -> impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static {
    let (follow, read_ignore_files) = (opts.follow, !opts.no_ignore);
    move |e| {
        if !e.file_type().is_some_and(|t| t.is_dir()) {
            return e.file_name() != ".git";
        }
        let name = e.file_name();
        if ALWAYS_EXCLUDED_DIRS.iter().any(|x| name == *x) {
            return false;
        }
        // A bare repository's files are git's own, as `.git`'s are (review
        // 255: a mirror kept in a project had its config, with a remote's
        // credentials, indexed and searched).
        if crate::project::root::is_git_directory(e.path()) {
            return false;
        }
        if bounds.linked_data_dir.is_some() && is_the_data_dir(e, bounds.linked_data_dir) {
            return false;
        }
        let skip = |path: &Path, reason| {
            let skip = Skip { path: display_rel(&bounds.root, path), reason };
            outside.lock().unwrap_or_else(|e| e.into_inner()).push(skip);
            false
        };
        if read_ignore_files {
            if let Some((file, why)) = unreadable_ignore_file(e.path()) {
                // A directory that cannot be searched hides its ignore files:
                // the directory is what to name. One that may be listed but
                // not entered (r--) lists its names, and only a look inside
                // it (its `.`) fails (audit 212: an ignore file not there
                // was named).
                if let Err(dir_error) = may_enter(e.path()) {
                    return skip(e.path(), SkipReason::Error(dir_error.to_string()));
                }
                return skip(&file, SkipReason::Error(format!("{why}; its directory is not walked")));
            }
        }
        if !(follow && e.path_is_symlink()) {
            return true;
        }
        match bounds.outside(e.path()) {
            None => true,
            Some(reason) => skip(e.path(), reason),
        }
    }
}

/// Whether this user may list the directory `dir` and look inside it: one
/// that may be listed but not entered (r--) lists its names, and only a
/// look inside (its `.`) fails.
pub(super) fn may_enter(dir: &Path) -> std::io::Result<()> {
    std::fs::read_dir(dir).and_then(|mut d| d.next().transpose())?;
    std::fs::symlink_metadata(dir.join(".")).map(drop)
}

/// Add one walked entry to the files, or to the skips with the reason.
fn admit(bounds: &Bounds, entry: &ignore::DirEntry, opts: &WalkOptions, out: &mut WalkResult) {
    let root = &bounds.root;
    let Some(ft) = entry.file_type() else { return };
    if ft.is_dir() {
        return;
    }
    let path = entry.path();
    let mut skip = |path: String, reason| out.skips.push(Skip { path, reason });
    if ft.is_symlink() {
        // Only reached without --follow: links are followed otherwise.
        return skip(display_rel(root, path), SkipReason::Symlink);
    }
    // With --follow, or through a linked parent, a file may live outside
    // the root: said as such, a link to /dev/zero too, before what it is.
    if opts.follow || entry.path_is_symlink() {
        if let Some(reason) = bounds.outside(path) {
            return skip(display_rel(root, path), reason);
        }
    }
    if !ft.is_file() {
        return skip(display_rel(root, path), SkipReason::Special);
    }
    let Some(rel) = path.strip_prefix(root).ok().and_then(rel_to_string) else {
        return skip(display_rel(root, path), SkipReason::NotUtf8Path);
    };
    let meta = match entry.metadata() {
        Ok(m) => m,
        // Deleted between the directory's listing and this look: gone, as
        // the walker's own errors say it (`vanished`, not an error, exit 2).
        Err(err) if err.io_error().is_some_and(|e| is_gone(e, path)) => return skip(rel, SkipReason::Vanished),
        Err(err) => return skip(rel, SkipReason::Error(err_message(&err))),
    };
    if is_own_output(&bounds.own_outputs, &meta) {
        return skip(rel, SkipReason::OwnOutput);
    }
    let size = meta.len();
    if size > opts.max_filesize {
        return skip(rel, SkipReason::TooLarge { size, limit: opts.max_filesize });
    }
    if let Some(kind) = by_name(&rel).filter(|_| !opts.include_generated) {
        return skip(rel, SkipReason::Generated(kind));
    }
    if let Some(denied) = closed_to_us(&meta, path) {
        return skip(rel, SkipReason::Error(denied.to_string()));
    }
    out.files.push(WalkedFile {
        rel,
        abs: path.to_path_buf(),
        size,
        mtime_ns: mtime_ns(&meta),
        ctime_ns: ctime_ns(&meta),
    });
}

/// The error opening a file that some read bit is off for, when we may
/// not: `chmod` keeps a file's size and mtime, so a file closed since the
/// last run would be taken as unchanged and its old chunks searched. Only
/// such files are opened here; the rest are read as they always were.
/// The user's own files that they may read (all of them under `umask 077`)
/// are not opened either: a warm run stats each file and reads none.
fn closed_to_us(meta: &std::fs::Metadata, path: &Path) -> Option<std::io::Error> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode();
    let euid = super::user::effective_uid();
    if mode & 0o444 == 0o444 || euid == 0 || (meta.uid() == euid && mode & 0o400 != 0) {
        return None;
    }
    // Opened as every small file is, so that one a FIFO replaced since the
    // walk looked is not waited on.
    small_file::open_regular(path).err().filter(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
}

/// Modification time in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

/// Status-change time in nanoseconds since the epoch: set by the system on
/// every write, rename or chmod, and by no user call, unlike the mtime.
pub fn ctime_ns(meta: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec())
}

/// `path` relative to the root for a message or a skip record; bytes that
/// are not UTF-8 are shown as U+FFFD.
fn display_rel(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) => rel_to_string(rel).unwrap_or_else(|| rel.to_string_lossy().into_owned()),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Whether `e`, met looking at `path`, says it was deleted since its
/// directory was listed (or its directory replaced by a file); a dangling
/// link, still there, is an error.
fn is_gone(e: &std::io::Error, path: &Path) -> bool {
    matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
        && std::fs::symlink_metadata(path).map_or(true, |m| !m.file_type().is_symlink())
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

/// One line for each rule of a directory's ignore files that the walker
/// left out, its file named from the root.
fn ignore_file_warnings(root: &Path, err: &ignore::Error, out: &mut Vec<IgnoreFileWarning>) {
    match err {
        ignore::Error::Partial(errs) => errs.iter().for_each(|e| ignore_file_warnings(root, e, out)),
        ignore::Error::WithPath { path, err } => {
            out.push(IgnoreFileWarning { file: display_rel(root, path), error: err.to_string(), given: false });
        }
        other => out.push(IgnoreFileWarning { file: String::new(), error: other.to_string(), given: false }),
    }
}

/// Whether `err` is only rules of ignore files that do not parse (each
/// with its line), no failure to walk or read.
fn is_ignore_rule_error(err: &ignore::Error) -> bool {
    match err {
        ignore::Error::Partial(errs) => !errs.is_empty() && errs.iter().all(is_ignore_rule_error),
        ignore::Error::WithPath { err, .. } | ignore::Error::WithLineNumber { err, .. } => is_ignore_rule_error(err),
        // Not a line's I/O error: the walker reads no further rules after one.
        ignore::Error::Glob { .. } => true,
        _ => false,
    }
}

/// The error without its path prefix (the path is reported separately).
fn err_message(err: &ignore::Error) -> String {
    match err {
        ignore::Error::WithPath { err, .. } => err_message(err),
        ignore::Error::WithDepth { err, .. } => err_message(err),
        ignore::Error::Loop { ancestor, .. } => {
            format!("symbolic link loop back to {}", ancestor.display())
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skip of the root (an error opening it) has the empty path, under
    /// which every stored entry lies and is kept (`Skip::unseen_under`):
    /// named `.`, it left them all out of `kept`, and a run removed the
    /// whole index (review 247). Messages name it `.` themselves.
    #[test]
    fn the_roots_own_path_is_empty_so_that_its_errors_keep_every_entry() {
        let root = Path::new("/r/proj");
        assert_eq!(display_rel(root, root), "");
        let skip = Skip { path: display_rel(root, root), reason: SkipReason::Error("Too many open files".into()) };
        assert!(crate::project::is_under("src/a.rs", skip.unseen_under()));
        assert_eq!(display_rel(root, &root.join("src/a.rs")), "src/a.rs");
    }

    #[test]
    fn an_unreadable_ignore_file_leaves_its_directory_unseen_and_another_error_its_own_path() {
        let error = |path: &str| Skip { path: path.into(), reason: SkipReason::Error("denied".into()) };
        assert_eq!(error("docs/.gitignore").unseen_under(), "docs");
        assert_eq!(error("vendor/lib/.git/info/exclude").unseen_under(), "vendor/lib");
        assert_eq!(error("a/.vecgrepignore").unseen_under(), "a");
        assert_eq!(error(".ignore").unseen_under(), "");
        assert_eq!(error("docs/not.gitignore").unseen_under(), "docs/not.gitignore");
        assert_eq!(error("docs/private").unseen_under(), "docs/private");
        let binary = Skip { path: "docs/.gitignore".into(), reason: SkipReason::Binary };
        assert_eq!(binary.unseen_under(), "docs/.gitignore");
    }

    #[test]
    fn only_errors_that_may_pass_by_themselves_are_said_to() {
        let error = |e: std::io::Error| SkipReason::Error(format!("IO error for operation on /p/x: {e}"));
        assert!(error(std::io::Error::from_raw_os_error(libc::EMFILE)).may_pass());
        assert!(error(std::io::Error::from_raw_os_error(libc::EIO)).may_pass());
        assert!(!error(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG)).may_pass());
        assert!(!error(std::io::Error::from_raw_os_error(libc::ELOOP)).may_pass());
        assert!(!SkipReason::Error("ignore file .ignore: line 2 is not UTF-8".into()).may_pass());
        assert!(!SkipReason::Vanished.may_pass());
        // An ignore file's failing read, with what the walk adds after it.
        let ignore_file = |e: std::io::Error| SkipReason::Error(format!("{e}; its directory is not walked"));
        assert!(ignore_file(std::io::Error::from_raw_os_error(libc::EIO)).may_pass());
        assert!(!ignore_file(std::io::Error::from_raw_os_error(libc::EACCES)).may_pass());
    }

    #[test]
    fn a_file_deleted_since_its_listing_is_gone_and_a_dangling_link_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let not_found = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(is_gone(&not_found, &dir.path().join("deleted.rs")));
        let dangling = dir.path().join("dangling.rs");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(!is_gone(&not_found, &dangling));
        assert!(!is_gone(&std::io::Error::from(std::io::ErrorKind::PermissionDenied), &dir.path().join("x")));
    }
}
