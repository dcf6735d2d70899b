//! The test harness: temporary trees and the binaries run in a clean
//! environment (no user config, no color, no overrides).

#![allow(dead_code)]

pub(crate) mod pg_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub(crate) struct Tree {
    pub dir: tempfile::TempDir,
    /// Stands in for ~/.config, so the user's own config never leaks in.
    pub config_home: tempfile::TempDir,
}

impl Tree {
    /// An empty tree marked as a git project.
    pub(crate) fn git() -> Tree {
        let t = Tree::bare();
        std::fs::create_dir(t.path().join(".git")).unwrap();
        t
    }

    /// An empty tree with no marker.
    pub(crate) fn bare() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let config_home = tempfile::tempdir().unwrap();
        Tree { dir, config_home }
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> &Tree {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    pub(crate) fn write_bytes(&self, rel: &str, bytes: &[u8]) -> &Tree {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
        self
    }

    /// A tool run in `cwd` (relative to the tree root).
    pub(crate) fn cmd(&self, tool: &str, cwd: &str) -> Command {
        let mut c = tool_cmd(tool);
        c.current_dir(self.path().join(cwd));
        c.env("XDG_CONFIG_HOME", self.config_home.path());
        c
    }

    pub(crate) fn global_config(&self, text: &str) {
        let p = self.config_home.path().join("vecgrep/config.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub(crate) fn project_config(&self, text: &str) {
        self.write(".vecgrep/config.toml", text);
    }
}

pub(crate) fn bin(tool: &str) -> PathBuf {
    match tool {
        "vecgrep" => PathBuf::from(env!("CARGO_BIN_EXE_vecgrep")),
        "vg-root" => PathBuf::from(env!("CARGO_BIN_EXE_vg-root")),
        "vg-index" => PathBuf::from(env!("CARGO_BIN_EXE_vg-index")),
        "vg-query" => PathBuf::from(env!("CARGO_BIN_EXE_vg-query")),
        "vg-format" => PathBuf::from(env!("CARGO_BIN_EXE_vg-format")),
        "vg-serve" => PathBuf::from(env!("CARGO_BIN_EXE_vg-serve")),
        "vg-mcp" => PathBuf::from(env!("CARGO_BIN_EXE_vg-mcp")),
        "vg-pick" => PathBuf::from(env!("CARGO_BIN_EXE_vg-pick")),
        "vg-answer" => PathBuf::from(env!("CARGO_BIN_EXE_vg-answer")),
        "vg-ask" => PathBuf::from(env!("CARGO_BIN_EXE_vg-ask")),
        "vg-log" => PathBuf::from(env!("CARGO_BIN_EXE_vg-log")),
        "vg-catalog" => PathBuf::from(env!("CARGO_BIN_EXE_vg-catalog")),
        other => panic!("no tool {other}"),
    }
}

pub(crate) fn tool_cmd(tool: &str) -> Command {
    let mut c = Command::new(bin(tool));
    for var in [
        "VECGREP_MODEL_DIR",
        "VECGREP_STATIC_TABLE",
        "ORT_DYLIB_PATH",
        "NO_COLOR",
        "XDG_CONFIG_HOME",
        "VECGREP_CATALOG_DIR",
        "VECGREP_LLM_API_KEY",
    ] {
        c.env_remove(var);
    }
    c.stdin(Stdio::null());
    c
}

/// The project's index lock, held as another index run holds it, until
/// the file is dropped: what waits for the lock waits for it.
pub(crate) fn hold_index_lock(t: &Tree) -> std::fs::File {
    let lock = std::fs::File::create(t.path().join(".vecgrep/index.lock")).unwrap();
    lock.lock().unwrap();
    lock
}

/// Run and capture; stdin is empty.
pub(crate) fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

/// Run and capture, as `run`; a run still going after `limit` (one that
/// should have refused to start, a server) is killed with what it started,
/// and the test fails rather than waits for ever.
pub(crate) fn run_or_fail_after(c: &mut Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut child = c.process_group(0).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let read = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let (out, err) = (read(Box::new(child.stdout.take().unwrap())), read(Box::new(child.stderr.take().unwrap())));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            panic!("{:?} still ran after {limit:?}", c.get_program());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Whether util-linux `script`, which gives a command a pseudo-terminal,
/// is on this machine: the tests of what asks on a terminal need it.
pub(crate) fn script_is_here() -> bool {
    Command::new("script").arg("--version").output().is_ok()
}

/// `command`, a shell command line, run in `t` on a pseudo-terminal,
/// answering `answer`; its stdout holds what the terminal showed. None
/// where `script` is not here.
pub(crate) fn on_a_terminal(t: &Tree, command: &str, answer: &str) -> Option<Output> {
    if !script_is_here() {
        return None;
    }
    let mut c = Command::new("script");
    c.args(["-qec", command, "/dev/null"]).current_dir(t.path()).env("XDG_CONFIG_HOME", t.config_home.path());
    Some(run_with_input(&mut c, answer.as_bytes()))
}

/// Run with `input` on stdin.
pub(crate) fn run_with_input(c: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Assert the exit code, showing both streams on failure.
#[track_caller]
pub(crate) fn assert_code(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "exit status\n--- stdout:\n{}\n--- stderr:\n{}", stdout(o), stderr(o));
}

/// Parse every stdout line as JSON.
pub(crate) fn records(o: &Output) -> Vec<Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}"))).collect()
}

pub(crate) fn of_type<'a>(recs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["type"] == kind).collect()
}

