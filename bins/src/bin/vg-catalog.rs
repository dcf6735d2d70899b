//! vg-catalog: name sets of projects to search as one, and the default one.

use std::io::Write;

use anyhow::Result;
use vecgrep::project::catalog::{load_context, save_context, Added, Catalog, Catalogs, DefaultContext};
use vecgrep::project::{ConfigValues, ProjectRoot};
use vecgrep::records::{write_record, CatalogRecord};
use vecgrep_bins::app::{note, resolve_config, run_main, EXIT_ERROR, EXIT_FOUND, EXIT_NOT_FOUND};
use vecgrep_bins::cli::{CatalogCli, CatalogCommand};

const TOOL: &str = "vg-catalog";

fn main() {
    let (cli, _) = vecgrep_bins::app::parse_args::<CatalogCli>(TOOL);
    run_main(TOOL, || {
        let catalogs = Catalogs::of_user()?;
        let json = matches!(cli.command, CatalogCommand::List { json: true } | CatalogCommand::Show { json: true, .. });
        let mut out = vecgrep_bins::app::text_stdout(json);
        let status = match cli.command {
            CatalogCommand::Add { name, dirs } => add(&catalogs, &name, &dirs, &mut out)?,
            CatalogCommand::RemoveProject { name, projects } => {
                let catalog = while_not_indexing(&catalogs, &name, |root| {
                    let catalog = catalogs.remove_projects(&name, &projects)?;
                    vecgrep::index::forget_paths_under(root, &projects)?;
                    Ok(catalog)
                })?;
                writeln!(out, "catalog '{name}' has {} left", projects_phrase(&catalog))?;
                EXIT_FOUND
            }
            CatalogCommand::Remove { name } => remove(&catalogs, &name, &mut out)?,
            CatalogCommand::List { json } => list(&catalogs, json, &mut out)?,
            CatalogCommand::Show { name, json } => {
                let catalog = catalogs.open(&name)?;
                let (default, context_read) = default_catalog();
                show(&catalog, default.as_deref() == Some(catalog.name.as_str()), json, &mut out)?;
                if context_read {
                    EXIT_FOUND
                } else {
                    EXIT_ERROR
                }
            }
            CatalogCommand::Use { name, catalog, label, clear } => {
                let wanted = DefaultContext { catalog: name.or(catalog), label };
                use_context(&catalogs, wanted, clear, &mut out)?
            }
        };
        out.flush()?;
        Ok(status)
    })
}

fn add(catalogs: &Catalogs, name: &str, dirs: &[std::path::PathBuf], out: &mut impl Write) -> Result<u8> {
    let (catalog, added) = catalogs.add(name, dirs)?;
    for a in &added {
        match a {
            Added::New(p) => writeln!(out, "added {} ({})", p.name, p.path.display())?,
            Added::Already(p) => writeln!(out, "{} ({}) was already in it", p.name, p.path.display())?,
        }
    }
    writeln!(out, "catalog '{name}' has {}; search it with --catalog {name}", projects_phrase(&catalog))?;
    Ok(EXIT_FOUND)
}

/// `change` to catalog `name` once no index run is at work on it, given
/// the catalog's root (with its shared index, when `store_url` keeps it
/// in Postgres).
fn while_not_indexing<T>(catalogs: &Catalogs, name: &str, change: impl FnOnce(&ProjectRoot) -> Result<T>) -> Result<T> {
    let mut root = catalogs.root_of(name)?;
    let config = resolve_config(TOOL, &root, ConfigValues::default())?;
    root.shared = vecgrep::project::shared_index(&root, &config);
    let mut waiting = || note(TOOL, false, &format!("waiting for the index run on catalog '{name}' to finish"));
    vecgrep::index::while_not_indexing(&root, &mut waiting, || change(&root))
}

fn remove(catalogs: &Catalogs, name: &str, out: &mut impl Write) -> Result<u8> {
    // A shared index goes first: if the store cannot drop it, the catalog
    // stays, and removing it again drops both.
    let removed = while_not_indexing(catalogs, name, |root| {
        if root.shared.is_some() && catalogs.open(name).is_ok() {
            vecgrep::store::clear(root)?;
        }
        catalogs.remove(name)
    });
    // Gone, though its directory kept what vecgrep did not put there (an
    // error all the same): the default context naming it is cleared too,
    // or every search outside a project failed on it.
    let gone = removed.is_ok() || catalogs.open(name).is_err();
    if let Ok(dir) = &removed {
        writeln!(out, "removed catalog '{name}' and its index ({dir}); its projects are untouched")?;
    }
    let (default, context_read) = default_catalog();
    if gone && default.as_deref() == Some(name) {
        save_context(&DefaultContext::default())?;
        writeln!(out, "the default context named it, and is cleared")?;
    }
    removed?;
    Ok(if context_read { EXIT_FOUND } else { EXIT_ERROR })
}

/// The catalog the default context names, and whether its file could be
/// read: one that cannot is said, and what the user asked of the catalogs
/// is done all the same (a malformed context stopped `remove` after it had
/// removed the catalog, and `list` and `show` altogether).
fn default_catalog() -> (Option<String>, bool) {
    match load_context() {
        Ok(context) => (context.catalog, true),
        Err(e) => {
            vecgrep_bins::app::say_line(
                TOOL,
                &format!("{e:#}; no catalog is taken as the default (vg-catalog use --clear removes the file)"),
            );
            (None, false)
        }
    }
}

