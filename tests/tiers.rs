//! The static tier, the default: an index run gives chunks static vectors
//! only (vecgrep's code table, `models/static-code.bin`), and a search
//! answers from them, the words and the names without running the model;
//! a full run (`--full`, config `embed_all`) gives every chunk the model's
//! vector too, and a search then ranks meaning by the model.

use std::process::{Command, Stdio};

use crate::common::*;

fn stats(t: &Tree) -> serde_json::Value {
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_code(&o, 0);
    records(&o)[0].clone()
}

/// A project where one file answers the question and the others are about
/// something else.
fn uploads_project() -> Tree {
    let t = Tree::git();
    t.write(
        "src/upload.py",
        "def send_with_backoff(client, blob, attempts=5):\n    \"\"\"Send a blob to storage; on a broken transfer wait and try again.\"\"\"\n    for attempt in range(attempts):\n        try:\n            return client.put(blob)\n        except TransferError:\n            time.sleep(2 ** attempt)\n    raise GaveUp(blob)\n",
    );
    for i in 0..150 {
        t.write(
            &format!("src/shapes/shape{i}.py"),
            &format!("class Shape{i}:\n    def area(self):\n        return self.width * self.height * {i}\n\n    def colour(self):\n        return 'colour number {i}'\n"),
        );
    }
    t
}

/// The model's files copied to a directory of their own, for a test to change.
fn own_model_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let installed = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL).unwrap().model_dir;
    for entry in std::fs::read_dir(&installed).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    dir
}

#[test]
fn a_static_index_answers_by_meaning_without_the_model() {
    let t = uploads_project();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    let s = summary(&o);
    let chunks = s["chunks"].as_u64().unwrap();
    assert!(chunks > 150, "{s}");
    assert_eq!((s["embedded"].as_u64(), s["tokens"].as_u64(), s["pending"].as_u64()), (Some(0), Some(0), Some(chunks)));
    // The question shares no word with the answer but "uploads"/"upload":
    // the static table's meaning finds it. ONNX Runtime pointed nowhere
    // shows that the model is not loaded for it.
    let ask = |mode: &str| {
        let mut c = t.cmd("vg-query", ".");
        c.env("ORT_DYLIB_PATH", t.path().join("no-runtime.so"));
        run(c.args(["--no-index", "--mode", mode, "-k", "3", "where do we retry a failed send"]))
    };
    for mode in ["hybrid", "semantic"] {
        let o = ask(mode);
        assert_code(&o, 0);
        assert_eq!(records(&o)[0]["file"], "src/upload.py", "{mode}: {}", stdout(&o));
    }
    assert_eq!(stats(&t)["pending"].as_u64(), Some(chunks), "a search stores nothing");
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    // A full run embeds every chunk; the model then ranks meaning.
    let o = run(t.cmd("vg-index", ".").arg("--full"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["embedded"].as_u64(), Some(chunks));
    assert_eq!((stats(&t)["pending"].as_u64(), stats(&t)["holes"].as_u64()), (Some(0), Some(0)));
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "-k", "3", "where do we retry a failed send"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
    let o = ask("hybrid");
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no-runtime.so"), "now the model is needed: {}", stderr(&o));
    // And a run after that changes nothing.
    let s = summary(&run(&mut t.cmd("vg-index", ".")));
    assert_eq!((s["pending"].as_u64(), s["reused"].as_u64()), (Some(0), Some(chunks)));
}

#[test]
fn lexical_search_on_a_static_index_needs_no_model_vectors() {
    let t = uploads_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "lexical", "send_with_backoff"]));
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
}

