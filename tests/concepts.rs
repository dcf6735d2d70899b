//! A project's concepts (`.vecgrep/kg/`) and the judgement that ends a
//! search: through vg-query, vg-format and the porcelain.

use serde_json::Value;

use crate::common::*;

fn hits(o: &std::process::Output) -> Vec<Value> {
    records(o).into_iter().filter(|r| r["type"] == "hit").collect()
}

fn judgement(o: &std::process::Output) -> Value {
    let recs = records(o);
    let last = recs.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "judgement", "the judgement ends the stream: {recs:?}");
    last
}

#[test]
fn a_concept_finds_code_by_words_the_code_lacks_and_says_so() {
    let t = ledger_project();
    let ask = |t: &Tree| run(t.cmd("vg-query", ".").args(["--mode", "lexical", "--threshold", "0", "ledger"]));
    // Without the concept no word of the query is in the code.
    assert_code(&ask(&t), 1);
    t.write(".vecgrep/kg/ledger.md", "# Ledger\n\nThe book of accounts.\n\nsynonyms:: AccountBook, journal\n");
    let o = ask(&t);
    assert_code(&o, 0);
    let found = hits(&o);
    assert_eq!(found[0]["file"], "src/books.py", "{found:?}");
    assert_eq!(found[0]["concepts"], serde_json::json!(["Ledger"]));
    // In hybrid mode too, and the judgement counts the concept as the query's word.
    let o = run(t.cmd("vg-query", ".").args(["--judge", "--threshold", "0", "where is the ledger kept"]));
    assert_eq!(hits(&o)[0]["file"], "src/books.py");
    let j = judgement(&o);
    assert_eq!(j["concepts"], serde_json::json!(["Ledger"]));
    assert!(j["covered"].as_array().unwrap().contains(&"ledger".into()), "{j}");
    // Named by a synonym, the concept covers that word as well.
    let o = run(t.cmd("vg-query", ".").args(["--judge", "--threshold", "0", "where is the journal kept"]));
    assert_eq!(hits(&o)[0]["concepts"], serde_json::json!(["Ledger"]));
    let j = judgement(&o);
    assert!(j["covered"].as_array().unwrap().contains(&"journal".into()), "{j}");
    assert!(!j["missing"].as_array().unwrap().contains(&"journal".into()), "{j}");
    // People see which concept fired.
    let shown = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never", "--threshold", "0", "ledger"]));
    assert!(stdout(&shown).contains("concept: Ledger"), "{}", stdout(&shown));
}

/// A concept ties code to a question by words the model may never have
/// seen together: the threshold no one chose passes the definition of a
/// name it lists, as it passes a symbol's definition (audit 256:
/// `AccountBook`, taught as the ledger, scored 0.24 for "ledger" and the
/// search found nothing). One chosen still cuts it; a chunk that only says
/// a synonym, a common word, passes on its cosine alone (review 262: every
/// file that said "user" passed for auth).
#[test]
fn the_definition_of_a_name_a_concept_lists_passes_the_default_threshold() {
    let t = ledger_project();
    t.write(
        "src/books.py",
        "class AccountBook:\n    \"\"\"Entries of money in and out, balanced at the end of each period.\"\"\"\n    \
         def add(self, amount):\n        self.entries.append(amount)\n    \
         def render_html(self, template, colour=\"blue\"):\n        \
         return template.format(rows=len(self.entries), colour=colour)\n",
    );
    t.write(
        ".vecgrep/kg/ledger.md",
        "# Ledger\n\nThe book of accounts.\n\nsynonyms:: AccountBook, journal, account book\n",
    );
    let o = run(t.cmd("vg-query", ".").arg("ledger"));
    assert_code(&o, 0);
    let found = hits(&o);
    assert_eq!(found[0]["file"], "src/books.py", "{found:?}");
    assert!(found[0]["score"].as_f64().unwrap() < 0.3, "a cosine the threshold would cut: {found:?}");
    assert!(found.iter().all(|h| h["concepts"] == serde_json::json!(["Ledger"])), "{found:?}");
    let chosen = run(t.cmd("vg-query", ".").args(["--threshold", "0.3", "ledger"]));
    assert_code(&chosen, 1);
    t.write(
        "src/paths.py",
        "def join_all(parts):\n    # the user may pass a journal of strings\n    return \"/\".join(parts)\n",
    );
    let o = run(t.cmd("vg-query", ".").arg("ledger"));
    let files: Vec<String> = hits(&o).iter().map(|h| h["file"].as_str().unwrap().to_string()).collect();
    assert_eq!(files, ["src/books.py"], "a mention of `journal` alone: {}", stdout(&o));
    // A name matches a synonym as a concept does, ignoring case (review 265).
    t.write(".vecgrep/kg/ledger.md", "# Ledger\n\nsynonyms:: accountbook\n");
    let o = run(t.cmd("vg-query", ".").arg("ledger"));
    assert_eq!(hits(&o).first().map(|h| h["file"].clone()), Some("src/books.py".into()), "{}", stdout(&o));
}

