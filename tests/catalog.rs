//! Catalogs: several real git repositories searched as one, through
//! vg-catalog, --catalog and the default context, on the real model.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// Three small git projects under `src/` and a catalog directory of their
/// own, apart from the user's.
struct Projects {
    t: Tree,
}

impl Projects {
    fn new() -> Projects {
        let t = Tree::bare();
        t.write("src/api/upload.py", "def retry_upload(path, attempts=3):\n    \"\"\"Retry a failed upload a few times, waiting longer each time.\"\"\"\n    for attempt in range(attempts):\n        send(path)\n")
            .write("src/api/auth.py", "def check_token(request):\n    \"\"\"Reject a request whose bearer token has expired.\"\"\"\n    return request.token.valid\n")
            .write("src/billing/invoice.py", "def send_invoice(tenant):\n    \"\"\"Email the monthly invoice to a tenant as a PDF.\"\"\"\n    mail(tenant.email, render_pdf(tenant))\n")
            .write("src/billing/tax.py", "def vat_for(country, amount):\n    \"\"\"The value added tax owed on an amount in a country.\"\"\"\n    return amount * RATES[country]\n")
            .write("src/web/routes.js", "// Render the dashboard page with the user's recent activity.\nfunction dashboard(req, res) {\n  res.render('dashboard', { items: recent(req.user) });\n}\n")
            .write("elsewhere/notes.txt", "nothing here\n")
            .write("mine/main.py", "def main():\n    \"\"\"Email the monthly invoice to a tenant as a PDF.\"\"\"\n")
            ;
        for repo in ["src/api", "src/billing", "src/web", "mine"] {
            let out = Command::new("git")
                .args(["init", "-q", "-b", "main"])
                .current_dir(t.path().join(repo))
                .output()
                .unwrap();
            assert!(out.status.success());
        }
        Projects { t }
    }

    fn dir(&self, rel: &str) -> PathBuf {
        self.t.path().join(rel)
    }

    /// A tool run in `cwd` with the catalogs kept in the tree.
    fn cmd(&self, tool: &str, cwd: &str) -> Command {
        let mut c = self.t.cmd(tool, cwd);
        c.env("VECGREP_CATALOG_DIR", self.dir("catalogs"));
        c
    }

    fn add(&self, name: &str, projects: &[&str]) -> std::process::Output {
        run(self.cmd("vg-catalog", ".").args(["add", name]).args(projects.iter().map(|p| self.dir(p))))
    }
}

fn projects_of(hits: &[Value]) -> Vec<String> {
    hits.iter().map(|h| h["project"].as_str().unwrap_or("-").to_string()).collect()
}

#[test]
fn a_catalog_is_one_ranking_over_its_projects_each_hit_naming_its_project() {
    let p = Projects::new();
    let o = p.add("team", &["src/api", "src/billing", "src/web"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("catalog 'team' has 3 projects"), "{}", stdout(&o));

    let o = run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "email the monthly invoice to a customer"]));
    assert_code(&o, 0);
    let hits = records(&o);
    assert_eq!(hits[0]["project"], "billing");
    assert_eq!(hits[0]["file"], "invoice.py", "a hit's file is relative to its project");
    assert_eq!(PathBuf::from(hits[0]["root"].as_str().unwrap()), p.dir("src/billing"));
    let o = run(p.cmd("vg-query", "elsewhere").args([
        "--catalog",
        "team",
        "-k",
        "5",
        "--threshold",
        "-1",
        "retry a failed upload",
    ]));
    let hits = records(&o);
    assert_eq!((hits[0]["project"].as_str(), hits[0]["file"].as_str()), (Some("api"), Some("upload.py")));
    let found = projects_of(&hits);
    assert!(
        found.contains(&"billing".to_string()) || found.contains(&"web".to_string()),
        "one ranking spans the projects: {found:?}"
    );

    // The porcelain prints the paths a person at the current directory types.
    let o = run(p.cmd("vecgrep", "elsewhere").args(["--catalog", "team", "-l", "render the dashboard page"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().next(), Some("../src/web/routes.js"));
    let o = run(p.cmd("vg-root", "elsewhere").args(["--catalog", "team", "--json"]));
    assert_eq!(records(&o)[0]["marker"], "catalog");
    assert_eq!(PathBuf::from(records(&o)[0]["root"].as_str().unwrap()), p.dir("catalogs/team"));
}

/// A catalog is a directory of the user's catalogs: searched from inside
/// it, it is the root. The file alone makes none: a repository that ships
/// `.vecgrep-catalog.toml` naming other directories is searched as the
/// repository it is (before, vecgrep searched, indexed and served what the
/// file named, and made a link to it in the repository).
#[test]
fn a_catalog_file_a_repository_ships_makes_no_catalog() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let o = run(p.cmd("vg-root", "catalogs/team").arg("--json"));
    assert_eq!(records(&o)[0]["marker"], "catalog", "{}", stdout(&o));

    let secret = p.dir("src/billing").display().to_string();
    p.t.write(
        "mine/.vecgrep-catalog.toml",
        &format!("version = 1\nname = \"mine\"\n[[project]]\nname = \"loot\"\npath = \"{secret}\"\n"),
    );
    let o = run(p.cmd("vg-root", "mine").arg("--json"));
    assert_eq!(records(&o)[0]["marker"], "git", "{}", stdout(&o));
    let o = run(p.cmd("vg-query", "mine").args(["--threshold", "-1", "-k", "10", "value added tax owed"]));
    let hits = records(&o);
    assert!(hits.iter().all(|h| h["file"] == "main.py" && h.get("project").is_none()), "{}", stdout(&o));
    assert!(!p.dir("mine/loot").exists(), "no link made to what the file names");
}

/// Catalogs kept at an absolute path are listed from a working directory
/// removed under the shell (a relative one is refused wherever it is run:
/// `a_relative_catalogs_directory_is_refused`).
#[test]
fn catalogs_are_listed_from_a_removed_working_directory() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api"]), 0);
    std::fs::create_dir(p.dir("gone")).unwrap();
    let in_removed_dir = |catalogs: &str| {
        let cmd = p.cmd("vg-catalog", ".");
        let mut shell = Command::new("sh");
        shell
            .current_dir(p.dir("."))
            .args(["-c", "cd gone && rmdir ../gone && exec \"$0\" list"])
            .arg(cmd.get_program());
        shell.envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?)))).env("VECGREP_CATALOG_DIR", catalogs);
        run(&mut shell)
    };
    let o = in_removed_dir(p.dir("catalogs").to_str().unwrap());
    assert_code(&o, 0);
    assert!(stdout(&o).contains("team"), "{}", stdout(&o));
}

/// A default context that is a FIFO or a link to a device is never read:
/// inside a project it is passed over, as one that cannot be read is, and
/// elsewhere it is one line (before, every tool waited on the FIFO, or read
/// `/dev/zero` until memory ran out).
#[test]
fn a_default_context_that_is_no_regular_file_is_never_waited_on() {
    let p = Projects::new();
    let context = p.t.config_home.path().join("vecgrep/context.toml");
    std::fs::create_dir_all(context.parent().unwrap()).unwrap();
    assert!(Command::new("mkfifo").arg(&context).status().unwrap().success());
    for made in ["fifo", "link"] {
        if made == "link" {
            std::fs::remove_file(&context).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &context).unwrap();
        }
        let o = run(p.cmd("vg-root", "mine").arg("--json"));
        assert_code(&o, 0);
        assert_eq!(records(&o)[0]["marker"], "git", "{made}");
        let o = run(&mut p.cmd("vg-root", "elsewhere"));
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.lines().count() == 1 && err.contains("context.toml: not a regular file"), "{made}: {err}");
    }
}

#[test]
fn paths_narrow_a_catalog_to_parts_of_its_projects_and_others_are_refused() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    let billing = p.dir("src/billing").display().to_string();
    let o = run(p.cmd("vg-query", "elsewhere").args([
        "--catalog",
        "team",
        "--threshold",
        "-1",
        "retry a failed upload",
        &billing,
    ]));
    assert_code(&o, 0);
    assert!(projects_of(&records(&o)).iter().all(|p| p == "billing"), "{}", stdout(&o));
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "retry", "elsewhere"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).starts_with("vg-query: 'elsewhere' is in none of the projects of catalog 'team'"),
        "{}",
        stderr(&o)
    );
    // SkipOutsideRootPaths: the catalog is the root, and what lies in none
    // of its projects is skipped, saying so; the rest is searched.
    let o = run(p.cmd("vg-query", ".").args([
        "--catalog",
        "team",
        "--skip-outside-root",
        "--threshold",
        "-1",
        "retry",
        "elsewhere",
        &billing,
    ]));
    assert_code(&o, 0);
    assert!(projects_of(&records(&o)).iter().all(|p| p == "billing"), "{}", stdout(&o));
    assert_eq!(stderr(&o), "vg-query: skipping 'elsewhere': in none of the projects of catalog 'team'\n");
    let o = run(p.cmd("vg-root", ".").args(["--catalog", "team", "--skip-outside-root", "elsewhere"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("every path given is in none of the projects of catalog 'team'"), "{}", stderr(&o));
    // A `..` after a link climbs from where the link leads, as the system
    // reads it: `l/..` was taken by its text, for `elsewhere` (audit 203).
    std::fs::create_dir(p.dir("src/billing/sub")).unwrap();
    std::os::unix::fs::symlink(p.dir("src/billing/sub"), p.dir("elsewhere/l")).unwrap();
    let o = run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "--threshold", "-1", "retry", "l/.."]));
    assert_code(&o, 0);
    assert!(projects_of(&records(&o)).iter().all(|p| p == "billing"), "{}", stdout(&o));
    // A missing one is placed so too: inside billing, it is missing, not
    // in none of the projects (review 205).
    let o =
        run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "--skip-outside-root", "retry", "l/../gone.py"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'l/../gone.py': No such file"), "{}", stderr(&o));
    let o =
        run(p.cmd("vg-query", "catalogs/team").args(["--skip-outside-root", "retry", "billing/typo.py", "billing"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'billing/typo.py': No such file"), "{}", stderr(&o));
    // In the catalog's own directory, a PATH narrows that catalog too: its
    // project's link there was refused as outside the root (audit 203).
    for (tool, json) in [("vg-query", None), ("vecgrep", Some("--json"))] {
        let o = run(p.cmd(tool, "catalogs/team").args(json).args(["--threshold", "-1", "retry", "billing"]));
        assert_code(&o, 0);
        let hits = records(&o);
        assert!(!hits.is_empty() && projects_of(&hits).iter().all(|p| p == "billing"), "{tool}: {}", stdout(&o));
    }
}

/// A catalog whose definition cannot be written (a full disk, here a file
/// size limit) is one error, and leaves no half-written file behind.
#[test]
fn a_catalog_the_disk_refuses_leaves_no_temporary_file() {
    let p = Projects::new();
    let mut add = p.cmd("vg-catalog", ".");
    add.args(["add", "team"]).arg(p.dir("src/api"));
    let o = run(&mut with_file_size_limit(&add, 0));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("File too large"), "{}", stderr(&o));
    let leftover = std::process::Command::new("find").arg(p.t.path()).args(["-name", "*.tmp"]).output();
    assert_eq!(String::from_utf8_lossy(&leftover.unwrap().stdout), "", "a temporary file was left");
}

#[test]
fn a_project_that_vanished_is_skipped_with_a_warning_and_the_rest_searched() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    std::fs::rename(p.dir("src/billing"), p.dir("moved")).unwrap();
    // A search of the index as it is walks nothing, and says it too (its
    // hits named the gone directory in silence).
    for tool in ["vg-query", "vg-ask"] {
        let o = run(p.cmd(tool, ".").args(["--catalog", "team", "--no-index", "email the monthly invoice"]));
        let said = stderr(&o);
        assert!(
            said.contains("billing: the catalog's project is not at")
                && said.contains("its hits may name files that are gone"),
            "{tool}: {said}"
        );
        assert!(!said.contains("skipping"), "its hits come back: {said}");
    }
    let o = run(p.cmd("vecgrep", ".").args([
        "--catalog",
        "team",
        "--json",
        "--threshold",
        "-1",
        "email the monthly invoice",
    ]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("skipping billing: the catalog's project is not at"), "{}", stderr(&o));
    assert!(projects_of(&records(&o)).iter().all(|p| p == "api"), "the vanished project's files left the index");
    // A question's response carries the warning too.
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "team", "--ask", "--json", "email the monthly invoice"]));
    let warnings = records(&o)[0]["warnings"].clone();
    let warned = warnings
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("skipping billing: the catalog's project is not at"));
    assert!(warned, "{warnings}\n{}", stderr(&o));
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team", "--json"]));
    let shown = &records(&o)[0];
    assert_eq!(shown["projects"][1]["present"], false);
    // Without a subcommand it says what it does, in one line.
    let o = run(&mut p.cmd("vg-catalog", "."));
    assert_code(&o, 2);
    assert_eq!(
        stderr(&o),
        "vg-catalog: say what to do: add, remove-project, remove, list, show, use (see 'vg-catalog --help')\n"
    );
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--verify", "--json"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["ok"], true);
}

