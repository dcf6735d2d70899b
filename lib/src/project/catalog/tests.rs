//! Catalogs made, read, walked and taken apart on temporary trees.

use super::*;
use crate::project::{walk, WalkOptions};

fn catalogs(dir: &tempfile::TempDir) -> Catalogs {
    Catalogs { dir: dir.path().join("catalogs") }
}

fn project(dir: &tempfile::TempDir, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = dir.path().join("src").join(name);
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

#[test]
fn add_makes_a_catalog_links_its_projects_and_extends_it_later() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("main.rs", "fn main() {}\n")]);
    let billing = project(&dir, "billing", &[("lib.rs", "fn bill() {}\n")]);
    let cats = catalogs(&dir);
    let (catalog, added) = cats.add("team-api", std::slice::from_ref(&api)).unwrap();
    assert!(matches!(&added[..], [Added::New(p)] if p.name == "api"));
    assert_eq!(std::fs::read_link(catalog.dir.join("api")).unwrap(), api.canonicalize().unwrap());
    let (catalog, added) = cats.add("team-api", &[billing, api]).unwrap();
    assert!(matches!(&added[..], [Added::New(b), Added::Already(a)] if b.name == "billing" && a.name == "api"));
    assert_eq!(catalog.projects.len(), 2);
    assert_eq!(cats.list().unwrap().0, vec![catalog.clone()]);
    assert_eq!(cats.open("team-api").unwrap(), catalog);
    assert_eq!(catalog.root().marker, RootMarker::Catalog);
}

#[test]
fn another_catalogs_directory_is_no_project() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("main.rs", "fn main() {}\n")]);
    let cats = catalogs(&dir);
    let (team, _) = cats.add("team", &[api]).unwrap();
    let e = cats.add("other", std::slice::from_ref(&team.dir)).unwrap_err().to_string();
    assert!(e.contains("a catalog is no project"), "{e}");
    assert!(cats.open("other").is_err(), "nothing written");
}

#[test]
fn add_refuses_bad_names_overlaps_and_two_projects_of_one_name_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("a.rs", "x\n")]);
    let other = dir.path().join("elsewhere/api");
    std::fs::create_dir_all(&other).unwrap();
    let cats = catalogs(&dir);
    let err = cats.add("Team", std::slice::from_ref(&api)).unwrap_err().to_string();
    assert!(err.contains("uppercase"), "{err}");
    assert!(!cats.dir.exists(), "a refused name writes nothing");
    cats.add("team", std::slice::from_ref(&api)).unwrap();
    let err = cats.add("team", &[other]).unwrap_err().to_string();
    assert!(err.contains("distinct directory names"), "{err}");
    let err = cats.add("team", &[api.join("a.rs")]).unwrap_err().to_string();
    assert!(err.contains("not a directory"), "{err}");
    std::fs::create_dir_all(api.join("sub")).unwrap();
    let err = cats.add("team", &[api.join("sub")]).unwrap_err().to_string();
    assert!(err.contains("overlap"), "{err}");
    assert_eq!(cats.open("team").unwrap().projects.len(), 1);
    let err = cats.open("nope").unwrap_err().to_string();
    assert!(err.contains("no catalog named 'nope'"), "{err}");
}

#[test]
fn an_add_that_cannot_link_a_project_changes_nothing_and_a_linked_catalog_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("a.rs", "x\n")]);
    let web = project(&dir, "web", &[("b.rs", "y\n")]);
    let cats = catalogs(&dir);
    cats.add("team", std::slice::from_ref(&api)).unwrap();
    // A directory where the project's link goes.
    std::fs::create_dir(cats.dir.join("team/web")).unwrap();
    let err = format!("{:#}", cats.add("team", std::slice::from_ref(&web)).unwrap_err());
    assert!(err.contains("is in the way of the project's link"), "{err}");
    assert_eq!(cats.open("team").unwrap().projects.len(), 1, "the definition is as it was");
    // A catalog's directory that is a link into a project.
    std::os::unix::fs::symlink(&web, cats.dir.join("evil")).unwrap();
    let err = format!("{:#}", cats.add("evil", std::slice::from_ref(&web)).unwrap_err());
    assert!(err.contains("is a link; a catalog is a directory of its own"), "{err}");
    assert!(!web.join(CATALOG_FILE).exists() && !web.join("web").exists(), "nothing written in the project");
    std::fs::write(web.join(CATALOG_FILE), "version = 1\nname = \"evil\"\nprojects = []\n").unwrap();
    let err = format!("{:#}", cats.open("evil").unwrap_err());
    assert!(err.contains("is a link"), "{err}");
}