fn list(catalogs: &Catalogs, json: bool, out: &mut impl Write) -> Result<u8> {
    let (all, unreadable) = catalogs.list()?;
    for why in &unreadable {
        vecgrep_bins::app::say_line(TOOL, &format!("skipping a catalog: {why}"));
    }
    let (default, context_read) = default_catalog();
    for catalog in &all {
        let is_default = default.as_deref() == Some(catalog.name.as_str());
        if json {
            write_record(out, &CatalogRecord::new(catalog, is_default))?;
        } else {
            let mark = if is_default { " (default)" } else { "" };
            let names: Vec<&str> = catalog.projects.iter().map(|p| p.name.as_str()).collect();
            let names = if names.is_empty() { "(no projects)".to_string() } else { names.join(" ") };
            writeln!(out, "{}{mark}: {names}", catalog.name)?;
        }
    }
    // The others are listed; a malformed one is an error all the same (exit-codes.md).
    Ok(match (unreadable.is_empty() && context_read, all.is_empty()) {
        (false, _) => EXIT_ERROR,
        (true, true) => EXIT_NOT_FOUND,
        (true, false) => EXIT_FOUND,
    })
}

fn show(catalog: &Catalog, is_default: bool, json: bool, out: &mut impl Write) -> Result<()> {
    if json {
        return Ok(write_record(out, &CatalogRecord::new(catalog, is_default))?);
    }
    let mark = if is_default { " (the default context)" } else { "" };
    writeln!(out, "catalog {}{mark}, kept in {}", catalog.name, catalog.dir.display())?;
    for p in &catalog.projects {
        let missing = if p.is_present() { "" } else { "  (missing: skipped)" };
        writeln!(out, "  {}  {}{missing}", p.name, p.path.display())?;
    }
    for (state, complete) in vecgrep::history::labels(catalog) {
        let when = match (complete, state.updated) {
            (true, Some(at)) => format!("complete, indexed at {}", vecgrep::history::iso_date(at as i64, 0)),
            _ => "partial: the next vg-index --label run completes it; never searched as whole".into(),
        };
        let commits: Vec<String> =
            state.projects.iter().map(|c| format!("{} {}", c.name, c.sha.get(..12).unwrap_or(&c.sha))).collect();
        writeln!(out, "  label {} ({when}): {}", state.label, commits.join(", "))?;
    }
    for unreadable in vecgrep::history::unreadable_labels(catalog) {
        writeln!(out, "  {}", unreadable_label_line(&catalog.name, &unreadable))?;
    }
    Ok(())
}

/// A label index whose state cannot be read, as `show` lists it, in the
/// words `vg-index --verify` uses.
fn unreadable_label_line(catalog: &str, label: &vecgrep::history::UnreadableLabel) -> String {
    let Some(name) = label.names.first() else {
        let key = label.key.get(..12).unwrap_or(&label.key);
        return format!("an unnamed label ({key}): {}", vecgrep::history::unnamed_label_advice(catalog));
    };
    let name = vecgrep::format::escape_controls(name);
    format!(
        "label {name} (its state cannot be read: vg-index --catalog {catalog} --label {name} writes it again while the label names the same commits)"
    )
}

/// `use NAME [--label L]`, `use --clear`, or `use` alone to say what is set.
fn use_context(catalogs: &Catalogs, wanted: DefaultContext, clear: bool, out: &mut impl Write) -> Result<u8> {
    if clear {
        let path = save_context(&DefaultContext::default())?;
        writeln!(out, "no default context ({} removed)", path.display())?;
        return Ok(EXIT_FOUND);
    }
    let Some(name) = wanted.catalog else {
        if wanted.label.is_some() {
            anyhow::bail!("--label sets a label of the catalog named with it: vg-catalog use NAME --label LABEL");
        }
        let path = vecgrep::project::catalog::context_path()?;
        return Ok(match load_context()? {
            DefaultContext { catalog: Some(name), label } => {
                let label = label.map(|l| format!(", label {l}")).unwrap_or_default();
                writeln!(out, "catalog {name}{label} (kept in {})", path.display())?;
                EXIT_FOUND
            }
            _ => {
                writeln!(out, "no default context; vg-catalog use NAME sets one")?;
                EXIT_NOT_FOUND
            }
        });
    };
    let catalog = catalogs.open(&name)?;
    if let Some(label) = &wanted.label {
        vecgrep::project::catalog::check_label_name(label)?;
        // Set all the same (a branch may be made later), but said now
        // rather than by every search that follows.
        if let Err(e) = vecgrep::history::resolve_label(&catalog, &catalog.root(), label) {
            note(TOOL, false, &format!("warning: {e:#}: searches fail until one of them has it"));
        }
    }
    let path = save_context(&DefaultContext { catalog: Some(catalog.name.clone()), label: wanted.label.clone() })?;
    let label = wanted.label.map(|l| format!(" at label {l}")).unwrap_or_default();
    writeln!(out, "searching catalog {name}{label} by default where no PATH is given (kept in {})", path.display())?;
    Ok(EXIT_FOUND)
}

fn projects_phrase(catalog: &Catalog) -> String {
    match catalog.projects.len() {
        1 => "1 project".into(),
        n => format!("{n} projects"),
    }
}
