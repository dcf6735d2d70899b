//! The notes a run says on stderr: what it passed over and why, labels
//! it could not resolve, projects gone, an index left incomplete.

use std::path::{Path, PathBuf};

use anyhow::Result;
use vecgrep::history::Label;
use vecgrep::index::WalkedSet;
use vecgrep::project::catalog::Catalog;
use vecgrep::project::shown::SHOWN_PATH_CHARS;
use vecgrep::project::WalkOptions;
use vecgrep::project::{Admission, ProjectRoot, RootMarker};

use super::invocation::Invocation;
use super::output::note;

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
pub fn note_markers_passed_over(tool: &str, quiet: bool, (cwd, paths): (&Path, &[PathBuf]), root: &ProjectRoot) {
    for (marker, owner) in vecgrep::project::markers_passed_over(cwd, paths, root) {
        let message = format!(
            "passing over '{}': user {owner}'s, in a shared directory anyone may add to; the project root is '{}'",
            marker.display(),
            root.path.display()
        );
        note(tool, quiet, &message);
    }
}

/// A search of a catalog's index as it is (`--no-index`: no run walks it)
/// says the projects whose directories moved or vanished, as every run
/// does; their hits named directories that were gone, in silence. It
/// skips none of them (audit 280: "skipping" was said of a project whose
/// hits came back).
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
                "{name}: the catalog's project is not at {at}; searched as the index holds it, its hits may name files that are gone (a run drops them; vg-catalog remove-project drops the project)"
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
/// `-t`, chose) was skipped, or there was none, say so and why, and return
/// what was said: else a search that finds nothing reads as if no such
/// file existed, or held nothing relevant.
pub fn note_all_skipped(
    tool: &str,
    inv: &Invocation,
    walk: &WalkOptions,
    files: &WalkedSet,
    tally: &SkipTally,
) -> Option<String> {
    note_none_walked(tool, inv, walk, (files, tally), "searched")
        .or_else(|| note_every_file_skipped(tool, inv.config.quiet, walk.is_filtered(), files, tally))
}

/// When the walk found no file under the PATHs, nor skipped one, say why
/// ("no files were {done}: …"), and return what was said. vg-index given a
/// path in `.git` printed a summary of nothing and no word (audit 191).
pub fn note_none_walked(
    tool: &str,
    inv: &Invocation,
    walk: &WalkOptions,
    (files, tally): (&WalkedSet, &SkipTally),
    done: &str,
) -> Option<String> {
    let (quiet, paths) = (inv.config.quiet, inv.paths.as_slice());
    let filtered = walk.is_filtered();
    if files.is_empty() && tally.by_reason.is_empty() {
        // A catalog of no projects: the walk advice below would not apply
        // (audit 186).
        if let Some(name) = empty_catalog(&inv.root) {
            let add = format!("vg-catalog add {name} PATH... adds one");
            let said = format!("no files were {done}: catalog '{name}' has no projects ({add})");
            note(tool, quiet, &said);
            return Some(said);
        }
        // As ripgrep says it: nothing was there to search, which a search
        // that finds nothing would not tell apart from nothing relevant.
        // The flags that could let more in are named only when not given,
        // and not for paths that no flag lets in.
        let never = paths.iter().all(|p| vecgrep::project::in_always_excluded_dir(&p.rel));
        let bare = paths.iter().all(|p| vecgrep::project::in_bare_repository(&inv.root.path, p));
        let why = match (filtered, never || walk.hidden && walk.no_ignore) {
            _ if never => "the paths lie in .git, .hg, .jj or .vecgrep, which are never searched or indexed",
            _ if bare => {
                "the paths lie in a bare git repository, whose files are git's own and never searched or indexed"
            }
            (true, _) => "the filters (-t, -T, -g, --max-depth) chose none of the files under the paths",
            (false, false) => {
                "there are none under the paths that the ignore and hidden rules let in (--no-ignore, --hidden)"
            }
            (false, true) => "there are none under the paths (.git, .hg, .jj and .vecgrep are never searched)",
        };
        let said = format!("no files were {done}: {why}");
        note(tool, quiet, &said);
        return Some(said);
    }
    None
}

/// When every file walked was skipped, say how many and why, and return
/// what was said.
fn note_every_file_skipped(
    tool: &str,
    quiet: bool,
    filtered: bool,
    files: &WalkedSet,
    tally: &SkipTally,
) -> Option<String> {
    if files.iter().any(|f| !tally.paths.contains(f)) || tally.by_reason.is_empty() {
        return None;
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
    let said = format!("{files} skipped: {}", why.join(", "));
    note(tool, quiet, &said);
    Some(said)
}