#[test]
fn a_catalog_walk_names_files_by_project_and_skips_a_vanished_project() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(
        &dir,
        "api",
        &[("src/retry.rs", "fn retry() {}\n"), (".gitignore", "target/\n"), ("target/x.rs", "no\n")],
    );
    let billing = project(&dir, "billing", &[("invoice.py", "def bill(): pass\n")]);
    std::fs::create_dir_all(api.join(".git")).unwrap();
    let cats = catalogs(&dir);
    let (catalog, _) = cats.add("team", &[api, billing.clone()]).unwrap();
    let root = catalog.root();
    let all = admit_catalog_paths(&catalog, dir.path(), &[], false, false).unwrap().admitted;
    let opts = WalkOptions { max_filesize: 1 << 20, ..WalkOptions::default() };
    let walked = walk(&root, &all, &opts).unwrap();
    let rels: Vec<_> = walked.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(rels, ["api/src/retry.rs", "billing/invoice.py"], "each project's ignore files apply");
    assert!(root.path.join(&walked.files[0].rel).is_file(), "a catalog path resolves through the project's link");

    std::fs::remove_dir_all(&billing).unwrap();
    let walked = walk(&root, &all, &opts).unwrap();
    assert_eq!(walked.files.len(), 1);
    assert!(matches!(&walked.skips[..], [s] if s.path == "billing" && s.reason.code() == "missing_project"));
}

#[test]
fn a_project_replaced_by_a_link_has_moved_and_a_link_changed_by_hand_is_restored() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("retry.rs", "fn retry() {}\n")]);
    let billing = project(&dir, "billing", &[("invoice.py", "def bill(): pass\n")]);
    let elsewhere = project(&dir, "elsewhere", &[("secret.py", "KEY = 1\n")]);
    let cats = catalogs(&dir);
    let (catalog, _) = cats.add("team", &[api.clone(), billing.clone()]).unwrap();
    let (root, all) = (catalog.root(), admit_catalog_paths(&catalog, dir.path(), &[], false, false).unwrap().admitted);
    let opts = WalkOptions { max_filesize: 1 << 20, ..WalkOptions::default() };
    // The catalog's link, pointed elsewhere by hand, is pointed back.
    let link = root.path.join("api");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let walked = walk(&root, &all, &opts).unwrap();
    assert_eq!(std::fs::read_link(&link).unwrap(), api.canonicalize().unwrap());
    let rels: Vec<_> = walked.files.iter().map(|f| f.rel.as_str()).collect();
    assert_eq!(rels, ["api/retry.rs", "billing/invoice.py"]);
    // The project's own directory replaced by a link: moved, not walked.
    std::fs::remove_dir_all(&billing).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &billing).unwrap();
    let walked = walk(&root, &all, &opts).unwrap();
    assert_eq!(walked.files.len(), 1, "{:?}", walked.files.iter().map(|f| &f.rel).collect::<Vec<_>>());
    assert!(matches!(&walked.skips[..], [s] if s.path == "billing" && s.reason.code() == "missing_project"));
}

#[test]
fn a_project_is_named_as_the_path_given_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = project(&dir, "repo", &[("a.rs", "x\n")]);
    let link = dir.path().join("flask");
    std::os::unix::fs::symlink(&repo, &link).unwrap();
    let (catalog, _) = catalogs(&dir).add("sb", &[link]).unwrap();
    assert_eq!(catalog.projects[0].name, "flask");
    assert_eq!(catalog.projects[0].path, repo.canonicalize().unwrap());
}

