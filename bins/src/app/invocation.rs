//! One invocation resolved: its root, admitted paths and settings, from
//! the flags' matches, the environment and the project's config.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use vecgrep::project::catalog::{admit_catalog_paths, load_context, Catalog, Catalogs};
use vecgrep::project::{admit_paths, select_root, Admission, AdmittedPath, ProjectRoot, RootMarker};
use vecgrep::project::{ConfigError, ConfigLayers, ConfigValues, ResolvedConfig, SETTINGS};

use crate::cli::{CatalogArgs, LabelArgs};

use super::args::command;
use super::exit::{current_dir, SaidBefore};
use super::notes::{note_markers_passed_over, note_skipped_paths};
use super::output::{note, CATALOG_SEARCHED_ENV, CONFIG_NOTED_ENV};

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
    // In a catalog's own directory, PATHs narrow that catalog to parts of
    // its projects (catalogs.md): they were refused as outside the root,
    // the catalog's directory, which holds none of them (audit 203).
    let catalogs_own = root.marker == RootMarker::Catalog;
    if catalog.is_some() && (paths.is_empty() || catalogs_own) && !rev_here {
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
        // Those that chose the root: with --rev, what is on disk of them.
        let choosing = match paths_in {
            PathsIn::Revision => revision_paths_on_disk(paths),
            _ => paths.to_vec(),
        };
        note_markers_passed_over(tool, config.quiet, (&cwd, &choosing), &root);
    }
    note_skipped_paths(tool, config.quiet, &root, &admission);
    Ok(Invocation { cwd, root, paths: admission.admitted, config, context_label })
}

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
                "holding {} of {} to your own settings or the defaults: a repository's own config may make a run, a server's limits or a wait on your servers smaller, not larger, unless trusted (--trust-project-config)",
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
    // Another user's catalog in a shared directory is none of the user's,
    // whose config would be taken as theirs (review 283: its llm_url got
    // the user's API key).
    let (catalogs, _) = Catalogs::of_user().ok()?.list().ok()?;
    let own = |c: &Catalog| vecgrep::project::planted_by(&c.dir).is_none();
    let mut holding = catalogs.into_iter().filter(own).filter(holds);
    let first = holding.next()?;
    holding.next().is_none().then(|| first.root())
}
