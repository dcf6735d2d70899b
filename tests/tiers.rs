//! The static tier, the default: an index run gives chunks static vectors
//! only, a search embeds its best candidates with the model and keeps them,
//! and a full run (`--full`, config `embed_all`) fills the rest.

use crate::common::*;

fn stats(t: &Tree) -> serde_json::Value {
    let o = run(t.cmd("vg-index", ".").args(["--stats", "--json"]));
    assert_code(&o, 0);
    records(&o)[0].clone()
}

/// A project where one file answers the question and the others are about
/// something else, with enough chunks that a search embeds only some.
fn uploads_project() -> Tree {
    let t = Tree::git();
    t.write(
        "src/upload.py",
        "def send_with_backoff(client, blob, attempts=5):\n    \"\"\"Send a blob to storage; on a failed transfer wait and try again.\"\"\"\n    for attempt in range(attempts):\n        try:\n            return client.put(blob)\n        except TransferError:\n            time.sleep(2 ** attempt)\n    raise GaveUp(blob)\n",
    );
    for i in 0..150 {
        t.write(
            &format!("src/shapes/shape{i}.py"),
            &format!("class Shape{i}:\n    def area(self):\n        return self.width * self.height * {i}\n\n    def colour(self):\n        return 'colour number {i}'\n"),
        );
    }
    t
}

#[test]
fn a_static_index_answers_by_meaning_and_keeps_what_searches_embed() {
    let t = uploads_project();
    let o = run(&mut t.cmd("vg-index", "."));
    assert_code(&o, 0);
    let s = summary(&o);
    let chunks = s["chunks"].as_u64().unwrap();
    assert!(chunks > 150, "{s}");
    assert_eq!((s["embedded"].as_u64(), s["tokens"].as_u64(), s["pending"].as_u64()), (Some(0), Some(0), Some(chunks)));
    let st = stats(&t);
    assert_eq!(
        (st["pending"].as_u64(), st["holes"].as_u64()),
        (Some(chunks), Some(0)),
        "no chunk has the model's vector yet"
    );
    // The question shares no word with the answer: only meaning finds it.
    let ask = || run(t.cmd("vg-query", ".").args(["--no-index", "-k", "3", "where do we retry failed uploads"]));
    let o = ask();
    assert_code(&o, 0);
    assert_eq!(records(&o)[0]["file"], "src/upload.py", "{}", stdout(&o));
    let after_first = stats(&t)["pending"].as_u64().unwrap();
    let embedded = chunks - after_first;
    assert!(embedded > 0 && embedded <= vecgrep::search::LAZY_CANDIDATES as u64, "{embedded} of {chunks}");
    // The same search again embeds nothing: what it needs is kept.
    let o = ask();
    assert_eq!(records(&o)[0]["file"], "src/upload.py");
    assert_eq!(stats(&t)["pending"].as_u64(), Some(after_first));
    assert_code(&run(t.cmd("vg-index", ".").arg("--verify")), 0);
    // A full run embeds the rest and keeps what searches embedded (here
    // each file is one chunk: those files are not even read).
    let o = run(t.cmd("vg-index", ".").arg("--full"));
    assert_code(&o, 0);
    let s = summary(&o);
    assert_eq!((s["embedded"].as_u64(), s["reused"].as_u64()), (Some(after_first), Some(embedded)), "{s}");
    assert_eq!((stats(&t)["holes"].as_u64(), stats(&t)["pending"].as_u64()), (Some(0), Some(0)));
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
    assert_eq!(stats(&t)["pending"].as_u64(), summary(&run(&mut t.cmd("vg-index", ".")))["reused"].as_u64());
}