#[test]
fn paths_given_for_a_catalog_become_its_catalog_paths_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("src/retry.rs", "fn retry() {}\n"), ("docs/x.md", "# x\n")]);
    let cats = catalogs(&dir);
    let (catalog, _) = cats.add("team", std::slice::from_ref(&api)).unwrap();
    let admitted = admit_catalog_paths(&catalog, &api, &[PathBuf::from("src")], false, false).unwrap().admitted;
    assert_eq!(admitted[0].rel, "api/src");
    let opts = WalkOptions { max_filesize: 1 << 20, ..WalkOptions::default() };
    let walked = walk(&catalog.root(), &admitted, &opts).unwrap();
    assert_eq!(walked.files.iter().map(|f| f.rel.as_str()).collect::<Vec<_>>(), ["api/src/retry.rs"]);
    let err = admit_catalog_paths(&catalog, dir.path(), &[PathBuf::from(".")], false, false).unwrap_err().to_string();
    assert!(err.contains("in none of the projects of catalog 'team'"), "{err}");
    // SkipOutsideRootPaths: the catalog is the root; what lies in none of
    // its projects is skipped, a missing path too when outside by its text.
    let paths = [".", "src/api/src", "gone", "src/api/gone"].map(PathBuf::from);
    let err = admit_catalog_paths(&catalog, dir.path(), &paths, true, false).unwrap_err().to_string();
    assert!(err.starts_with("'src/api/gone': "), "missing inside a project is an error: {err}");
    let admission = admit_catalog_paths(&catalog, dir.path(), &paths[..3], true, false).unwrap();
    assert_eq!(admission.admitted.iter().map(|p| p.rel.as_str()).collect::<Vec<_>>(), ["api/src"]);
    assert_eq!(admission.skipped, [PathBuf::from("."), PathBuf::from("gone")]);
    let err = admit_catalog_paths(&catalog, dir.path(), &paths[..1], true, false).unwrap_err().to_string();
    assert!(err.starts_with("every path given is in none of the projects of catalog 'team'"), "{err}");
}

#[test]
fn removing_a_project_or_the_catalog_never_touches_the_projects() {
    let dir = tempfile::tempdir().unwrap();
    let api = project(&dir, "api", &[("a.rs", "x\n")]);
    let web = project(&dir, "web", &[("b.js", "y\n")]);
    let cats = catalogs(&dir);
    cats.add("team", &[api.clone(), web.clone()]).unwrap();
    let catalog = cats.remove_projects("team", &["web".into()]).unwrap();
    assert_eq!(catalog.projects.len(), 1);
    assert!(!catalog.dir.join("web").exists() && web.join("b.js").is_file());
    let err = cats.remove_projects("team", &["api".into(), "nope".into()]).unwrap_err().to_string();
    assert!(err.contains("has no project 'nope'"), "{err}");
    assert!(catalog.dir.join("api").is_symlink() && cats.open("team").unwrap().projects.len() == 1, "nothing changed");
    cats.remove("team").unwrap();
    assert!(!catalog.dir.exists() && api.join("a.rs").is_file());
    assert!(cats.list().unwrap().0.is_empty());
}

#[test]
fn names_differing_in_case_alone_are_one_name_and_a_copied_catalog_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lower = project(&dir, "api", &[("a.rs", "x\n")]);
    let upper = dir.path().join("other/API");
    std::fs::create_dir_all(&upper).unwrap();
    let cats = catalogs(&dir);
    cats.add("team", &[lower]).unwrap();
    let err = cats.add("team", &[upper]).unwrap_err().to_string();
    assert!(err.contains("distinct directory names"), "{err}");
    std::fs::create_dir_all(cats.dir.join("copy")).unwrap();
    std::fs::copy(cats.dir.join("team").join(CATALOG_FILE), cats.dir.join("copy").join(CATALOG_FILE)).unwrap();
    let err = cats.open("copy").unwrap_err().to_string();
    assert!(err.contains("names catalog 'team', not the directory it is kept in"), "{err}");
    let (good, bad) = cats.list().unwrap();
    assert_eq!((good.len(), bad.len()), (1, 1), "one bad catalog hides none of the others");
    cats.remove("copy").unwrap();
    assert_eq!(cats.list().unwrap().1.len(), 0, "a catalog that cannot be read can still be removed");
}