#[test]
fn a_malformed_concept_is_one_line_naming_it_and_the_rest_still_work() {
    let t = ledger_project();
    t.write(".vecgrep/kg/sso.md", "# SSO\nsynonyms: saml\n");
    t.write(".vecgrep/kg/ledger.md", "synonyms:: AccountBook\n");
    t.write_bytes(".vecgrep/kg/bad.md", b"synonyms:: a\n\xff\n");
    let o = run(t.cmd("vg-query", ".").args(["--mode", "lexical", "--threshold", "0", "ledger"]));
    assert_code(&o, 0);
    let err = stderr(&o);
    let sso = err.lines().filter(|l| l.contains("sso.md:2: write `synonyms::` with two colons")).count();
    let bad = err.lines().filter(|l| l.contains("bad.md: line 2 is not UTF-8 text (the file is skipped)")).count();
    assert_eq!((sso, bad), (1, 1), "{err}");
    assert!(err.lines().all(|l| l.starts_with("vg-query: ")), "{err}");
    assert_eq!(hits(&o)[0]["concepts"], serde_json::json!(["ledger"]), "the file's name names it");
}

#[test]
fn a_search_that_finds_nothing_useful_is_judged_insufficient_and_people_are_told() {
    let t = ledger_project();
    let o = run(t.cmd("vg-query", ".").args(["--judge", "--threshold", "0", "quantum chromodynamics on a lattice"]));
    let j = judgement(&o);
    assert_eq!(j["verdict"], "insufficient", "{j}");
    assert!(!j["reasons"].as_array().unwrap().is_empty(), "{j}");
    assert_eq!(j["missing"].as_array().unwrap().len(), 3, "{j}");
    // Nothing at all: still judged, and the exit status is unchanged.
    let o = run(t.cmd("vg-query", ".").args(["--judge", "--threshold", "0.99", "quantum chromodynamics"]));
    assert_code(&o, 1);
    assert_eq!(judgement(&o)["reasons"], serde_json::json!(["no results above the threshold"]));
    // A terminal (heading mode) gets one line of advice on stderr, where
    // notes go; stdout holds the results alone, and a pipe gets no advice.
    let args = ["--threshold", "-1", "quantum chromodynamics on a lattice"];
    let advice = |o: &std::process::Output| {
        stderr(o).lines().filter(|l| l.starts_with("vecgrep: these results may not answer the query")).count()
    };
    let pretty = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never"]).args(args));
    assert_code(&pretty, 0);
    assert_eq!(advice(&pretty), 1, "{}", stderr(&pretty));
    assert!(!stdout(&pretty).contains("may not answer"), "{}", stdout(&pretty));
    assert_eq!(advice(&run(t.cmd("vecgrep", ".").args(args))), 0);
    // Nothing found: nothing printed, and the advice is for stderr.
    let none = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never", "zebra quantum spaceship"]));
    assert_code(&none, 1);
    assert_eq!((stdout(&none).as_str(), advice(&none)), ("", 1));
    // -q, or quiet in the config, silences it as every note.
    let quiet = run(t.cmd("vecgrep", ".").args(["-q", "--heading", "--color", "never"]).args(args));
    assert_eq!((advice(&quiet), stderr(&quiet).as_str()), (0, ""));
    t.project_config("quiet = true\n");
    let quiet = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never"]).args(args));
    assert_eq!((advice(&quiet), stderr(&quiet).as_str()), (0, ""));
    // --no-quiet undoes the config's quiet for one run, the advice too.
    let loud = run(t.cmd("vecgrep", ".").args(["--no-quiet", "--heading", "--color", "never"]).args(args));
    assert_eq!(advice(&loud), 1, "{}", stderr(&loud));
    // Found nothing, so no hit names the project whose config says it.
    let quiet = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never", "zebra quantum spaceship"]));
    assert_eq!((quiet.status.code(), stderr(&quiet).as_str()), (Some(1), ""));
    // Searched from outside the project: the judgement names the project.
    let outside = tempfile::tempdir().unwrap();
    let mut from_outside = t.cmd("vecgrep", ".");
    from_outside.current_dir(outside.path()).args(["--heading", "--color", "never", "zebra quantum spaceship"]);
    let quiet = run(from_outside.arg(t.path()));
    assert_eq!((quiet.status.code(), stderr(&quiet).as_str()), (Some(1), ""));
    t.project_config("");
    // A good search gets no advice.
    let good = run(t.cmd("vecgrep", ".").args(["--heading", "--color", "never", "area of a circle"]));
    assert_eq!(advice(&good), 0, "{}", stderr(&good));
}

#[test]
fn vg_format_takes_a_judgement_it_cannot_read_as_no_advice() {
    let t = ledger_project();
    let input = "{\"type\":\"hit\",\"file\":\"src/web.py\",\"start_line\":1,\"end_line\":1}\n\
                 {\"type\":\"judgement\",\"v\":1,\"verdict\":5}\n";
    let o = run_with_input(t.cmd("vg-format", ".").args(["--heading", "--color", "never"]), input.as_bytes());
    assert_code(&o, 0);
    assert!(stdout(&o).contains("src/web.py") && !stdout(&o).contains("note: "), "{}", stdout(&o));
    assert_eq!(stderr(&o), "");
}