/// A project moved, a link left where it was, into the catalog's own
/// projects: the link's project has moved, a skip, and the rest are
/// searched. Every use of the catalog was an error naming one directory
/// twice, `remove-project`'s too.
#[test]
fn a_project_replaced_by_a_link_to_another_of_its_catalog_has_moved() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    std::fs::rename(p.dir("src/billing"), p.dir("src/billing2")).unwrap();
    assert_code(&p.add("team", &["src/billing2"]), 0);
    std::os::unix::fs::symlink("billing2", p.dir("src/billing")).unwrap();
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "team", "--json", "email the monthly invoice"]));
    assert_code(&o, 0);
    let moved = format!(
        "skipping billing: the catalog's project is not at {} any more; a link to {} is there now: it is the catalog's project billing2",
        p.dir("src/billing").display(),
        p.dir("src/billing2").display()
    );
    assert!(stderr(&o).contains(&moved), "{}", stderr(&o));
    assert!(projects_of(&records(&o)).contains(&"billing2".to_string()), "{}", stdout(&o));
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove-project", "team", "billing"])), 0);
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team", "--json"]));
    let shown = records(&o);
    let names: Vec<&str> =
        shown[0]["projects"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["api", "billing2"]);
}

#[test]
fn a_projects_link_removed_by_hand_still_places_its_hits_and_is_made_again() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    let link = p.dir("catalogs/team/billing");
    std::fs::remove_file(&link).unwrap();
    let o = run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "--no-index", "email the monthly invoice"]));
    assert_code(&o, 0);
    let hits = records(&o);
    assert_eq!((hits[0]["project"].as_str(), hits[0]["file"].as_str()), (Some("billing"), Some("invoice.py")));
    assert_eq!(PathBuf::from(hits[0]["root"].as_str().unwrap()), p.dir("src/billing"), "the project's own directory");
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        p.dir("src/billing").canonicalize().unwrap(),
        "an index run made it again"
    );
    // One pointed elsewhere by hand places nothing there: the definition says
    // where the project is.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(p.dir("src/api"), &link).unwrap();
    let o = run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "--no-index", "email the monthly invoice"]));
    let hits = records(&o);
    assert_eq!(PathBuf::from(hits[0]["root"].as_str().unwrap()), p.dir("src/billing"), "not where the link leads");

    // A definition edited by hand to name two projects alike is refused, as `add` refuses them.
    let file = p.dir("catalogs/team/.vecgrep-catalog.toml");
    let text = std::fs::read_to_string(&file).unwrap().replace("name = \"billing\"", "name = \"API\"");
    std::fs::write(&file, &text).unwrap();
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "invoice"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("names two projects 'api' and 'API'"), "{}", stderr(&o));
    // A path edited to a relative one would depend on where vecgrep runs.
    let relative = text.replace("name = \"API\"", "name = \"billing\"");
    let relative = relative.replace(&format!("\"{}\"", p.dir("src/api").display()), "\"src/api\"");
    std::fs::write(&file, relative).unwrap();
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "invoice"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("gives project 'api' the relative path 'src/api'"), "{}", stderr(&o));
    // One that is not TOML is one line naming the line, from every command.
    std::fs::write(&file, "[[project]]\nname = \"api\"\ngarbage = [\n").unwrap();
    // (`list` passes over it and lists the others, an error all the same.)
    for (args, code) in [(&["list"][..], 2), (&["show", "team"], 2)] {
        let o = run(p.cmd("vg-catalog", ".").args(args));
        assert_code(&o, code);
        let err = stderr(&o);
        assert!(err.lines().count() == 1 && err.contains("is malformed: line 4: invalid array"), "{args:?}: {err}");
    }
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "team", "invoice"]));
    assert_code(&o, 2);
    assert!(stderr(&o).lines().count() == 1 && stderr(&o).contains("line 4"), "{}", stderr(&o));
}

/// In one of the context's projects, an explicit `--rev` names a revision
/// of that project (catalogs.md: it wins over the context): it was refused
/// as a catalog's, which has no revisions.
#[test]
fn an_explicit_rev_in_a_project_of_the_default_context_is_that_projects() {
    let p = Projects::new();
    for args in [&["add", "-A"][..], &["commit", "-q", "-m", "the api"], &["tag", "v1"]] {
        let out = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(p.dir("src/api"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "--catalog", "team"])), 0);
    let o = run(p.cmd("vg-index", "src/api").args(["--rev", "v1"]));
    assert_code(&o, 0);
    let o = run(p.cmd("vecgrep", "src/api").args(["--rev", "v1", "--threshold", "-1", "-l", "retry a failed upload"]));
    assert_code(&o, 0);
    assert_eq!(stdout(&o).lines().next(), Some("upload.py"), "{}", stderr(&o));
    assert_code(&run(p.cmd("vg-index", "src/api").args(["--forget", "v1"])), 0);
    // Outside any project a revision still names none.
    let o = run(p.cmd("vecgrep", "elsewhere").args(["--rev", "v1", "retry"]));
    assert_code(&o, 2);
}

/// In a catalog, an exclusion glob with a `/` is matched from each
/// project's root, as `-g` is: matched against `project/…`, it left out
/// nothing.
#[test]
fn a_catalogs_exclusions_are_matched_within_each_project_and_from_the_catalog() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let found = |extra: &[&str]| -> Vec<String> {
        let o = run(p
            .cmd("vg-query", "elsewhere")
            .args(["--catalog", "team", "--threshold", "-1", "-k", "20"])
            .args(extra)
            .arg("retry a failed upload"));
        records(&o)
            .iter()
            .map(|h| format!("{}/{}", h["project"].as_str().unwrap_or("-"), h["file"].as_str().unwrap()))
            .collect()
    };
    assert!(found(&[]).contains(&"api/upload.py".to_string()));
    for glob in ["/upload.py", "/*load.py", "api/upload.py", "/api/*load.py"] {
        let kept = found(&["-E", glob]);
        assert!(!kept.is_empty() && !kept.contains(&"api/upload.py".to_string()), "{glob}: {kept:?}");
    }
    // The catalog path vg-mcp and vg-ask show leaves a whole project out
    // (matched within projects alone, no glob could).
    let kept = found(&["-E", "billing/"]);
    assert!(kept.iter().all(|f| f.starts_with("api/")) && kept.contains(&"api/upload.py".to_string()), "{kept:?}");
    // A `!` that takes back either path keeps the file, as `*.py` matched
    // by the other left it out.
    assert_eq!(found(&["-E", "*.py", "-E", "!/upload.py"]), ["api/upload.py"]);
    let mut kept = found(&["-E", "*.py", "-E", "!api/**"]);
    kept.sort();
    assert_eq!(kept, ["api/auth.py", "api/upload.py"]);
}

#[test]
fn the_default_context_applies_outside_projects_and_in_its_own_and_a_path_means_here() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let o = run(p.cmd("vecgrep", ".").args(["use", "--catalog", "team"]));
    assert_code(&o, 0);
    assert!(p.t.config_home.path().join("vecgrep/context.toml").is_file());
    let query = ["--json", "--threshold", "-1", "email the monthly invoice"];
    let top = |cwd: &str, extra: &[&str]| {
        let o = run(p.cmd("vecgrep", cwd).args(query).args(extra));
        assert_code(&o, 0);
        records(&o)[0].clone()
    };
    assert_eq!(top("elsewhere", &[])["project"], "billing", "outside any project: the catalog");
    assert_eq!(top("src/api", &[])["project"], "billing", "inside one of its projects: the catalog");
    let own = top("mine", &[]);
    assert_eq!(
        (own["project"].as_str(), own["file"].as_str()),
        (None, Some("main.py")),
        "a project of its own keeps its search"
    );
    let here = top("src/api", &["."]);
    assert!(
        here["project"].is_null() && here["root"].as_str().unwrap().ends_with("src/api"),
        "a PATH means the project here"
    );

    let o = run(p.cmd("vecgrep", ".").arg("use"));
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("catalog team"), "{}", stdout(&o));
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "--clear"])), 0);
    assert!(!p.t.config_home.path().join("vecgrep/context.toml").exists());
    assert_code(&run(p.cmd("vecgrep", ".").arg("use")), 1);
    assert_eq!(top("src/api", &[])["project"], Value::Null, "cleared: the project here");

    // A default context naming a catalog that is gone is an error where it
    // would be searched, never another search; a project of its own keeps its own.
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "team"])), 0);
    std::fs::rename(p.dir("catalogs/team"), p.dir("catalogs-away")).unwrap();
    let o = run(p.cmd("vecgrep", "elsewhere").args(query));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("the default context names catalog 'team'"), "{}", stderr(&o));
    assert_eq!(top("mine", &[])["file"], "main.py");
    std::fs::rename(p.dir("catalogs-away"), p.dir("catalogs/team")).unwrap();
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove", "team"])), 0);
    assert!(
        !p.t.config_home.path().join("vecgrep/context.toml").exists(),
        "removing the default catalog clears the context"
    );
    assert!(p.dir("src/api/upload.py").is_file() && p.dir("src/billing/invoice.py").is_file());
}