#[test]
fn a_malformed_or_newer_definition_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cats = catalogs(&dir);
    let at = cats.dir.join("team");
    std::fs::create_dir_all(&at).unwrap();
    std::fs::write(at.join(CATALOG_FILE), "version = 1\nname = 3\n").unwrap();
    let err = format!("{:#}", cats.open("team").unwrap_err());
    assert!(err.contains(".vecgrep-catalog.toml is malformed"), "{err}");
    std::fs::write(at.join(CATALOG_FILE), "version = 9\nname = \"team\"\n").unwrap();
    let err = cats.open("team").unwrap_err().to_string();
    assert!(err.contains("has format 9"), "{err}");
    // Edited by hand to hold a project inside another, as `add` refuses.
    let nested = "version = 1\nname = \"team\"\n[[project]]\nname = \"x\"\npath = \"/x\"\n\
                  [[project]]\nname = \"sub\"\npath = \"/x/sub\"\n";
    std::fs::write(at.join(CATALOG_FILE), nested).unwrap();
    let err = cats.open("team").unwrap_err().to_string();
    assert!(err.contains("names projects 'x' and 'sub', one inside the other"), "{err}");
    // As they resolve: through a link, or with `..` (which named the wrong
    // project, or let one in twice).
    let p = dir.path().join("p");
    std::fs::create_dir_all(p.join("api/src")).unwrap();
    std::fs::create_dir_all(p.join("billing")).unwrap();
    std::os::unix::fs::symlink(&p, dir.path().join("plink")).unwrap();
    let define = |second: &str| {
        let text = format!(
            "version = 1\nname = \"team\"\n[[project]]\nname = \"api\"\npath = \"{}\"\n[[project]]\nname = \"other\"\npath = \"{second}\"\n",
            p.join("api").display()
        );
        std::fs::write(at.join(CATALOG_FILE), text).unwrap();
        cats.open("team").unwrap_err().to_string()
    };
    let through_link = define(&dir.path().join("plink/api/src").display().to_string());
    assert!(through_link.contains("names projects 'api' and 'other', one inside the other"), "{through_link}");
    let dotted = define(&p.join("billing/../api/src").display().to_string());
    assert!(dotted.contains("names projects 'api' and 'other', one inside the other"), "{dotted}");
    let twin = define(&dir.path().join("plink/api").display().to_string());
    assert!(twin.contains("twice, as projects 'api' and 'other'"), "{twin}");
    // `..` after a link climbs from where the link leads, as the walk reads it.
    std::os::unix::fs::symlink(p.join("billing"), dir.path().join("deep")).unwrap();
    let climbed = define(&dir.path().join("deep/../api").display().to_string());
    assert!(climbed.contains("twice, as projects 'api' and 'other'"), "{climbed}");
}

/// Each project compared with every other took a minute for 14,000.
#[test]
fn a_definition_of_many_projects_is_read_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let cats = catalogs(&dir);
    let at = cats.dir.join("team");
    std::fs::create_dir_all(&at).unwrap();
    let mut text = String::from("version = 1\nname = \"team\"\n");
    for i in 0..14_000 {
        text.push_str(&format!("[[project]]\nname = \"p{i}\"\npath = \"/n/p{i}\"\n"));
    }
    std::fs::write(at.join(CATALOG_FILE), &text).unwrap();
    assert_eq!(cats.open("team").unwrap().projects.len(), 14_000);
    text.push_str("[[project]]\nname = \"inner\"\npath = \"/n/p7/inner\"\n");
    std::fs::write(at.join(CATALOG_FILE), &text).unwrap();
    let err = cats.open("team").unwrap_err().to_string();
    assert!(err.contains("names projects 'p7' and 'inner', one inside the other"), "{err}");
}