/// The `summary` record of a vg-index run.
pub(crate) fn summary(o: &Output) -> Value {
    let recs = records(o);
    let s = of_type(&recs, "summary");
    assert_eq!(s.len(), 1, "one summary record expected:\n{}", stdout(o));
    s[0].clone()
}

/// A small project about unrelated things, so that a query has one right answer.
pub(crate) fn sample_project() -> Tree {
    let t = Tree::git();
    t.write(
        "src/upload.py",
        "import time\n\n\ndef upload_with_retry(client, blob, attempts=5):\n    for attempt in range(attempts):\n        try:\n            return client.put(blob)\n        except ConnectionError:\n            time.sleep(2 ** attempt)\n    raise RuntimeError('upload failed after retries')\n",
    );
    t.write(
        "src/config.py",
        "import tomllib\n\n\ndef load_settings(path):\n    with open(path, 'rb') as f:\n        data = tomllib.load(f)\n    return data.get('settings', {})\n",
    );
    t.write(
        "src/geometry.rs",
        "pub fn circle_area(radius: f64) -> f64 {\n    std::f64::consts::PI * radius * radius\n}\n",
    );
    t.write(
        "docs/guide.md",
        "# Guide\n\nThis guide explains how to bake sourdough bread with a starter and a hot oven.\n",
    );
    t
}

/// The sample project with `files` handlers beside it, big enough that
/// indexing takes a few seconds.
pub(crate) fn handlers_project(files: usize) -> Tree {
    let t = sample_project();
    write_handlers(&t, 0..files);
    t
}

/// The handler files `numbers` of `handlers_project`, `pkg/modNNN.py`.
pub(crate) fn write_handlers(t: &Tree, numbers: std::ops::Range<usize>) {
    for i in numbers {
        let body: String =
            (0..12).map(|j| format!("    total_{j} = request.part({i}, {j})  # step {j} of handler {i}\n")).collect();
        t.write(&format!("pkg/mod{i:03}.py"), &format!("def handler_{i}(request):\n{body}    return total_0\n"));
    }
}

/// A project whose code says `AccountBook` and `saml` where its people say
/// "ledger" and "SSO".
pub(crate) fn ledger_project() -> Tree {
    let t = Tree::git();
    t.write(
        "src/books.py",
        "class AccountBook:\n    \"\"\"Entries of money in and out.\"\"\"\n\n    def post_entry(self, entry):\n        self.entries.append(entry)\n\n    def total(self):\n        return sum(e.amount for e in self.entries)\n",
    );
    t.write(
        "src/web.py",
        "def saml_login(request):\n    assertion = request.form['SAMLResponse']\n    return verify(assertion)\n",
    );
    t.write("src/shapes.py", "def area_of_circle(radius):\n    return 3.14159 * radius * radius\n");
    t
}

/// Catalog `name` of `projects` (directories of `t`), kept in `t`'s
/// `catalogs/`: that directory, for `VECGREP_CATALOG_DIR`.
pub(crate) fn add_catalog(t: &Tree, name: &str, projects: &[&str]) -> PathBuf {
    let catalogs = t.path().join("catalogs");
    let o = run(t.cmd("vg-catalog", ".").env("VECGREP_CATALOG_DIR", &catalogs).args(["add", name]).args(projects));
    assert_code(&o, 0);
    catalogs
}

/// `n` small Python files of one handler each, `src/modNNN.py`: a tree whose
/// index run takes a while.
pub(crate) fn many_files(t: &Tree, n: usize) {
    for i in 0..n {
        t.write(
            &format!("src/mod{i:03}.py"),
            &format!("def handler_{i}(request):\n    \"\"\"Handle request number {i} and log it.\"\"\"\n    return request.reply({i})\n"),
        );
    }
}

/// Catalog `team` of two projects, `src/api` (a retried upload) and
/// `src/billing` (an emailed invoice): the tree and its catalogs directory.
pub(crate) fn api_and_billing_catalog() -> (Tree, PathBuf) {
    let t = Tree::bare();
    t.write("src/api/upload.py", "def retry_upload(path):\n    \"\"\"Retry a failed upload a few times.\"\"\"\n")
        .write(
            "src/billing/invoice.py",
            "def send_invoice(tenant):\n    \"\"\"Email the monthly invoice to a tenant.\"\"\"\n",
        );
    let catalogs = add_catalog(&t, "team", &["src/api", "src/billing"]);
    (t, catalogs)
}