#[test]
fn names_breaking_the_rules_are_refused_saying_the_rule() {
    let p = Projects::new();
    for (name, rule) in [
        ("Team", "has an uppercase letter"),
        ("team--api", "two in a row"),
        ("team:api", "reserved"),
        ("team@1", "reserved"),
        ("team api", "reserved"),
    ] {
        let o = p.add(name, &["src/api"]);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.starts_with(&format!("vg-catalog: catalog name '{name}'")) && err.contains(rule), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "no-such", "q"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no catalog named 'no-such'"), "{}", stderr(&o));
    // Audit 207: a refused change made the catalogs' directory and its lock.
    for args in [&["remove", "no-such"][..], &["remove-project", "no-such", "api"]] {
        let o = run(p.cmd("vg-catalog", ".").args(args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("no catalog named 'no-such'"), "{args:?}: {}", stderr(&o));
        assert!(!p.dir("catalogs").exists(), "{args:?} made the catalogs' directory");
    }
    std::fs::create_dir_all(p.dir("other/api")).unwrap();
    assert_code(&p.add("team", &["src/api"]), 0);
    let o = p.add("team", &["other/api"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("distinct directory names"), "{}", stderr(&o));
    let o = run(p.cmd("vecgrep", ".").args(["--log", "--catalog", "team", "q"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--catalog needs a project's files, not its history"), "{}", stderr(&o));
}

/// A damaged catalog index is rebuilt by a run of the catalog, which is
/// what a search and --verify advise (review 215: "run vg-index", which
/// in one of its projects indexed that project instead).
#[test]
fn a_damaged_catalog_index_is_advised_a_run_of_the_catalog() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    std::fs::write(p.dir("catalogs/team/.vecgrep/index.db"), vec![7u8; 4096]).unwrap();
    let o = run(p.cmd("vg-query", "src/api").args(["--no-index", "--catalog", "team", "upload"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("is damaged (") && stderr(&o).ends_with("; run vg-index --catalog team to rebuild it\n"),
        "{}",
        stderr(&o)
    );
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--verify"]));
    assert!(stderr(&o).contains("is damaged; vg-index --catalog team rebuilds it"), "{}", stderr(&o));
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    let o = run(p.cmd("vg-query", ".").args(["--no-index", "--catalog", "team", "--threshold", "-1", "upload"]));
    assert_code(&o, 0);
}

#[test]
fn a_catalog_index_killed_mid_run_is_sound_and_the_next_run_completes_it() {
    let p = Projects::new();
    for i in 0..60 {
        p.t.write(&format!("src/web/page{i:02}.js"), &format!("// Page {i}: list the orders of a customer.\nfunction page{i}(req) {{\n  return orders(req.user, {i});\n}}\n"));
    }
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    let seen = kill_after_file_records(p.cmd("vg-index", ".").args(["--catalog", "team", "--full"]), 40);
    assert_eq!(seen, 40, "the run ended before the phase to kill it in");
    let verify = |p: &Projects| {
        let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--verify", "--json"]));
        records(&o)[0].clone()
    };
    assert_eq!(verify(&p)["ok"], true);
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--full"]));
    assert_code(&o, 0);
    let s = summary(&o);
    assert!(s["reused"].as_u64().unwrap() > 0, "what was written before the kill is kept: {s}");
    let v = verify(&p);
    assert_eq!((v["ok"].as_bool(), v["files"].as_u64()), (Some(true), Some(65)), "{v}");
}

#[test]
fn a_server_serves_a_catalog_as_a_root() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    let cats = p.dir("catalogs").display().to_string();
    let s = crate::serve::Server::start_with(&p.t, &["--catalog", "team"], &[("VECGREP_CATALOG_DIR", &cats)]);
    s.wait_ready();
    let (status, _, body) = s.request("GET", "/search?q=render+the+dashboard+page", &[]);
    assert_eq!(status, 200, "{body}");
    let first: Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    assert_eq!((first["project"].as_str(), first["file"].as_str()), (Some("web"), Some("routes.js")), "{body}");
    // A project's own directory, as the command line takes it and hits
    // name it, narrows a question too (it was refused as outside the root).
    let body = serde_json::json!({"query": "render the dashboard page", "root": p.dir("src/web")}).to_string();
    let req = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, answer) = s.raw(req.as_bytes());
    assert_eq!(status, 200, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let paths: Vec<&str> = answer["hits"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| p.starts_with("web/")), "{paths:?}");
}

#[test]
fn catalogs_in_the_shared_store_answer_as_locally_and_two_writers_catalogs_never_mix() {
    let pg = crate::pg::PgServer::start();
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    // Another user's catalog of the same name, kept in their own directory.
    let theirs = p.dir("their-catalogs");
    let o =
        run(p.cmd("vg-catalog", ".").env("VECGREP_CATALOG_DIR", &theirs).args(["add", "team"]).arg(p.dir("src/web")));
    assert_code(&o, 0);
    let query = ["--threshold", "-1", "-k", "20", "email the monthly invoice"];
    let local = records(&run(p.cmd("vg-query", ".").args(["--catalog", "team"]).args(query)));
    let shared = |dir: &PathBuf| {
        let mut c = p.cmd("vg-query", ".");
        c.env("VECGREP_CATALOG_DIR", dir).args(["--catalog", "team", "--store", &pg.url]).args(query);
        let o = run(&mut c);
        assert_code(&o, 0);
        records(&o)
    };
    let ours = shared(&p.dir("catalogs"));
    let places = |hits: &[Value]| hits.iter().map(|h| (h["project"].clone(), h["file"].clone())).collect::<Vec<_>>();
    assert_eq!(places(&ours), places(&local), "the shared store ranks a catalog as the local index does");
    let them = shared(&theirs);
    assert!(projects_of(&them).iter().all(|p| p == "web"), "{:?}", projects_of(&them));
    assert!(projects_of(&ours).iter().all(|p| p == "api" || p == "billing"), "{:?}", projects_of(&ours));
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--store", &pg.url, "--verify", "--json"]));
    assert_eq!((records(&o)[0]["ok"].as_bool(), records(&o)[0]["files"].as_u64()), (Some(true), Some(4)));
}

/// A catalog kept in the shared store (`store_url` in the global config):
/// removing it drops its index there too, and changes to it wait for an
/// index run there as they do for a local one.
#[test]
fn removing_a_catalog_kept_in_the_shared_store_drops_its_index_there() {
    let pg = crate::pg::PgServer::start();
    let p = Projects::new();
    p.t.global_config(&format!("store_url = \"{}\"\n", pg.url));
    let schemas = || pg.sql("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'vg\\_%'").unwrap();
    let before = schemas();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    assert_ne!(schemas(), before, "the catalog is indexed in the store");
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove-project", "team", "billing"])), 0);
    let o = run(p.cmd("vg-catalog", ".").args(["remove", "team"]));
    assert_code(&o, 0);
    assert_eq!(schemas(), before, "its index left the store: {}", stderr(&o));
    // A catalog of the same name later starts from nothing, not from the
    // projects the removed one held.
    assert_code(&p.add("team", &["src/web"]), 0);
    let o =
        run(p.cmd("vg-query", ".").args(["--catalog", "team", "--no-index", "--threshold", "-1", "email the invoice"]));
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(projects_of(&records(&o)).is_empty(), "{}", stdout(&o));
}

/// `git` with a fixed author in `dir`.
fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A directory of the catalogs' directory without a definition is no
/// catalog vecgrep can tell is one (the directory may be shared): never
/// taken over by `add` (which reused a deleted definition's links and
/// index, and searched the old projects) nor removed; and `remove` of a
/// catalog deletes what vecgrep put there, never anything else.
#[test]
fn a_directory_without_a_definition_is_never_taken_over_or_removed() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    std::fs::remove_file(p.dir("catalogs/team/.vecgrep-catalog.toml")).unwrap();
    assert_code(&run(p.cmd("vg-catalog", ".").arg("list")), 1);
    let o = p.add("team", &["src/web"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("holds no catalog definition") && stderr(&o).contains("delete it yourself"),
        "{}",
        stderr(&o)
    );
    let o = run(p.cmd("vg-catalog", ".").args(["remove", "team"]));
    assert_code(&o, 2);
    assert!(p.dir("catalogs/team/.vecgrep").exists(), "removed without a definition");
    std::fs::remove_dir_all(p.dir("catalogs/team")).unwrap();
    // Nor a file of that name, which a search advised making with `add`
    // and `add` failed on with "File exists" (audit 227).
    std::fs::write(p.dir("catalogs/team"), "a file\n").unwrap();
    for o in [p.add("team", &["src/web"]), run(p.cmd("vg-query", ".").args(["--catalog", "team", "retry"]))] {
        assert_code(&o, 2);
        assert!(stderr(&o).contains("holds no catalog definition"), "{}", stderr(&o));
    }
    assert_eq!(read(&p.dir("catalogs/team")), "a file\n");
    std::fs::remove_file(p.dir("catalogs/team")).unwrap();
    assert_code(&p.add("team", &["src/web"]), 0);
    let o =
        run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team", "--threshold", "-1", "retry a failed upload"]));
    assert!(records(&o).iter().all(|h| h["project"] == "web"), "{}", stdout(&o));

    // A file of someone else's in a catalog's directory outlives the catalog,
    // and so does a link of theirs (every link was removed); the default
    // context naming it is cleared all the same (it was left, failing every
    // search outside a project).
    std::fs::write(p.dir("catalogs/team/notes.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink("/tmp", p.dir("catalogs/team/my-link")).unwrap();
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "--catalog", "team"])), 0);
    let o = run(p.cmd("vg-catalog", ".").args(["remove", "team"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("holds files vecgrep did not put there"), "{}", stderr(&o));
    assert!(stdout(&o).contains("the default context named it, and is cleared"), "{}", stdout(&o));
    assert_eq!(read(&p.dir("catalogs/team/notes.txt")), "mine\n");
    assert!(p.dir("catalogs/team/my-link").symlink_metadata().is_ok(), "a link of the user's is kept");
    assert!(!p.dir("catalogs/team/.vecgrep-catalog.toml").exists() && !p.dir("catalogs/team/web").exists());
    assert!(p.dir("src/web/routes.js").exists(), "the projects are untouched");
}

/// What a definition cannot hold is refused before anything is written,
/// and a definition is read as strictly within a project as around it.
#[test]
fn a_path_no_definition_can_hold_leaves_no_catalog_behind() {
    use std::os::unix::ffi::OsStrExt;
    let p = Projects::new();
    let odd = p.dir("src").join(std::ffi::OsStr::from_bytes(b"n\xff")).join("proj");
    std::fs::create_dir_all(&odd).unwrap();
    let o = run(p.cmd("vg-catalog", ".").args(["add", "newd"]).arg(p.dir("src/web")).arg(&odd));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is not a UTF-8 path"), "{}", stderr(&o));
    assert!(!p.dir("catalogs/newd").exists(), "a refused add left its directory");

    assert_code(&p.add("team", &["src/api"]), 0);
    let definition = p.dir("catalogs/team/.vecgrep-catalog.toml");
    let text = read(&definition);
    std::fs::write(&definition, format!("{text}extra = 1\n")).unwrap();
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("extra"), "an unknown key in a project is refused: {}", stderr(&o));
}

/// A default context file that cannot be read is said, and the catalogs
/// are still listed, shown and removed (a removal stopped after removing,
/// with only the context's error said).
#[test]
fn a_malformed_default_context_stops_no_catalog_command() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api"]), 0);
    assert_code(&p.add("other", &["src/web"]), 0);
    std::fs::create_dir_all(p.t.config_home.path().join("vecgrep")).unwrap();
    std::fs::write(p.t.config_home.path().join("vecgrep/context.toml"), "garbage [[\n").unwrap();
    for args in [&["list"][..], &["show", "team"]] {
        let o = run(p.cmd("vg-catalog", ".").args(args));
        assert_code(&o, 2);
        assert!(stdout(&o).contains("team"), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains("no catalog is taken as the default"), "{}", stderr(&o));
    }
    let o = run(p.cmd("vg-catalog", ".").args(["remove", "team"]));
    assert_code(&o, 2);
    assert!(stdout(&o).contains("removed catalog 'team'"), "{}", stdout(&o));
    assert!(!p.dir("catalogs/team").exists());
    assert_code(&run(p.cmd("vg-catalog", ".").args(["use", "--clear"])), 0);
    assert_code(&run(p.cmd("vg-catalog", ".").arg("list")), 0);
}

/// The projects committed, `release-1` tagged in api and billing (not web),
/// then api's upload rewritten and committed on main.
fn labelled_projects() -> Projects {
    let p = Projects::new();
    for repo in ["src/api", "src/billing", "src/web"] {
        git_in(&p.dir(repo), &["add", "-A"]);
        git_in(&p.dir(repo), &["commit", "-qm", "first"]);
    }
    git_in(&p.dir("src/api"), &["tag", "release-1"]);
    git_in(&p.dir("src/billing"), &["tag", "release-1"]);
    p.t.write("src/api/upload.py", "def upload_once(path):\n    \"\"\"Send a file to the bucket a single time; callers decide what to do on failure.\"\"\"\n    send(path)\n");
    git_in(&p.dir("src/api"), &["commit", "-qam", "no more retries here"]);
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    p
}

/// A rule of an `--ignore-file` that does not parse is said once, the file
/// named as given: a catalog's walk said it for each project, under the
/// project's name (review 197).
#[test]
fn an_ignore_files_bad_rule_is_said_once_for_a_catalog() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    let rules = p.dir("bad.ignore");
    std::fs::write(&rules, "[z-a]\n").unwrap();
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--ignore-file", rules.to_str().unwrap()]));
    assert_code(&o, 0);
    let err = stderr(&o);
    let said: Vec<&str> = err.lines().filter(|l| l.contains("a rule left out")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].starts_with(&format!("vg-index: ignore file {}, a rule left out", rules.display())), "{}", said[0]);
    // A project's own file of the same name as given is its own (review 198).
    std::fs::write(p.dir("src/web/.gitignore"), "[q-a]\n").unwrap();
    std::fs::copy(&rules, p.dir("src/api/.gitignore")).unwrap();
    let o = run(p.cmd("vg-index", "src/api").args(["--catalog", "team", "--ignore-file", ".gitignore"]));
    let err = stderr(&o);
    assert!(err.contains("ignore file web/.gitignore, a rule left out: line 1: error parsing glob '[q-a]'"), "{err}");
    assert!(err.contains("ignore file .gitignore, a rule left out: line 1: error parsing glob '[z-a]'"), "{err}");
    // The same file given and a project's own, said alike: once (review 201).
    let o = run(p.cmd("vg-index", "src").args(["--catalog", "team", "--ignore-file", "web/.gitignore"]));
    let err = stderr(&o);
    assert_eq!(err.matches("ignore file web/.gitignore, a rule left out").count(), 1, "{err}");
}

/// A label leaves a project's submodules out as a revision does, and says
/// so; a PATH in one says why it finds nothing (audit 194: both were lost
/// in silence, the PATH said to name nothing).
#[test]
fn a_labels_submodules_are_said_to_be_left_out() {
    let p = labelled_projects();
    let zoo = git_repo();
    zoo.write("z.py", "def feed_the_zebras():\n    pass\n");
    git_in(&zoo.path(), &["add", "-A"]);
    git_in(&zoo.path(), &["commit", "-qm", "zoo"]);
    let api = p.dir("src/api");
    let zoo_path = zoo.path().to_string_lossy().into_owned();
    git_in(&api, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &zoo_path, "lib/zoo"]);
    git_in(&api, &["commit", "-qm", "zoo"]);
    git_in(&api, &["tag", "v2"]);
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "v2"]));
    assert!(stderr(&o).contains("left out the submodule api/lib/zoo: a revision or label"), "{}", stderr(&o));
    let o =
        run(p.cmd("vg-query", ".").args(["--catalog", "team", "--label", "v2", "feed the zebras", "src/api/lib/zoo"]));
    assert_code(&o, 2);
    let says = "'api/lib/zoo' is in the submodule api/lib/zoo, which label v2 holds only the commit of";
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
}

