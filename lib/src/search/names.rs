//! The name signal of hybrid search: how well a chunk's own names (the
//! function, method or class it is in or defines, `chunk::Context::names`)
//! answer the query's words.
//!
//! A question about code usually paraphrases the name of what it wants
//! ("return the logger's effective level" → `getEffectiveLevel`). The
//! embedding sees the whole chunk and BM25 sees every word of it, so a
//! chunk that merely mentions those words (a caller, a test, a docstring
//! elsewhere) often outranks the definition itself. Scoring the few words
//! of a chunk's own names against the query, weighted by how rare each
//! part is among the index's names, picks the definition out.

use std::collections::HashMap;

use super::lexical;
use crate::store::ChunkId;
use crate::terms::{parse_names, stem};

/// What code calls a thing that a question spells out: each query word
/// also matches these name parts (stemmed). Only abbreviations and idioms
/// common to code in every language, never words of one project.
const ALIASES: &[(&str, &[&str])] = &[
    ("return", &["get"]),
    ("retrieve", &["get"]),
    ("fetch", &["get"]),
    ("obtain", &["get"]),
    ("look", &["get", "find"]),
    ("lookup", &["get", "find"]),
    ("search", &["find"]),
    ("initialize", &["init", "new"]),
    ("initialise", &["init", "new"]),
    ("initialization", &["init", "new"]),
    ("construct", &["new", "init"]),
    ("constructor", &["new", "init"]),
    ("create", &["new", "make"]),
    ("build", &["new", "make"]),
    ("configure", &["config", "conf", "cfg"]),
    ("configuration", &["config", "conf", "cfg"]),
    ("message", &["msg"]),
    ("error", &["err"]),
    ("errors", &["err"]),
    ("determine", &["is", "has"]),
    ("check", &["is", "has"]),
    ("whether", &["is", "has"]),
    ("argument", &["arg"]),
    ("parameter", &["param"]),
    ("directory", &["dir"]),
    ("number", &["num", "count", "len"]),
    ("string", &["str"]),
    ("length", &["len"]),
    ("size", &["len"]),
    ("buffer", &["buf"]),
    ("value", &["val"]),
    ("attribute", &["attr"]),
    ("reference", &["ref"]),
    ("context", &["ctx"]),
    ("previous", &["prev"]),
    ("current", &["cur"]),
    ("temporary", &["tmp", "temp"]),
    ("maximum", &["max"]),
    ("minimum", &["min"]),
    ("information", &["info"]),
    ("specification", &["spec"]),
    ("position", &["pos"]),
    ("index", &["idx"]),
    ("character", &["char"]),
    ("compare", &["cmp", "eq"]),
    ("equal", &["eq"]),
    ("iterate", &["iter"]),
    ("iterator", &["iter"]),
    ("format", &["fmt"]),
    ("allocate", &["alloc"]),
    ("callback", &["cb"]),
    ("source", &["src"]),
    ("destination", &["dst", "dest"]),
    ("execute", &["exec", "run"]),
    ("connection", &["conn"]),
    ("request", &["req"]),
    ("response", &["resp"]),
    ("database", &["db"]),
    ("synchronize", &["sync"]),
    ("asynchronous", &["async"]),
    ("object", &["obj"]),
    ("address", &["addr"]),
    ("sequence", &["seq"]),
    ("expression", &["expr"]),
    ("environment", &["env"]),
    ("description", &["desc"]),
    ("utility", &["util"]),
    ("package", &["pkg"]),
    ("library", &["lib"]),
    ("representation", &["repr"]),
    ("represent", &["repr"]),
    ("delete", &["remove", "del"]),
    ("remove", &["del"]),
    ("statistics", &["stats"]),
    ("definition", &["def"]),
    ("declaration", &["decl"]),
    ("document", &["doc"]),
    ("documentation", &["doc"]),
    ("identifier", &["id", "ident"]),
    ("operation", &["op"]),
    ("instruction", &["inst", "insn"]),
    ("pointer", &["ptr"]),
    ("variable", &["var"]),
    ("generate", &["gen"]),
    ("generator", &["gen"]),
    ("calculate", &["calc", "compute"]),
    ("compute", &["calc"]),
];

/// A query's content words, each with the name parts it matches: itself
/// (stemmed) and its aliases (`ALIASES`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct QueryWords {
    words: Vec<Vec<String>>,
}