#[test]
fn a_static_table_of_another_hash_or_shape_is_refused_with_its_cause() {
    let t = sample_project();
    let model = own_model_dir();
    let table = model.path().join(vecgrep::embed::TABLE_FILE);
    let mut bytes = std::fs::read(&table).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    let o = run(t.cmd("vg-index", ".").env("VECGREP_MODEL_DIR", model.path()));
    assert_code(&o, 2);
    let err = stderr(&o);
    // VECGREP_MODEL_DIR names where it is: fetching vecgrep's own would
    // change nothing while it does (audit 183).
    assert!(err.contains("is not the one this vecgrep ships") && err.contains("VECGREP_MODEL_DIR names its"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let short = t.path().join("short.bin");
    std::fs::write(&short, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &short));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("cut short"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, t.path().join("none.bin")));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, t.path()));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("is not a file"), "{}", stderr(&o));
    // Neither read without end nor waited on: what names the table an index
    // holds reads no more than a table's size, and no FIFO.
    let fifo = t.path().join("table.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for odd in [std::path::PathBuf::from("/dev/zero"), fifo] {
        let mut bounded = Command::new("bash");
        bounded.args(["-c", "ulimit -v 3000000; exec timeout 60 \"$0\" \"$@\""]).arg(bin("vg-query"));
        bounded.args(["--threshold", "-1", "retry"]).current_dir(t.path());
        for (k, v) in t.cmd("vg-query", ".").get_envs() {
            match v {
                Some(v) => bounded.env(k, v),
                None => bounded.env_remove(k),
            };
        }
        let o = run(bounded.env(vecgrep::embed::TABLE_OVERRIDE_VAR, &odd));
        assert_code(&o, 2);
        assert!(stderr(&o).contains("is not a file"), "{}: {}", odd.display(), stderr(&o));
    }
}

/// The shipped table with every row nudged, under `dir`: another table,
/// as an update of vecgrep would ship.
pub(crate) fn another_table(dir: &std::path::Path) -> std::path::PathBuf {
    let other = dir.join("other.bin");
    let installed = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL).unwrap().model_dir;
    let mut bytes = std::fs::read(installed.join(vecgrep::embed::TABLE_FILE)).unwrap();
    let header_u32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let rows_from = bytes.len() - header_u32(8) * header_u32(12);
    bytes[rows_from..].iter_mut().step_by(3).for_each(|b| *b = b.wrapping_add(1));
    std::fs::write(&other, &bytes).unwrap();
    other
}

/// Each chunk's static vector in the index under `t`, by file and line.
fn static_vectors(t: &Tree) -> Vec<(String, i64, Vec<u8>)> {
    let db = rusqlite::Connection::open(t.path().join(".vecgrep/index.db")).unwrap();
    let mut q = db
        .prepare("SELECT f.path, c.start_line, c.static_embedding FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY 1, 2")
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn another_table_recomputes_the_static_vectors_and_keeps_the_models() {
    let t = sample_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let dir = tempfile::tempdir().unwrap();
    let other = another_table(dir.path());
    // A search of a static index that may not index refuses to rank by
    // vectors of another table rather than compare them with its query's.
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]).env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_code(&o, 2);
    assert!(stderr(&o).contains("another static table") && stderr(&o).contains("vg-index"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(vecgrep::embed::TABLE_OVERRIDE_VAR),
        "names where the table comes from: {}",
        stderr(&o)
    );
    // A table that is not there is the one error, with no note of a recomputing that never begins.
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, t.path().join("no-such-table")));
    assert_code(&o, 2);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-table does not exist"), "{}", stderr(&o));
    // --stats says which table the vectors come from, and that it is not the one in use.
    let shipped = stats(&t)["static_table"].as_str().unwrap().to_string();
    assert_eq!(stats(&t)["static_table_in_use"], true);
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]).env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_eq!(
        (records(&o)[0]["static_table"].as_str(), records(&o)[0]["static_table_in_use"].as_bool()),
        (Some(&*shipped), Some(false))
    );
    let o = run(t.cmd("vg-index", ".").arg("--stats").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    let line = format!("static:   table {shipped}, not the one in use");
    assert!(stdout(&o).contains(&line) && stdout(&o).contains("the next index run recomputes"), "{}", stdout(&o));
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let embedded = |s: serde_json::Value| (s["chunks"].as_u64().unwrap(), s["pending"].as_u64());
    let (chunks, pending) = embedded(stats(&t));
    assert!(chunks > 0 && pending == Some(0), "every chunk has the model's vector");
    let before = static_vectors(&t);
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_code(&o, 0);
    let why = format!("the static table is another ({} names {})", vecgrep::embed::TABLE_OVERRIDE_VAR, other.display());
    assert!(
        stderr(&o).contains(&format!("recomputing the chunks' static vectors, keeping the model's: {why}")),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(&format!("recomputed the static vectors of {chunks} chunks in")), "{}", stderr(&o));
    let s = summary(&o);
    assert_eq!((s["rebuilt"].as_bool(), s["embedded"].as_u64()), (Some(false), Some(0)), "{s}");
    let after = static_vectors(&t);
    // The vectors are the ones an index built with that table holds.
    let fresh = sample_project();
    assert_code(&run(fresh.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other)), 0);
    assert_eq!(after, static_vectors(&fresh));
    assert_ne!(after, before);
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]).env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_eq!(embedded(records(&o)[0].clone()), (chunks, Some(0)), "the model's vectors stay");
    assert!(records(&o)[0]["static_table"] != shipped.as_str() && records(&o)[0]["static_table_in_use"] == true);
    let o = run(t.cmd("vg-query", ".").args(["--no-index", "retry"]).env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_code(&o, 0);
    let o = run(t.cmd("vg-index", ".").arg("--verify"));
    assert_code(&o, 0);
    let o = run(&mut t.cmd("vg-index", "."));
    assert_eq!(summary(&o)["rebuilt"], false, "and back again with the shipped one");
    // Said as it may be, not as an update of vecgrep that never came.
    assert!(stderr(&o).contains("vecgrep's own is in use now: an update shipped it, or VECGREP_STATIC_TABLE was unset"));
    assert_eq!(static_vectors(&t), before);
    assert_eq!(embedded(stats(&t)), (chunks, Some(0)));
}