/// A label names the first ref of its name, as git reads it: a tag of a
/// tree (no commit) was passed over for a branch of the same name, whose
/// old commit was searched in silence, and a tag alone of a tree was "no
/// branch or tag" (audit 194).
#[test]
fn a_label_naming_a_tag_of_no_commit_says_so() {
    let p = labelled_projects();
    let api = p.dir("src/api");
    git_in(&api, &["branch", "rel", "release-1"]);
    git_in(&api, &["tag", "-a", "rel", "-m", "t", "HEAD^{tree}"]);
    git_in(&api, &["tag", "treeonly", "HEAD^{tree}"]);
    for label in ["rel", "treeonly"] {
        let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "--label", label, "upload"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("does not name a commit"), "{label}: {}", stderr(&o));
    }
}

/// Declined at the large-run question, a first run of a label leaves
/// nothing: `show` listed it as partial, to be completed by the next run.
#[test]
fn a_label_declined_at_the_question_leaves_nothing() {
    let p = labelled_projects();
    let (catalogs, vg_index) = (p.dir("catalogs"), bin("vg-index"));
    let cmd = format!(
        "VECGREP_CATALOG_DIR='{}' {} --catalog team --label release-1 --index-warn-threshold 1",
        catalogs.display(),
        vg_index.display()
    );
    let Some(o) = on_a_terminal(&p.t, &cmd, "n\n") else { return };
    assert!(stdout(&o).contains("Continue? [y/N]"), "{}", stdout(&o));
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert!(!stdout(&o).contains("label release-1"), "{}", stdout(&o));
    assert_eq!(std::fs::read_dir(p.dir("catalogs/team/.vecgrep/revs")).map_or(0, Iterator::count), 0);
}

/// A PATH of a label's search names a place in the label's trees, as one
/// of `--rev`'s does in the revision's: a file the working tree lost since
/// is searched (it was an error, "No such file"), and one the label's
/// commits lack is said to name nothing, status 2 (it was 1, in silence).
#[test]
fn a_labels_paths_name_places_in_its_trees_not_the_working_trees() {
    let p = labelled_projects();
    std::fs::remove_file(p.dir("src/api/auth.py")).unwrap();
    p.t.write("src/api/new.py", "def renew_token(request):\n    return request.token.refresh()\n");
    let search = |path: &str| {
        let args = ["--catalog", "team", "--label", "release-1", "--threshold", "-1", "bearer token expired", path];
        run(p.cmd("vg-query", ".").args(args))
    };
    // vg-index indexes a label whole, as a revision: a PATH is refused, not passed over.
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1", "src/api/auth.py"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("a label indexes each project's whole tree at the label; leave out the PATHs"));
    let o = search("src/api/auth.py");
    assert_code(&o, 0);
    let hit = &records(&o)[0];
    assert_eq!((hit["project"].as_str(), hit["file"].as_str()), (Some("api"), Some("auth.py")), "{}", stderr(&o));
    let o = search("src/api/new.py");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("'api/new.py' names nothing in label release-1"), "{}", stderr(&o));
}

/// A file where the catalogs' directory should be is said as that by
/// every command: `add` said "File exists", `show` "no catalog named".
#[test]
fn a_file_in_the_way_of_the_catalogs_directory_is_said_by_every_command() {
    let p = Projects::new();
    p.t.write("not-a-dir", "x\n");
    std::os::unix::fs::symlink("nowhere", p.dir("dangling")).unwrap();
    for (dir, says) in [
        ("not-a-dir", "not-a-dir is not a directory"),
        ("not-a-dir/sub", "not-a-dir/sub lies below a file"),
        ("dangling", "dangling is a link that leads nowhere"),
    ] {
        for args in [&["add", "team", "src/api"][..], &["show", "team"], &["list"]] {
            let o = run(p.cmd("vg-catalog", ".").args(args).env("VECGREP_CATALOG_DIR", p.dir(dir)));
            assert_code(&o, 2);
            assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        }
    }
    // The default context lives apart, and is cleared whatever the directory.
    let o = run(p.cmd("vg-catalog", ".").args(["use", "--clear"]).env("VECGREP_CATALOG_DIR", p.dir("not-a-dir")));
    assert_code(&o, 0);
}