/// Run git in `tree` (a real repository); its trimmed output.
pub(crate) fn git(tree: &Tree, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args(args)
        .current_dir(tree.path())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// An empty git repository on branch `main`.
pub(crate) fn git_repo() -> Tree {
    let tree = Tree::bare();
    git(&tree, &["init", "-q", "-b", "main"]);
    tree
}

/// Stage everything in `tree` and commit it as `message`.
pub(crate) fn commit_all(tree: &Tree, message: &str) {
    git(tree, &["add", "-A"]);
    git(tree, &["commit", "-q", "-m", message]);
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Start `cmd` (an index run, stdout piped) and SIGKILL it once it has
/// written `files` `file` records: a phase of the run told by the run
/// itself, so a fast and a slow machine interrupt the same thing. A run
/// that ends first is reaped as it is. Returns the records seen.
pub(crate) fn kill_after_file_records(cmd: &mut Command, files: usize) -> usize {
    use std::io::{BufRead, BufReader};
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < files {
        match lines.next() {
            Some(Ok(line)) if line.contains("\"type\":\"file\"") => seen += 1,
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    let _ = child.kill(); // SIGKILL; an error only if it has already been reaped
    child.wait().unwrap();
    seen
}

/// `cmd` run with its files limited to `kib` KiB: a write past the limit
/// fails as one on a full disk does (EFBIG in place of ENOSPC, without a
/// disk to fill), since every tool ignores SIGXFSZ, which would otherwise
/// end it without a word.
pub(crate) fn with_file_size_limit(cmd: &Command, kib: u64) -> Command {
    let mut limited = Command::new("bash");
    limited.arg("-c").arg(format!("ulimit -f {kib}; exec \"$0\" \"$@\""));
    limited.arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        limited.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => limited.env(key, value),
            None => limited.env_remove(key),
        };
    }
    limited
}

/// Who this test runs as: root reads every file whatever its mode.
pub(crate) fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().unwrap().stdout.trim_ascii() == b"0"
}

/// A user other than root, for what only permissions can show (a file
/// that cannot be read, an index that cannot be written): `tool` as
/// `nobody` when the tests run as root, as this user otherwise. The tree
/// and `home` are opened to everyone; `home` stands in for $HOME and the
/// config directory, with a copy of the installed model (root's is out of
/// reach of other users).
pub(crate) struct OtherUser {
    pub home: tempfile::TempDir,
    model_dir: Option<PathBuf>,
}

impl OtherUser {
    pub(crate) fn new(tree: &Tree) -> OtherUser {
        let home = tempfile::tempdir().unwrap();
        // Before the model is linked in: a link shares its file's mode.
        for dir in [tree.path(), home.path().to_path_buf()] {
            let opened = Command::new("chmod").args(["-R", "a+rwX"]).arg(dir).status().unwrap();
            assert!(opened.success());
        }
        let model_dir = running_as_root().then(|| shared_model_copy(home.path()));
        OtherUser { home, model_dir }
    }

    pub(crate) fn cmd(&self, tree: &Tree, tool: &str) -> Command {
        let mut cmd = match &self.model_dir {
            Some(models) => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(bin(tool));
                c.env("VECGREP_MODEL_DIR", models);
                c.env("ORT_DYLIB_PATH", models.join(ORT_LIBRARY));
                c
            }
            None => tool_cmd(tool),
        };
        cmd.current_dir(tree.path()).env("XDG_CONFIG_HOME", self.home.path()).env("HOME", self.home.path());
        cmd.stdin(Stdio::null());
        cmd
    }
}

/// The ONNX Runtime library the installed assets hold (`scripts/assets.lock`).
const ORT_LIBRARY: &str = "libonnxruntime.so.1.31.1";

/// The installed model's files linked (or copied, across file systems)
/// into `home`, where any user can read them.
fn shared_model_copy(home: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let name = "all-MiniLM-L6-v2";
    let installed = [
        bin("vg-index").parent().unwrap().join("../share/vecgrep/models").join(name),
        PathBuf::from(std::env::var_os("HOME").unwrap()).join(".local/share/vecgrep/models").join(name),
    ]
    .into_iter()
    .find(|d| d.join("model.onnx").is_file())
    .expect("the model is installed (scripts/fetch-assets.sh)");
    let copy = home.join("model");
    std::fs::create_dir(&copy).unwrap();
    // ONNX Runtime beside it, for the tools that run the model.
    let runtime = installed.join("../../onnxruntime").join(ORT_LIBRARY);
    for from in std::fs::read_dir(&installed).unwrap().map(|e| e.unwrap().path()).chain([runtime]) {
        let to = copy.join(from.file_name().unwrap());
        let readable = from.metadata().unwrap().permissions().mode() & 0o004 != 0;
        if !readable || std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    copy
}