/// A project of 6,400 chunks: recomputing its static vectors takes several
/// pages (`IndexWriter::restatic`) and seconds of a debug build, more than a
/// signal takes to land or a poll to look.
fn pages_of_chunks_project() -> Tree {
    let t = Tree::git();
    for i in 0..800 {
        let body: String = (0..4)
            .map(|j| {
                let lines: String = (0..14).map(|k| format!("    total += sample.reading_{k} * {j} - {i}\n")).collect();
                format!("def measure_{i}_{j}(sample):\n    total = 0\n{lines}    return total\n\n\n")
            })
            .collect();
        t.write(&format!("src/m{i:03}.py"), &body);
    }
    t
}

/// A server started on an index of another table says, in `/status`, how
/// far it is in recomputing the static vectors, then that it is done.
#[test]
fn a_server_says_how_far_it_is_in_recomputing_the_static_vectors() {
    use std::time::{Duration, Instant};
    let t = pages_of_chunks_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let chunks = stats(&t)["chunks"].as_u64().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let other = another_table(dir.path());
    let s = crate::serve::Server::start_with(&t, &[], &[(vecgrep::embed::TABLE_OVERRIDE_VAR, other.to_str().unwrap())]);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut heard = Vec::new();
    let done = loop {
        let status = s.json("/status");
        match status["recomputing_static"].as_object() {
            Some(r) => heard.push((r["done"].as_u64().unwrap(), r["of"].as_u64().unwrap())),
            None if !heard.is_empty() => break status,
            None => {}
        }
        assert!(Instant::now() < deadline, "never said it was recomputing: {status}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(heard.iter().all(|&(d, of)| d > 0 && d < of && of == chunks), "{heard:?}");
    assert!(heard.windows(2).all(|w| w[0].0 <= w[1].0), "{heard:?}");
    assert!(done["recomputing_static"].is_null(), "{done}");
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]).env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_eq!(records(&o)[0]["static_table_in_use"], true, "the new table's vectors are in");
}

/// Ctrl-C while another table's static vectors are computed stops within a
/// page of chunks and rolls the change back: the exit status is a shell's
/// for SIGINT, the index keeps the previous table whole and says so, and
/// the next run applies the new table.
#[test]
fn ctrl_c_while_another_table_is_applied_keeps_the_previous_one() {
    use std::io::{BufRead, BufReader, Read};
    let t = pages_of_chunks_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let before = static_vectors(&t);
    assert!(before.len() > 3000, "{}", before.len());
    let dir = tempfile::tempdir().unwrap();
    let other = another_table(dir.path());
    let mut cmd = t.cmd("vg-index", ".");
    cmd.env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other);
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while err.read_line(&mut said).unwrap() > 0 && !said.contains("recomputing the chunks' static vectors") {}
    assert!(said.contains("recomputing"), "{said}");
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    err.read_to_string(&mut said).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains(vecgrep::index::RESTATIC_STOPPED), "{said}");
    assert!(!said.contains("interrupted after"), "no files were due: {said}");
    assert!(static_vectors(&t) == before, "the previous table's vectors, every one");
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_code(&o, 0);
    assert!(stderr(&o).contains("recomputed the static vectors of"), "{}", stderr(&o));
    assert_eq!(summary(&o)["rebuilt"], false);
    let after = static_vectors(&t);
    assert!(after.len() == before.len() && after.iter().zip(&before).all(|(a, b)| a.0 == b.0 && a.2 != b.2));
}