/// A relative `VECGREP_CATALOG_DIR` is refused by every command that uses
/// catalogs: read against each directory a tool ran from, a catalog added
/// in one was missing from the others (audit 251).
#[test]
fn a_relative_catalogs_directory_is_refused() {
    let p = Projects::new();
    let says = "VECGREP_CATALOG_DIR is the relative path 'relcat': give the catalogs' directory as an absolute path";
    for (tool, args) in [
        ("vg-catalog", &["add", "team", "src/api"][..]),
        ("vg-catalog", &["list"]),
        ("vg-query", &["--catalog", "team", "retry"]),
    ] {
        let o = run(p.cmd(tool, ".").args(args).env("VECGREP_CATALOG_DIR", "relcat"));
        assert_code(&o, 2);
        assert_eq!(stderr(&o).trim(), format!("{tool}: {says}"));
    }
    assert!(!p.dir("relcat").exists());
    // Nor is a catalog's own directory taken for a project of links, whose
    // run emptied the catalog's index (review 255).
    assert_code(&p.add("team", &["src/api"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    let o = run(p.cmd("vg-index", "catalogs/team").env("VECGREP_CATALOG_DIR", ".."));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("VECGREP_CATALOG_DIR is the relative path '..'"), "{}", stderr(&o));
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--stats", "--json"]));
    assert_ne!(records(&o)[0]["files"], 0, "{}", stdout(&o));
}

/// A label over a project moved away says it moved, as a run over the
/// working trees does: it said "is not in a git repository".
#[test]
fn a_label_over_a_moved_project_says_it_moved() {
    let p = labelled_projects();
    std::fs::rename(p.dir("src/billing"), p.dir("moved")).unwrap();
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1"]));
    assert_code(&o, 0);
    let moved = format!(
        "names nothing in project billing (the catalog's project is not at {} any more)",
        p.dir("src/billing").display()
    );
    assert!(stderr(&o).contains(&moved), "{}", stderr(&o));
}

/// Globs are matched within each project, as over the catalog's index:
/// `-E /upload.py` left every project's upload.py at the label in.
#[test]
fn a_labels_search_matches_globs_within_each_project() {
    let p = labelled_projects();
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1"])), 0);
    let query =
        ["--catalog", "team", "--threshold", "-1", "--label", "release-1", "--no-index", "retry a failed upload"];
    for glob in ["/upload.py", "api/upload.py"] {
        let o = run(p.cmd("vg-query", "elsewhere").args(query).args(["-E", glob]));
        let left = records(&o);
        assert!(!left.is_empty(), "{glob}: {}", stderr(&o));
        assert!(left.iter().all(|h| !(h["project"] == "api" && h["file"] == "upload.py")), "{glob}: {left:?}");
    }
}

#[test]
fn a_label_searches_each_projects_revision_and_says_where_it_names_nothing() {
    let p = labelled_projects();
    let tagged = git_in(&p.dir("src/api"), &["rev-parse", "release-1"]);
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("label 'release-1' names nothing in project web"), "{}", stderr(&o));
    assert_eq!(crate::contract::check(&summary(&o)), "summary", "the record follows the contract");
    let label = &summary(&o)["label"];
    assert_eq!((label["commits"]["api"].as_str(), label["complete"].as_bool()), (Some(tagged.as_str()), Some(true)));
    assert!(label["commits"]["web"].is_null());

    // A label indexed statically is given the model's vectors by --full, not called indexed already.
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1", "--full"]));
    let full = summary(&o);
    assert!(full["embedded"].as_u64().unwrap() > 0 && full["pending"] == 0, "{full}");
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1", "--full"]));
    assert!(stderr(&o).contains("is indexed already"), "{}", stderr(&o));

    let query = ["--catalog", "team", "--threshold", "-1", "retry a failed upload a few times"];
    let o = run(p.cmd("vg-query", "elsewhere").args(query).args(["--label", "release-1", "--no-index"]));
    assert_code(&o, 0);
    let top = &records(&o)[0];
    assert_eq!(
        (top["project"].as_str(), top["file"].as_str(), top["rev"].as_str()),
        (Some("api"), Some("upload.py"), Some(tagged.as_str()))
    );
    assert!(
        top["text"].as_str().unwrap().contains("Retry a failed upload"),
        "the label's text, not the working tree's"
    );
    assert!(records(&o).iter().all(|h| h["project"] != "web"));
    let now = records(&run(p.cmd("vg-query", "elsewhere").args(query)));
    assert!(
        now.iter().any(|h| h["text"].as_str().unwrap().contains("upload_once")),
        "the working tree is searched without --label"
    );

    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert!(stdout(&o).contains("label release-1 (complete, indexed at"), "{}", stdout(&o));
    // As JSON too (the record left them out, though `show` lists them).
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team", "--json"]));
    let labels = records(&o)[0]["labels"].clone();
    assert_eq!(
        (labels[0]["name"].as_str(), labels[0]["complete"].as_bool()),
        (Some("release-1"), Some(true)),
        "{labels}"
    );
    assert_eq!(labels[0]["commits"]["api"].as_str().map(str::len), Some(40), "{labels}");
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "--label", "v9", "q"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("label 'v9' names a revision in none of the projects of catalog 'team'"),
        "{}",
        stderr(&o)
    );
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "--label", "Release_1", "q"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("label name 'Release_1' has an uppercase letter"), "{}", stderr(&o));
    // A revision is one repository's: with a catalog, the way is a label.
    for tool in ["vg-query", "vg-index", "vecgrep"] {
        let mut c = p.cmd(tool, ".");
        c.args(["--catalog", "team", "--rev", "release-1"]);
        if tool != "vg-index" {
            c.arg("q");
        }
        let o = run(&mut c);
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("a catalog's projects are searched at a branch or tag with --label"),
            "{tool}: {}",
            stderr(&o)
        );
    }

    // The default context may name a label too; one no project has yet is
    // set with a warning, not left for every search to find out.
    let o = run(p.cmd("vecgrep", ".").args(["use", "team", "--label", "v9"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("warning: label 'v9' names a revision in none of the projects"), "{}", stderr(&o));
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "team", "--label", "release-1"])), 0);
    let o =
        run(p.cmd("vecgrep", "elsewhere").args(["--json", "--threshold", "-1", "retry a failed upload a few times"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["rev"].as_str(), Some(tagged.as_str()));
    // A question searches the working trees: said, not passed over.
    let o = run(p.cmd("vecgrep", "elsewhere").args(["--ask", "--json", "retry a failed upload a few times"]));
    let said = "the default context's label release-1 does not apply to a question";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let response: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert!(response["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains(said)), "{response}");
}

/// A project in a directory its repository had not made yet at the
/// label's commit is left out and said, as one the label names nothing in;
/// the others are searched (every run failed: "did not exist at").
#[test]
fn a_label_leaves_out_a_project_whose_directory_came_later() {
    let p = Projects::new();
    for repo in ["src/api", "src/billing"] {
        git_in(&p.dir(repo), &["add", "-A"]);
        git_in(&p.dir(repo), &["commit", "-qm", "first"]);
        git_in(&p.dir(repo), &["tag", "release-1"]);
    }
    p.t.write("src/api/jobs/queue.py", "def enqueue(job):\n    \"\"\"Put a job on the work queue.\"\"\"\n");
    git_in(&p.dir("src/api"), &["add", "-A"]);
    git_in(&p.dir("src/api"), &["commit", "-qm", "jobs"]);
    assert_code(&p.add("team", &["src/api/jobs", "src/billing"]), 0);
    let tagged = git_in(&p.dir("src/api"), &["rev-parse", "release-1"]);
    for _ in 0..2 {
        let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1"]));
        assert_code(&o, 0);
        let said = format!(
            "label 'release-1' names nothing in project jobs (its directory did not exist at commit {}); it is left out",
            &tagged[..12]
        );
        assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    }
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "team", "--label", "release-1", "--json", "invoice email"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["project"], "billing");
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert!(stdout(&o).contains("label release-1 (complete"), "{}", stdout(&o));
    // A label of no project's directory says why, not that it names nothing.
    assert_code(&p.add("jobs-only", &["src/api/jobs"]), 0);
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "jobs-only", "--label", "release-1", "enqueue"]));
    assert_code(&o, 2);
    let said = format!(
        "vecgrep: label 'release-1' names no revision of catalog 'jobs-only' that holds a project (jobs: its directory did not exist at commit {})",
        &tagged[..12]
    );
    assert_eq!(stderr(&o).trim(), said);
}