impl QueryWords {
    pub(super) fn of(query: &str) -> QueryWords {
        let mut words: Vec<Vec<String>> = Vec::new();
        for part in lexical::content_words(query) {
            let stemmed = stem(&part);
            if words.iter().any(|w| w[0] == stemmed) {
                continue;
            }
            let mut variants = vec![stemmed];
            for (word, aliases) in ALIASES {
                if *word == part || stem(word) == variants[0] {
                    for a in *aliases {
                        let a = stem(a);
                        if !variants.contains(&a) {
                            variants.push(a);
                        }
                    }
                }
            }
            words.push(variants);
        }
        QueryWords { words }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Every term that can match, for looking up how rare each is.
    pub(super) fn terms(&self) -> impl Iterator<Item = &str> {
        self.words.iter().flatten().map(String::as_str)
    }
}

/// How rare a name part is: BM25's inverse document frequency over the
/// chunks that have names, where `df` of `n` hold it.
pub(super) fn idf(df: u64, n: u64) -> f32 {
    let (df, n) = (df as f32, n as f32);
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
}

/// Share of a name-match score that says how much of the query the name
/// accounts for, against how much of the name the query accounts for
/// (a name is mostly about all of its parts; bench/TUNING.md).
pub(super) const QUERY_SHARE: f32 = 0.3;

/// How well one name answers the query, 0..1: the IDF-weighted share of
/// the name's parts the query has (a name is about all of its parts),
/// blended with the IDF-weighted share of the query's words the name has.
pub(super) fn name_score(terms: &[String], query: &QueryWords, idf: &dyn Fn(&str) -> f32) -> f32 {
    let mut name_total = 0.0;
    let mut name_matched = 0.0;
    for t in terms {
        let w = idf(t);
        name_total += w;
        name_matched += w * part_match(t, query);
    }
    if name_matched == 0.0 {
        return 0.0;
    }
    let mut query_total = 0.0;
    let mut query_matched = 0.0;
    for variants in &query.words {
        let w = idf(&variants[0]);
        query_total += w;
        if variants.iter().any(|v| terms.iter().any(|t| t == v || spells_part_of(v, t))) {
            query_matched += w;
        }
    }
    let of_name = name_matched / name_total;
    let of_query = if query_total > 0.0 { (query_matched / query_total).min(1.0) } else { 0.0 };
    (1.0 - QUERY_SHARE) * of_name + QUERY_SHARE * of_query
}

/// How much of one name part the query has: all of it when a query word
/// (or an alias) is the part; for a compound that neither case nor `_`
/// splits (`getdomain`, `unquote`, `readline`), the share of its letters
/// that query words spell (`spells_part_of`).
fn part_match(part: &str, query: &QueryWords) -> f32 {
    if query.words.iter().any(|variants| variants.iter().any(|v| v == part)) {
        return 1.0;
    }
    if part.len() < MIN_COMPOUND_BYTES {
        return 0.0;
    }
    let mut covered = vec![false; part.len()];
    for v in query.terms() {
        if spells_part_of(v, part) {
            for (at, _) in part.match_indices(v) {
                covered[at..at + v.len()].fill(true);
            }
        }
    }
    covered.iter().filter(|&&c| c).count() as f32 / part.len() as f32
}

/// Whether query word `word` spells part of the compound `part`: a word of
/// four letters or more anywhere in it, a three-letter one only at its
/// start (`get` in `getdomain`, but not in `target`).
fn spells_part_of(word: &str, part: &str) -> bool {
    part.len() >= MIN_COMPOUND_BYTES
        && word != part
        && (word.len() >= 4 && part.contains(word) || word.len() == 3 && part.starts_with(word))
}

/// Shortest name part read as a compound of words.
const MIN_COMPOUND_BYTES: usize = 6;

/// The best score of a chunk's names, each given as its terms.
fn best_score(names: &[Vec<String>], query: &QueryWords, idf: &dyn Fn(&str) -> f32) -> f32 {
    names.iter().map(|terms| name_score(terms, query, idf)).fold(0.0, f32::max)
}

/// Name scores for chunks, given each chunk's stored names and a lookup
/// of how many named chunks hold each term; terms are looked up once.
pub(super) fn score_chunks(
    chunks: &[(ChunkId, String)],
    query: &QueryWords,
    named_chunks: u64,
    df: &mut dyn FnMut(&str) -> u64,
) -> HashMap<ChunkId, f32> {
    let mut idfs: HashMap<String, f32> = HashMap::new();
    let mut lookup = |t: &str| -> f32 {
        if let Some(&w) = idfs.get(t) {
            return w;
        }
        let w = idf(df(t), named_chunks);
        idfs.insert(t.to_string(), w);
        w
    };
    let parsed: Vec<(ChunkId, Vec<Vec<String>>)> = chunks.iter().map(|(id, names)| (*id, parse_names(names))).collect();
    // Fill the cache first so that scoring can borrow it immutably.
    for t in query.terms().map(str::to_string).collect::<Vec<_>>() {
        lookup(&t);
    }
    for t in parsed.iter().flat_map(|(_, names)| names.iter().flatten()) {
        lookup(t);
    }
    let idf_of = |t: &str| idfs.get(t).copied().unwrap_or(0.0);
    parsed.iter().map(|(id, names)| (*id, best_score(names, query, &idf_of))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The best score of a chunk's names as stored.
    fn chunk_score(names: &str, query: &QueryWords, idf: &dyn Fn(&str) -> f32) -> f32 {
        best_score(&parse_names(names), query, idf)
    }

    #[test]
    fn query_words_carry_their_aliases() {
        let q = QueryWords::of("Return the configured error message");
        assert_eq!(q.words[0], ["return", "get"]);
        assert_eq!(q.words[1], ["configur", "config", "conf", "cfg"]);
        assert_eq!(q.words[2], ["error", "err"]);
        assert_eq!(q.words[3], ["messag", "msg"]);
        assert!(QueryWords::of("how is it").is_empty());
    }

    #[test]
    fn the_name_that_is_the_query_scores_best() {
        let q = QueryWords::of("return the effective level of the logger");
        let flat = |_: &str| 1.0;
        let exact = chunk_score("getEffectiveLevel", &q, &flat);
        let partial = chunk_score("setLevel", &q, &flat);
        let none = chunk_score("emit", &q, &flat);
        assert!(exact > 0.9, "{exact}");
        assert!(partial < exact && partial > 0.0, "{partial}");
        assert_eq!(none, 0.0);
        // A chunk is as good as its best name.
        assert_eq!(chunk_score("emit getEffectiveLevel", &q, &flat), exact);
    }

    #[test]
    fn compounds_no_case_splits_match_the_words_that_spell_them() {
        let q = QueryWords::of("Get the complete domain name from an address");
        let flat = |_: &str| 1.0;
        // Spelled whole, a compound scores as its split form would.
        assert_eq!(chunk_score("getdomain", &q, &flat), chunk_score("get_domain", &q, &flat));
        assert!(chunk_score("getdomain", &q, &flat) > 0.8);
        // Partly spelled: `addr` (an alias of address) and `list` is not asked for.
        let partial = chunk_score("getaddrlist", &q, &flat);
        assert!(partial > 0.3 && partial < 0.9, "{partial}");
        // A three-letter word only counts at the start: `get` is not in `target`.
        assert_eq!(chunk_score("target", &QueryWords::of("get it"), &flat), 0.0);
        // Short parts are never read as compounds.
        assert_eq!(chunk_score("getx", &q, &flat), 0.0);
    }

    #[test]
    fn rare_parts_weigh_more_than_common_ones() {
        let q = QueryWords::of("rotate the log file");
        let idf_of = |t: &str| if t == "file" { 0.2 } else { 3.0 };
        // Sharing the rare part beats sharing the common one.
        assert!(chunk_score("doRotation rotate", &q, &idf_of) > chunk_score("openFile", &q, &idf_of));
        assert!(idf(1, 1000) > idf(100, 1000));
        assert!(idf(1000, 1000) > 0.0);
    }

    #[test]
    fn scores_look_each_term_up_once() {
        let q = QueryWords::of("rotate files");
        let chunks = vec![(1, "doRollover rotate".to_string()), (2, "rotate".to_string()), (3, String::new())];
        let mut asked: Vec<String> = Vec::new();
        let scores = score_chunks(&chunks, &q, 100, &mut |t| {
            asked.push(t.to_string());
            if t == "rotat" {
                2
            } else {
                50
            }
        });
        let mut sorted = asked.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), asked.len(), "{asked:?}");
        assert!(scores[&2] > 0.9);
        assert!(scores[&1] > 0.0 && scores[&1] <= scores[&2]);
        assert_eq!(scores[&3], 0.0);
    }
}