#[test]
fn a_run_killed_while_it_applies_another_table_leaves_one_table_or_the_other() {
    use std::io::{BufRead, BufReader};
    let t = uploads_project();
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let before = static_vectors(&t);
    let dir = tempfile::tempdir().unwrap();
    let other = another_table(dir.path());
    let fresh = uploads_project();
    assert_code(&run(fresh.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other)), 0);
    let after = static_vectors(&fresh);
    // SIGKILL as soon as the run says it is recomputing: inside its one
    // transaction, or just before or after it.
    let mut cmd = t.cmd("vg-index", ".");
    cmd.env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other);
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let said = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("recomputing the chunks' static vectors"));
    assert!(said);
    let _ = child.kill();
    child.wait().unwrap();
    let left = static_vectors(&t);
    assert!(left == before || left == after, "every static vector is of one table");
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    let o = run(t.cmd("vg-index", ".").env(vecgrep::embed::TABLE_OVERRIDE_VAR, &other));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["rebuilt"], false);
    assert_eq!(static_vectors(&t), after, "the next run completes it");
}

#[test]
fn a_static_run_leaves_what_lacks_the_models_vector_and_a_full_run_embeds_it() {
    let t = Tree::git();
    t.write("src/a.py", "def alpha_total(values):\n    return sum(values)\n");
    t.write("src/b.py", "def parse_header(line):\n    return line.split(':', 1)\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let pending = stats(&t)["pending"].as_u64().unwrap();
    assert!(pending >= 2, "a static run embeds nothing with the model");
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    assert!(records(&o).iter().filter(|r| r["type"] == "file").all(|r| r["status"] == "unchanged"));
    assert_eq!((summary(&o)["embedded"].as_u64(), stats(&t)["pending"].as_u64()), (Some(0), Some(pending)));
    // A full run reads the files whose chunks lack the model's vector, to embed them.
    let o = run(t.cmd("vg-index", ".").arg("--full"));
    assert_code(&o, 0);
    assert_eq!(summary(&o)["embedded"].as_u64(), Some(pending));
    assert_eq!(stats(&t)["pending"], 0);
}

/// A model run that fails (here a tokenizer whose ids lie past the model's
/// vocabulary) is one line from the tool: ONNX Runtime's own log wrote a
/// second, coloured one to stderr.
#[test]
fn a_failed_model_run_is_said_in_one_line() {
    let t = sample_project();
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    let model = own_model_dir();
    let tokenizer = model.path().join("tokenizer.json");
    let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&tokenizer).unwrap()).unwrap();
    for id in json["model"]["vocab"].as_object_mut().unwrap().values_mut() {
        *id = (id.as_u64().unwrap() + 100_000).into();
    }
    std::fs::write(&tokenizer, serde_json::to_vec(&json).unwrap()).unwrap();
    let o = run(t.cmd("vg-query", ".").env("VECGREP_MODEL_DIR", model.path()).args([
        "--no-index",
        "--mode",
        "semantic",
        "retry an upload",
    ]));
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.starts_with("vg-query: cannot embed the query: ") && err.contains("out of data bounds"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Semantic mode orders hits by their score on an index the model has
/// filled in part: fused by ranks, a chunk with both vectors came before
/// every static-only one (a cosine of 0.47 before one of 0.97), and `-k 1`
/// left the best out.
#[test]
fn semantic_mode_on_an_index_filled_in_part_is_ordered_by_score() {
    let t = Tree::git();
    t.write("upload.py", "def upload(client, path):\n    for attempt in range(5):\n        try:\n            return client.put(path)\n        except ConnectionError:\n            time.sleep(2 ** attempt)\n");
    t.write(
        "config.py",
        "def load_config(path):\n    \"\"\"Read settings from a TOML file.\"\"\"\n    return toml.load(path)\n",
    );
    assert_code(&run(t.cmd("vg-index", ".").arg("--full")), 0);
    t.write("notes.txt", "retry uploads\n");
    assert_code(&run(&mut t.cmd("vg-index", ".")), 0);
    let o =
        run(t.cmd("vg-query", ".").args(["--no-index", "--mode", "semantic", "--threshold", "-1", "retry uploads"]));
    let hits = records(&o);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert_eq!(hits[0]["file"], "notes.txt", "{scores:?}");
}