/// `--clear-cache` and `--reindex` with `--label` act on that label's
/// index alone; the flags about the catalog's own index are refused, not
/// taken for the label's (`--clear-cache` removed the catalog's index and
/// every label's).
#[test]
fn clearing_a_labels_index_leaves_the_catalog_and_its_other_labels() {
    let p = labelled_projects();
    git_in(&p.dir("src/billing"), &["tag", "release-2"]);
    let index = |args: &[&str]| run(p.cmd("vg-index", ".").args(["--catalog", "team"]).args(args));
    for args in [&[][..], &["--label", "release-1"], &["--label", "release-2"]] {
        assert_code(&index(args), 0);
    }
    let o = index(&["--label", "release-2", "--clear-cache"]);
    assert_code(&o, 0);
    assert!(stderr(&o).contains("removed the index of label release-2 of catalog team"), "{}", stderr(&o));
    let shown = stdout(&run(p.cmd("vg-catalog", ".").args(["show", "team"])));
    assert!(shown.contains("label release-1 (complete") && !shown.contains("release-2"), "{shown}");
    let query = ["--catalog", "team", "--no-index", "--threshold", "-1", "retry a failed upload"];
    assert_code(&run(p.cmd("vg-query", "elsewhere").args(query)), 0);
    assert_code(&run(p.cmd("vg-query", "elsewhere").args(query).args(["--label", "release-1"])), 0);
    let o = index(&["--label", "release-2", "--clear-cache"]);
    assert!(stderr(&o).contains("label release-2 of catalog team holds no index to remove"), "{}", stderr(&o));
    // The porcelain passes --label on with --clear-cache.
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "team", "--label", "release-2", "--clear-cache"]));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("label release-2 of catalog team holds no index to remove"), "{}", stderr(&o));

    // --reindex drops the label's index and makes it again.
    let o = index(&["--label", "release-1", "--reindex"]);
    assert_code(&o, 0);
    assert!(summary(&o)["files"].as_u64().unwrap() > 0 && summary(&o)["label"]["complete"] == true, "{}", stdout(&o));

    for flag in [&["--stats"][..], &["--verify"], &["--forget", "HEAD"]] {
        let o = index(&[&["--label", "release-1"][..], flag].concat());
        assert_code(&o, 2);
        assert!(stderr(&o).contains(&format!("{} does not go with --label", flag[0])), "{}", stderr(&o));
    }
    // The catalog's --stats lists its labels as labels, not as revisions of
    // a sha that names no commit, and --forget says what drops one, where
    // it blamed a --rev never given (audit 207).
    let o = index(&["--stats", "--json"]);
    assert_code(&o, 0);
    let stats = &records(&o)[0];
    assert_eq!(stats["revisions"], serde_json::json!([]), "{stats}");
    assert!(stats["labels"].as_array().unwrap().iter().any(|l| l["names"][0] == "release-1"), "{stats}");
    let o = index(&["--stats"]);
    assert!(stdout(&o).contains("label:    release-1: "), "{}", stdout(&o));
    let o = index(&["--forget", "release-1"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--forget drops a revision's index of one repository; a catalog's label index is dropped with --label NAME --clear-cache"), "{}", stderr(&o));
    let o = index(&["--label", "Bad_Name", "--clear-cache"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("label name 'Bad_Name' has an uppercase letter"), "{}", stderr(&o));
    // A refused command drops nothing first.
    for refused in
        [&["--label", "release-1", "--reindex", "-t", "py"][..], &["--label", "release-1", "--clear-cache", "--json"]]
    {
        assert_code(&index(refused), 2);
    }
    let shown = stdout(&run(p.cmd("vg-catalog", ".").args(["show", "team"])));
    assert!(shown.contains("label release-1 (complete"), "{shown}");

    // The default context's label is the one --reindex and --clear-cache act on.
    assert_code(&run(p.cmd("vg-catalog", ".").args(["use", "team", "--label", "release-1"])), 0);
    let o = run(p.cmd("vg-index", "elsewhere").arg("--reindex"));
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("indexed already") && summary(&o)["files"].as_u64().unwrap() > 0, "{}", stderr(&o));
    let o = run(p.cmd("vg-index", "elsewhere").arg("--clear-cache"));
    assert!(stderr(&o).contains("removed the index of label release-1 of catalog team"), "{}", stderr(&o));
    let o =
        run(p.cmd("vg-query", "elsewhere").args(["--no-index", "--catalog", "team", "--threshold", "-1", "upload"]));
    assert_code(&o, 0);
}

/// A damaged label index is named by its label in --verify, as --stats
/// names it, with what rebuilds it (review 208: "revision SHA", a key no
/// output showed), whether its run completed or not, and whether the name
/// is read from its revision mark or its state (reviews 209, 210).
#[test]
fn a_damaged_label_index_is_named_by_its_label_with_what_rebuilds_it() {
    let p = labelled_projects();
    let index = |args: &[&str]| run(p.cmd("vg-index", ".").args(["--catalog", "team"]).args(args));
    for args in [&[][..], &["--label", "release-1"]] {
        assert_code(&index(args), 0);
    }
    let revs = p.dir("catalogs/team/.vecgrep/revs");
    let label_dir = || std::fs::read_dir(&revs).unwrap().next().unwrap().unwrap().path().join(".vecgrep");
    let rebuild = "the index of label release-1 is damaged; vg-index --catalog team --label release-1 --clear-cache, then vg-index --catalog team --label release-1, rebuilds it";
    let verified_as = |said: &str, advice: &str| {
        let o = index(&["--verify"]);
        assert_code(&o, 2);
        assert!(stdout(&o).contains(&format!("problem: {said}")), "{}", stdout(&o));
        assert!(stderr(&o).contains(advice), "{}", stderr(&o));
    };
    std::fs::write(label_dir().join("index.db"), vec![7u8; 100]).unwrap();
    verified_as("label release-1: ", rebuild);
    // Its state lost, the mark names it, and what the advice says drops it.
    std::fs::remove_file(label_dir().join("label.toml")).unwrap();
    verified_as("label release-1: ", rebuild);
    // Shown too (review 211: `show` left it out, as `--stats` did not).
    let shown = |json: bool| {
        let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]).args(json.then_some("--json")));
        assert_code(&o, 0);
        stdout(&o)
    };
    assert!(
        shown(false).contains(
            "label release-1 (its state cannot be read: vg-index --catalog team --label release-1 writes it again"
        ),
        "{}",
        shown(false)
    );
    let record: serde_json::Value = serde_json::from_str(shown(true).trim()).unwrap();
    assert_eq!(record["unreadable_labels"][0]["names"], serde_json::json!(["release-1"]), "{record}");
    assert_eq!(record["labels"], serde_json::json!([]), "{record}");
    let o = index(&["--label", "release-1", "--clear-cache"]);
    assert!(stderr(&o).contains("removed the index of label release-1"), "{}", stderr(&o));
    assert_code(&index(&["--verify"]), 0);
    // A run killed before it completed: the state alone names it.
    assert_code(&index(&["--label", "release-1"]), 0);
    std::fs::write(label_dir().join("index.db"), vec![7u8; 100]).unwrap();
    std::fs::remove_file(label_dir().join("revision")).unwrap();
    verified_as("label release-1: ", rebuild);
    // Neither readable: said so, with what finds it.
    std::fs::write(label_dir().join("label.toml"), "label = [\n").unwrap();
    verified_as(
        "an unnamed label (",
        "its label cannot be read; a run of that label (vg-index --catalog team --label LABEL) rebuilds it",
    );
    assert!(stdout(&index(&["--stats"])).contains("label:    (name unreadable): damaged;"));
    assert!(shown(false).contains("  an unnamed label ("), "{}", shown(false));
    std::fs::remove_dir_all(label_dir().parent().unwrap()).unwrap();
    assert_code(&index(&["--label", "release-1"]), 0);
}

#[test]
fn a_label_copies_the_vectors_the_catalog_holds_and_a_partial_one_is_never_searched_as_whole() {
    let p = labelled_projects();
    for i in 0..150 {
        p.t.write(&format!("src/web/page{i:03}.js"), &format!("// Page {i}: list the orders of a customer.\nfunction page{i}(req) {{\n  return orders(req.user, {i});\n}}\n"));
    }
    git_in(&p.dir("src/web"), &["add", "-A"]);
    git_in(&p.dir("src/web"), &["commit", "-qm", "pages"]);
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--full"]));
    assert_code(&o, 0);
    let chunks = summary(&o)["chunks"].as_u64().unwrap();

    // Killed once its run has begun: listed as partial, refused to a search that will not index.
    let revs = p.dir("catalogs/team/.vecgrep/revs");
    let mut child = p
        .cmd("vg-index", ".")
        .args(["--catalog", "team", "--label", "main"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !std::fs::read_dir(&revs)
        .map(|d| d.flatten().any(|e| e.path().join(".vecgrep/label.toml").exists()))
        .unwrap_or(false)
    {
        assert!(started.elapsed().as_secs() < 60, "the label run never began");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let killed_early = child.wait().unwrap().code().is_none();
    if killed_early {
        let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
        assert!(stdout(&o).contains("label main (partial"), "{}", stdout(&o));
        let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "--label", "main", "--no-index", "orders"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("label 'main' of catalog 'team' is not fully indexed"), "{}", stderr(&o));
    }
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "main", "--full"]));
    assert_code(&o, 0);
    let s = summary(&o);
    assert_eq!(
        (s["chunks"].as_u64(), s["embedded"].as_u64()),
        (Some(chunks), Some(0)),
        "every vector copied from the catalog's own index: {s}"
    );
    assert!(s["copied"].as_u64().unwrap() > 0, "{s}");
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert!(stdout(&o).contains("label main (complete"), "{}", stdout(&o));

    // main moves on: its next index replaces the one it supersedes.
    p.t.write("src/web/page000.js", "// Page 0: list the refunds of a customer.\nfunction page0(req) {}\n");
    git_in(&p.dir("src/web"), &["commit", "-qam", "refunds"]);
    let before = std::fs::read_dir(&revs).unwrap().count();
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "main"])), 0);
    assert_eq!(std::fs::read_dir(&revs).unwrap().count(), before, "the superseded index of main is gone");
    let o = run(p.cmd("vg-catalog", ".").args(["show", "team"]));
    assert_eq!(stdout(&o).matches("label main ").count(), 1, "{}", stdout(&o));
    let o = run(p.cmd("vg-query", ".").args([
        "--catalog",
        "team",
        "--label",
        "main",
        "--no-index",
        "--threshold",
        "-1",
        "refunds",
    ]));
    assert!(stdout(&o).contains("refunds of a customer"), "the label's new commit is searched");
}

#[test]
fn labels_in_the_shared_store_are_searched_as_locally() {
    let pg = crate::pg::PgServer::start();
    let p = labelled_projects();
    let tagged = git_in(&p.dir("src/api"), &["rev-parse", "release-1"]);
    let store = ["--store", pg.url.as_str()];
    for label in ["release-1", "main"] {
        let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", label]).args(store));
        assert_code(&o, 0);
        assert_eq!(summary(&o)["label"]["complete"], true, "{label}");
    }
    let query = ["--catalog", "team", "--threshold", "-1", "--no-index", "retry a failed upload a few times"];
    let ask = |label: &str, shared: bool| {
        let mut c = p.cmd("vg-query", ".");
        c.args(query).args(["--label", label]);
        if shared {
            c.args(store);
        }
        records(&run(&mut c))
    };
    let old = ask("release-1", true);
    assert_eq!((old[0]["project"].as_str(), old[0]["rev"].as_str()), (Some("api"), Some(tagged.as_str())));
    assert!(ask("main", true).iter().any(|h| h["text"].as_str().unwrap().contains("upload_once")));
    // The local store has neither label: refused, never answered from the shared one's.
    let o = run(p.cmd("vg-query", ".").args(query).args(["--label", "main"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is not fully indexed"), "{}", stderr(&o));
}

#[test]
fn the_default_context_applies_in_a_project_that_is_a_subdirectory_of_a_repository() {
    let p = Projects::new();
    p.t.write("mono/svc/api/retry.py", "def retry_upload(path):\n    \"\"\"Retry a failed upload.\"\"\"\n")
        .write("mono/svc/billing/invoice.py", "def send_invoice(t):\n    \"\"\"Email the monthly invoice.\"\"\"\n")
        .write("mono/other/notes.py", "def email_notes():\n    \"\"\"Email the monthly notes.\"\"\"\n");
    std::fs::create_dir_all(p.dir("mono/.git")).unwrap();
    assert_code(&p.add("svc", &["mono/svc/api", "mono/svc/billing"]), 0);
    assert_code(&run(p.cmd("vecgrep", ".").args(["use", "svc"])), 0);
    let o = run(p.cmd("vecgrep", "mono/svc/api").args(["--json", "--threshold", "-1", "email the monthly invoice"]));
    assert_code(&o, 0);
    let hits = records(&o);
    assert_eq!(hits[0]["project"], "billing", "the catalog, not the whole repository");
    assert!(hits.iter().all(|h| h["project"].is_string()), "nothing of mono/other");
    // A repository nested in one of its projects is a project of its own
    // (the catalog's was searched from there).
    p.t.write("mono/svc/api/vendored/mail.py", "def email_report():\n    \"\"\"Email the monthly report.\"\"\"\n");
    std::fs::create_dir_all(p.dir("mono/svc/api/vendored/.git")).unwrap();
    let o = run(p.cmd("vecgrep", "mono/svc/api/vendored").args([
        "--json",
        "--threshold",
        "-1",
        "email the monthly invoice",
    ]));
    assert_code(&o, 0);
    let hits = records(&o);
    assert!(hits.iter().all(|h| h["project"].is_null() && h["file"] == "mail.py"), "{hits:?}");
}

#[test]
fn a_catalog_server_answers_for_a_label_indexed_whole() {
    let p = labelled_projects();
    let tagged = git_in(&p.dir("src/api"), &["rev-parse", "release-1"]);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team", "--label", "release-1"])), 0);
    let cats = p.dir("catalogs").display().to_string();
    let s = crate::serve::Server::start_with(&p.t, &["--catalog", "team"], &[("VECGREP_CATALOG_DIR", &cats)]);
    s.wait_ready();
    let q = "/search?q=retry+a+failed+upload+a+few+times&threshold=-1";
    let (status, _, body) = s.request("GET", &format!("{q}&label=release-1"), &[]);
    assert_eq!(status, 200, "{body}");
    let first: Value = serde_json::from_str(body.lines().next().unwrap()).unwrap();
    assert_eq!((first["project"].as_str(), first["rev"].as_str()), (Some("api"), Some(tagged.as_str())), "{body}");
    assert!(first["text"].as_str().unwrap().contains("Retry a failed upload"));
    for (params, why) in [
        ("&label=main", "is not fully indexed"),
        ("&label=v9", "names a revision in none"),
        ("&label=Bad", "uppercase"),
        ("&label=release-1&rev=main", "do not go together"),
    ] {
        let (status, _, body) = s.request("GET", &format!("{q}{params}"), &[]);
        assert_eq!(status, 400, "{params}: {body}");
        assert!(body.contains(why), "{params}: {body}");
    }
}

#[test]
fn an_asked_question_over_a_catalog_names_catalog_paths_under_its_root() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing", "src/web"]), 0);
    let o = run(p.cmd("vg-ask", "elsewhere").args([
        "--catalog",
        "team",
        "--json",
        "where do we email the monthly invoice",
    ]));
    assert_code(&o, 0);
    let response = &records(&o)[0];
    let path = response["hits"][0]["path"].as_str().unwrap();
    assert_eq!(path, "billing/invoice.py", "{response}");
    let root = PathBuf::from(response["stats"]["root"].as_str().unwrap());
    assert_eq!(root, p.dir("catalogs/team"));
    assert!(root.join(path).is_file(), "root/path opens the file through the catalog's link");
}

/// A project taken out of a catalog leaves its index at once: a
/// `--no-index` search found its files until the next index run.
#[test]
fn a_project_taken_out_of_a_catalog_leaves_its_index_at_once() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    let search = || {
        let o = run(p.cmd("vg-query", ".").args([
            "--catalog",
            "team",
            "--no-index",
            "--threshold",
            "-1",
            "-k",
            "50",
            "email the invoice",
        ]));
        projects_of(&records(&o))
    };
    assert!(search().iter().any(|p| p == "billing"), "{:?}", search());
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove-project", "team", "billing"])), 0);
    let left = search();
    assert!(!left.is_empty() && left.iter().all(|p| p == "api"), "{left:?}");
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team", "--verify", "--json"]));
    assert_eq!(records(&o)[0]["ok"], true, "{}", stdout(&o));
    // The next run has nothing of billing's left to remove.
    let o = run(p.cmd("vg-index", ".").args(["--catalog", "team"]));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["removed"], 0, "{}", stdout(&o));
}

/// A project its user may not read is one error of the catalog's, named,
/// and its files leave the index; the other projects are searched. It
/// ended every search of the catalog with "ignore file .gitignore:
/// Permission denied", no project named.
#[test]
fn a_project_closed_to_the_user_is_one_error_and_the_others_are_searched() {
    use std::os::unix::fs::PermissionsExt;
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let user = OtherUser::new(&p.t);
    let as_user = |tool: &str| {
        let mut c = user.cmd(&p.t, tool);
        c.env("VECGREP_CATALOG_DIR", p.dir("catalogs")).args(["--catalog", "team"]);
        c
    };
    assert_code(&run(&mut as_user("vg-index")), 0);
    std::fs::set_permissions(p.dir("src/billing"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let o = run(as_user("vg-query").args(["--threshold", "-1", "-k", "50", "retry a failed upload"]));
    std::fs::set_permissions(p.dir("src/billing"), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("skipping billing: "), "{}", stderr(&o));
    let found = projects_of(&records(&o));
    assert!(!found.is_empty() && found.iter().all(|p| p == "api"), "{found:?}");
}

/// A project whose ignore file cannot be read is one error, and what the
/// index held of it is not searched: those rules were unread, and a file
/// they now leave out (a secret) was still found, by the CLI and servers.
#[test]
fn a_project_whose_rules_cannot_be_read_is_not_searched_from_its_old_entries() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let query = ["--threshold", "-1", "-k", "50", "email the monthly invoice"];
    let o = run(p.cmd("vg-query", "elsewhere").args(["--catalog", "team"]).args(query));
    assert!(projects_of(&records(&o)).contains(&"billing".to_string()), "{}", stdout(&o));
    std::fs::write(p.dir("src/billing/.vecgrepignore"), b"invoice.py\n\xff\n").unwrap();
    for (tool, extra) in [("vg-query", None), ("vg-query", Some("--no-scope")), ("vg-ask", None)] {
        let o = run(p.cmd(tool, "elsewhere").args(["--catalog", "team"]).args(extra).args(query));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("skipping billing: ignore file"), "{tool}: {}", stderr(&o));
        let found: Vec<String> = records(&o)
            .iter()
            .flat_map(|r| match r["hits"].as_array() {
                Some(hits) => hits.iter().map(|h| h["path"].as_str().unwrap().to_string()).collect(),
                None => vec![r["file"].as_str().unwrap_or("-").to_string()],
            })
            .collect();
        assert!(
            !found.is_empty() && found.iter().all(|f| !f.contains("invoice") && !f.contains("tax")),
            "{tool}: {found:?}"
        );
    }
    let cats = p.dir("catalogs").display().to_string();
    let s = crate::serve::Server::start_with(&p.t, &["--catalog", "team"], &[("VECGREP_CATALOG_DIR", &cats)]);
    s.wait_ready();
    let (status, _, body) = s.request("GET", "/search?q=email+the+monthly+invoice&threshold=-1&k=50", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(!body.is_empty() && !body.contains("\"billing\""), "{body}");
}

#[test]
fn a_catalog_changes_only_between_index_runs_and_leaves_one_lock_file() {
    use std::io::BufRead;
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "team"])), 0);
    // An index run holds the catalog's index lock: taking a project out
    // waits for it, rather than change what the run is writing the index of.
    let lock = std::fs::File::create(p.dir("catalogs/team/.vecgrep/index.lock")).unwrap();
    lock.lock().unwrap();
    let mut remove = p.cmd("vg-catalog", ".");
    let mut child = remove
        .args(["remove-project", "team", "billing"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::BufReader::new(child.stderr.as_mut().unwrap()).read_line(&mut said).unwrap();
    assert!(said.contains("waiting for the index run on catalog 'team'"), "{said}");
    assert!(child.try_wait().unwrap().is_none(), "it waits while the run holds the lock");
    assert!(p.t.path().join("catalogs/team/billing").exists());
    drop(lock);
    assert!(child.wait().unwrap().success());
    assert!(!p.t.path().join("catalogs/team/billing").exists());
    // Every name tried, refused ones included, leaves no lock file of its own.
    assert_code(&p.add("bad name", &["src/api"]), 2);
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove", "team"])), 0);
    let left: Vec<String> = std::fs::read_dir(p.dir("catalogs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, [".catalogs.lock"]);
}

/// An answer over a catalog reads the catalog's config, as its search
/// did, never its projects' (catalogs.md): vg-answer read the top hit's
/// project's, so that a typo there lost the answer and its settings chose
/// the model.
#[test]
fn an_answer_over_a_catalog_reads_the_catalogs_config_not_its_projects() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    std::fs::create_dir_all(p.dir("src/billing/.vecgrep")).unwrap();
    std::fs::write(p.dir("src/billing/.vecgrep/config.toml"), "topk = 1\n").unwrap();
    let url = crate::answer::canned_server(
        200,
        r#"{"model": "m", "choices": [{"message": {"content": "It is send_invoice [1]."}, "finish_reason": "stop"}]}"#,
    );
    // An answer from outside every project, the catalog named by `catalog`.
    let answers = |catalog: &[&str]| {
        let o = run(p
            .cmd("vecgrep", "elsewhere")
            .args(["--answer", "--force-answer", "--json", "--llm-url", &url, "--llm-model", "m"])
            .args(catalog)
            .arg("email the monthly invoice"));
        assert_code(&o, 0);
        let answered = of_type(&records(&o), "answer").into_iter().next().cloned();
        assert!(answered.is_some_and(|a| a["text"].as_str().unwrap().contains("send_invoice")), "{}", stderr(&o));
    };
    answers(&["--catalog", "team"]);
    // In a second catalog too: the porcelain says which it searched (the
    // project's config was read again, none being the one holding it).
    assert_code(&p.add("other", &["src/billing"]), 0);
    answers(&["--catalog", "team"]);
    // And by the default context, which the porcelain resolves to say it.
    assert_code(&run(p.cmd("vg-catalog", ".").args(["use", "team"])), 0);
    answers(&[]);
    // No result to answer from, run in that project: the catalog's search
    // found nothing, as a search alone says; the answer needs no config.
    let none = ["--catalog", "team", "--threshold", "0.999", "zebra crossing lights"];
    let searched = run(p.cmd("vecgrep", "src/billing").args(none));
    let answered =
        run(p.cmd("vecgrep", "src/billing").args(["--answer", "--llm-url", "http://127.0.0.1:9/v1"]).args(none));
    assert_code(&searched, 1);
    assert_code(&answered, 1);
    // The catalog's own config is read, and its fault said.
    std::fs::write(p.dir("catalogs/team/.vecgrep/config.toml"), "topk = 1\n").unwrap();
    let o = run(p.cmd("vecgrep", "elsewhere").args(["--answer", "--catalog", "team", "--llm-url", &url, "invoice"]));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("topk") && stderr(&o).lines().count() == 1, "{}", stderr(&o));
}

/// Audit 186: `remove` took no lock, so beside an `add` of the same catalog
/// it left a directory holding a link and no definition, or the catalog came
/// back with a project removed before it. It waits for a change under way.
#[test]
fn removing_a_catalog_waits_for_a_change_under_way() {
    let p = Projects::new();
    assert_code(&p.add("race", &["src/api"]), 0);
    let lock = std::fs::File::options().write(true).open(p.dir("catalogs/.catalogs.lock")).unwrap();
    lock.lock().unwrap();
    let mut remove = p.cmd("vg-catalog", ".").args(["remove", "race"]).stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(remove.try_wait().unwrap().is_none(), "removed while another change held the lock");
    assert!(p.dir("catalogs/race/.vecgrep-catalog.toml").exists());
    drop(lock);
    assert_code(&remove.wait_with_output().unwrap(), 0);
    assert!(!p.dir("catalogs/race").exists());

    assert_code(&p.add("kept", &["src/api"]), 0);
    assert_code(&run(p.cmd("vg-index", ".").args(["--catalog", "kept"])), 0);
    std::fs::write(p.dir("catalogs/kept/.vecgrep/config.toml"), "top_k = 7\n").unwrap();
    // Its settings go with it: kept, they made a directory no `add` would
    // take again (review 187).
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove", "kept"])), 0);
    assert!(!p.dir("catalogs/kept").exists());
    assert_code(&p.add("kept", &["src/api"]), 0);
}

/// Audit 186: a catalog of no projects was searched with advice about
/// ignore rules, and listed with nothing after its name.
#[test]
fn a_catalog_of_no_projects_says_so() {
    let p = Projects::new();
    assert_code(&p.add("empty", &["src/api"]), 0);
    assert_code(&run(p.cmd("vg-catalog", ".").args(["remove-project", "empty", "api"])), 0);
    let o = run(p.cmd("vecgrep", ".").args(["--catalog", "empty", "retry upload"]));
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("catalog 'empty' has no projects (vg-catalog add empty PATH... adds one)"),
        "{}",
        stderr(&o)
    );
    let o = run(p.cmd("vg-catalog", ".").arg("list"));
    assert_eq!(stdout(&o), "empty: (no projects)\n");
}

/// Audit 186: a catalog the user may not read was "no catalog named", and
/// `list` left it out and said all was well.
#[test]
fn a_catalog_closed_to_the_user_is_said_so() {
    let p = Projects::new();
    assert_code(&p.add("open", &["src/api"]), 0);
    assert_code(&p.add("shut", &["src/billing"]), 0);
    let other = OtherUser::new(&p.t);
    // The user's own catalog, closed to them (another user's, in a shared
    // catalogs' directory, may be anything, and is passed over).
    if running_as_root() {
        let own = Command::new("chown").args(["-R", "65534:65534"]).arg(p.dir("catalogs/shut")).status().unwrap();
        assert!(own.success());
    }
    let mode =
        |m: &str| assert!(Command::new("chmod").args([m]).arg(p.dir("catalogs/shut")).status().unwrap().success());
    mode("000");
    let as_other = |args: &[&str]| {
        let mut cmd = other.cmd(&p.t, "vg-catalog");
        run(cmd.args(args).env("VECGREP_CATALOG_DIR", p.dir("catalogs")))
    };
    let o = as_other(&["show", "shut"]);
    mode("755");
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("cannot read the catalog at") && stderr(&o).contains("ermission denied"),
        "{}",
        stderr(&o)
    );
    mode("000");
    let o = as_other(&["list"]);
    mode("755");
    assert_code(&o, 2);
    assert_eq!(stdout(&o), "open: api\n");
    assert!(stderr(&o).contains("skipping a catalog: cannot read the catalog at"), "{}", stderr(&o));
}

/// A catalog search reads its projects' concepts (`.vecgrep/kg/`), what
/// `--learn` writes there too: it read the catalog's own and the global
/// ones alone, and a word a project taught found nothing (audit 256).
#[test]
fn a_catalog_search_reads_its_projects_concepts() {
    let p = Projects::new();
    p.t.write("src/billing/.vecgrep/kg/ledger.md", "# Ledger\n\nsynonyms:: send_invoice, journal\n");
    // Another project's concept of the same title adds its words, hiding none (review 257).
    p.t.write("src/api/.vecgrep/kg/ledger.md", "# Ledger\n\nsynonyms:: check_token\n");
    assert_code(&p.add("team", &["src/api", "src/billing"]), 0);
    let o = run(p.cmd("vg-query", ".").args(["--catalog", "team", "--mode", "lexical", "-k", "2", "journal"]));
    assert_code(&o, 0);
    let mut found: Vec<(String, String)> = records(&o)
        .iter()
        .filter(|h| h["concepts"] == serde_json::json!(["Ledger"]))
        .map(|h| (h["project"].as_str().unwrap_or("").into(), h["file"].as_str().unwrap_or("").into()))
        .collect();
    found.sort();
    assert_eq!(found, [("api".into(), "auth.py".into()), ("billing".into(), "invoice.py".into())], "{}", stdout(&o));
}

/// In a shared catalogs' directory (sticky and open to all, as `/tmp`),
/// another user's catalog is refused, as another user's marker is passed
/// over: its definition would choose which of your directories are
/// indexed, and keep the index where they read it (audit 280). Their lock
/// file refuses no change of yours: it is locked read-only.
#[test]
fn another_users_catalog_in_a_shared_directory_is_refused_and_their_lock_stops_no_change() {
    if !running_as_root() {
        eprintln!("skipped: only root can act as another user");
        return;
    }
    let p = Projects::new();
    let shared = p.dir("catalogs");
    std::fs::create_dir(&shared).unwrap();
    let other = OtherUser::new(&p.t);
    assert!(Command::new("chmod").arg("1777").arg(&shared).status().unwrap().success());
    let o = run(other
        .cmd(&p.t, "vg-catalog")
        .args(["add", "team"])
        .arg(p.dir("src/web"))
        .env("VECGREP_CATALOG_DIR", &shared));
    assert_code(&o, 0);
    // What they could edit it to: your own project.
    let definition = shared.join("team/.vecgrep-catalog.toml");
    let text = std::fs::read_to_string(&definition)
        .unwrap()
        .replace(&*p.dir("src/web").to_string_lossy(), &p.dir("src/billing").to_string_lossy());
    std::fs::write(&definition, text).unwrap();
    let o = run(p.cmd("vecgrep", "elsewhere").args(["--catalog", "team", "--threshold", "-1", "invoice"]));
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("catalog 'team'") && stderr(&o).contains("belongs to another user (uid 65534)"),
        "{}",
        stderr(&o)
    );
    assert!(!shared.join("team/.vecgrep").exists(), "nothing was indexed there");
    // Chosen from within it, by its marker, as by its name (review 281).
    let o = run(p
        .t
        .cmd("vecgrep", "catalogs/team")
        .args(["--threshold", "-1", "invoice"])
        .env("VECGREP_CATALOG_DIR", &shared));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("belongs to another user (uid 65534)"), "{}", stderr(&o));
    assert!(!shared.join("team/.vecgrep").exists(), "nothing was indexed there");
    // Nor is it yours to change or remove.
    for change in [&["add", "team", "src/api"][..], &["remove", "team"]] {
        let args: Vec<String> = change
            .iter()
            .map(|a| if a.starts_with("src/") { p.dir(a).display().to_string() } else { a.to_string() })
            .collect();
        let o = run(p.cmd("vg-catalog", ".").args(&args));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("belongs to another user"), "{change:?}: {}", stderr(&o));
    }
    assert!(definition.is_file(), "their definition is where it was");
    assert_code(&p.add("mine", &["src/api"]), 0);
    // A lock that is no regular file (a FIFO, which an open waits on) is refused at once.
    let lock = shared.join(".catalogs.lock");
    std::fs::remove_file(&lock).unwrap();
    assert!(Command::new("mkfifo").arg(&lock).status().unwrap().success());
    assert!(Command::new("chown").arg("65534").arg(&lock).status().unwrap().success());
    let mut add = p.cmd("vg-catalog", ".");
    add.args(["add", "mine"]).arg(p.dir("src/billing"));
    let o = run_or_fail_after(&mut add, std::time::Duration::from_secs(30));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("it is no regular file; its owner (uid 65534) may remove it"), "{}", stderr(&o));
    // A lock that was there is never changed: a file of yours another
    // user hard-linked there kept its mode 0600 (review 283).
    use std::os::unix::fs::PermissionsExt;
    std::fs::remove_file(&lock).unwrap();
    let own = p.dir("src/api/notes.txt");
    std::fs::write(&own, "not for the team\n").unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::hard_link(&own, &lock).unwrap();
    assert_code(&p.add("mine", &["src/billing"]), 0);
    assert_eq!(std::fs::metadata(&own).unwrap().permissions().mode() & 0o777, 0o600);
}

/// A definition edited by hand to name git's own directory, or the
/// catalogs', as `add` refuses: a bare repository's config may hold a
/// remote's credentials (audit 280: they were indexed and shown).
#[test]
fn a_definition_naming_a_git_directory_or_the_catalogs_is_refused() {
    let p = Projects::new();
    assert_code(&p.add("team", &["src/api"]), 0);
    let definition = p.dir("catalogs/team/.vecgrep-catalog.toml");
    let text = std::fs::read_to_string(&definition).unwrap();
    for git_dir in ["src/billing/.git", "src/web/.git"] {
        std::fs::write(
            &definition,
            text.replace(&*p.dir("src/api").to_string_lossy(), &p.dir(git_dir).to_string_lossy()),
        )
        .unwrap();
        let o = run(p.cmd("vecgrep", "elsewhere").args(["--catalog", "team", "remote origin url"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("a path in the git directory"), "{git_dir}: {}", stderr(&o));
    }
    // Nor the catalogs' directory, or one holding it (audit 280: it was
    // linked into itself and its lock file indexed).
    for dir in ["catalogs", "."] {
        std::fs::write(&definition, text.replace(&*p.dir("src/api").to_string_lossy(), &p.dir(dir).to_string_lossy()))
            .unwrap();
        let o = run(p.cmd("vecgrep", "elsewhere").args(["--catalog", "team", "invoice"]));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("holds or is inside the catalogs' directory"), "{dir}: {}", stderr(&o));
    }
}
