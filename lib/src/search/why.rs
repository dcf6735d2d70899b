//! Why a hit ranked where it did, from what the ranking really used: its
//! place in each ranking (meaning, words), the name signal that raised it,
//! and what reranking did for what its file is. Fusion and reranking write
//! it down as they go (`fusion`, `rerank`), nothing here works a ranking
//! out again, so an explanation can never disagree with the order it
//! explains. `reasons` turns it into phrases a person reads (`--explain`,
//! `reasoning` in vg-serve's `/v1/ask` and vg-mcp's tools).
//!
//! The words a hit matched are the one part looked up after the search,
//! and only when asked (`matched_words`): FTS5 ranks rows without saying
//! which terms they hold, and tokenizing every hit's text costs a search
//! about a millisecond it need not spend when nobody reads the reasons.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::store::ChunkId;

/// What ranked a chunk by meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeaningBy {
    /// The model's vectors.
    Model,
    /// The static table's vectors (the index's first tier).
    Static,
    /// Both, fused by reciprocal ranks (an index the fill has reached in part).
    ModelAndStatic,
}

/// What reranking did to a candidate for what its file is (`rerank`), each
/// with its effect on the candidate's relevance.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Lift {
    /// Its file's candidates together outweigh other files' (`share` of the
    /// highest file sum): its best chunk rises.
    FileCoherence { share: f32, added: f32 },
    /// Its file is named after the symbol the query names.
    SymbolFile { added: f32 },
    /// It defines the symbol the query names (a definition line of it).
    Defines { added: f32 },
    /// Its file is a test, an example or prose, which a question about code
    /// rarely wants: its relevance is multiplied by `factor`.
    StepBack { file_is: &'static str, factor: f32 },
    /// Its file is close in meaning to the query as a whole (the mean
    /// cosine of its closest candidates).
    FileMeaning { cosine: f32, added: f32 },
    /// Its file's name or directory says `share` of the question's words.
    PathWords { share: f32, added: f32 },
    /// It is the `nth` chunk of a file already placed, and steps back.
    Repeat { nth: u32, factor: f32 },
    /// It is the `nth` chunk of a file already placed, and keeps its place:
    /// its names answer the query, or a side ranks it among its very best.
    KeptInPlace { nth: u32 },
    /// Its file is not among those of the places before `place` (9th or
    /// 10th), which the best candidate of such a file is given.
    FreshFile { place: u32 },
    /// A side ranks it first (`by`: `meaning` or `words`), and reranking
    /// had put it below the `within` results asked for: it is placed last
    /// among them.
    SideFirst { by: &'static str, within: u32 },
}

/// The evidence behind one hit's place.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Why {
    /// Its place (1-based) in the ranking by meaning, if it was ranked there.
    pub meaning_rank: Option<usize>,
    /// What ranked meaning.
    pub meaning_by: Option<MeaningBy>,
    /// Its place (1-based) in the ranking by words (BM25), if it was ranked there.
    pub words_rank: Option<usize>,
    /// The query's words found in its text or path (`matched_words`; empty
    /// until then, or when none is).
    pub matched_words: Vec<String>,
    /// Its own names (the definitions it is in or makes) and how well they
    /// answer the query (0..1), when that raised it.
    pub names: Option<NameMatch>,
    /// The concepts of the project the query named that it mentions.
    pub concepts: Vec<String>,
    /// Its place (1-based) after fusion and names, before reranking.
    pub fused_rank: Option<usize>,
    /// What reranking did, in the order it did it.
    pub lifts: Vec<Lift>,
    /// How many candidates were ranked.
    pub candidates: usize,
    /// Neighbouring chunks of the same place joined into this hit.
    pub joined: usize,
}

/// A chunk's names and their score against the query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NameMatch {
    pub names: Vec<String>,
    pub score: f32,
    /// What the name signal added to its relevance.
    pub added: f32,
}

/// Most names a reason lists.
const NAMES_SHOWN: usize = 3;

/// A chunk the name signal raised: its names as stored, their score, and
/// what the signal added to its fused score.
pub(super) struct Named {
    pub names: String,
    pub score: f32,
    pub added: f32,
}

/// What fusion knew of the candidates, for their `Why`s.
pub(super) struct Ranked<'a> {
    pub meaning: &'a [(ChunkId, f32)],
    pub meaning_by: Option<MeaningBy>,
    pub words: &'a [(ChunkId, f64)],
    /// The fused order after names, before reranking.
    pub fused: &'a [(ChunkId, f32)],
    /// The chunks the name signal raised.
    pub named: &'a HashMap<ChunkId, Named>,
    /// What reranking did to each candidate, amounts in fused units.
    pub lifts: HashMap<ChunkId, Vec<Lift>>,
    /// A fused score as a relevance: what every amount is multiplied by.
    pub scale: f32,
}

impl Ranked<'_> {
    /// The `Why` of each of `ids`.
    pub(super) fn whys(mut self, ids: impl Iterator<Item = ChunkId>) -> HashMap<ChunkId, Why> {
        let place = |ranking: Vec<ChunkId>| -> HashMap<ChunkId, usize> {
            ranking.into_iter().enumerate().map(|(at, id)| (id, at + 1)).collect()
        };
        let meaning = place(self.meaning.iter().map(|m| m.0).collect());
        let words = place(self.words.iter().map(|w| w.0).collect());
        let fused = place(self.fused.iter().map(|f| f.0).collect());
        let candidates = self.fused.len().max(self.meaning.len()).max(self.words.len());
        let scale = self.scale;
        ids.map(|id| {
            let names = self.named.get(&id).map(|n| NameMatch {
                names: n.names.split(' ').filter(|n| !n.is_empty()).take(NAMES_SHOWN).map(String::from).collect(),
                score: r4(n.score),
                added: r4(n.added * scale),
            });
            let lifts = self.lifts.remove(&id).unwrap_or_default();
            let why = Why {
                meaning_rank: meaning.get(&id).copied(),
                meaning_by: self.meaning_by.filter(|_| meaning.contains_key(&id)),
                words_rank: words.get(&id).copied(),
                names,
                fused_rank: fused.get(&id).copied(),
                lifts: lifts.into_iter().map(|l| l.scaled(scale)).collect(),
                candidates,
                ..Why::default()
            };
            (id, why)
        })
        .collect()
    }
}

/// The `Why`s of a ranking by one side alone (semantic or lexical mode).
pub(super) fn one_side<T>(ranking: &[(ChunkId, T)], by_meaning: Option<MeaningBy>) -> HashMap<ChunkId, Why> {
    ranking
        .iter()
        .enumerate()
        .map(|(at, (id, _))| {
            let why = match by_meaning {
                Some(by) => Why { meaning_rank: Some(at + 1), meaning_by: Some(by), ..Why::default() },
                None => Why { words_rank: Some(at + 1), ..Why::default() },
            };
            (*id, Why { candidates: ranking.len(), ..why })
        })
        .collect()
}

/// The query's word terms (`lexical::match_expression`'s, each as the
/// user wrote its part) that `text` or `path` holds, as the word index
/// folds words (FTS5's tokenizer, Porter's stems): `uploads` is matched by
/// `upload`. Empty when the query has no words to match, or when the
/// tokenizer cannot be had.
pub fn matched_words(query_terms: &[String], text: &str, path: &str) -> Vec<String> {
    // Split as the index splits them (`retryUpload` is `retry`, `upload`
    // and `retryupload`), then folded as FTS5 folds them.
    let (text, path) = (crate::terms::terms(text), crate::terms::terms(path));
    let Ok(folded) = crate::store::text_terms(&[&text, &path]) else { return Vec::new() };
    let held: BTreeSet<&String> = folded.iter().flatten().collect();
    let Ok(asked) = crate::store::text_terms(&query_terms.iter().map(String::as_str).collect::<Vec<_>>()) else {
        return Vec::new();
    };
    query_terms
        .iter()
        .zip(asked)
        .filter(|(_, terms)| !terms.is_empty() && terms.iter().all(|t| held.contains(t)))
        .map(|(word, _)| word.clone())
        .collect()
}

/// `x` to four decimals, as the records write scores.
fn r4(x: f32) -> f32 {
    (x * 10_000.0).round() / 10_000.0
}

/// `n` as an ordinal: 1st, 2nd, 3rd, 11th, 22nd.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl Why {
    /// The reasons, one phrase each: the rankings first, then what raised
    /// or lowered it.
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        let of = if self.candidates > 0 { format!(" of {}", self.candidates) } else { String::new() };
        if let Some(rank) = self.meaning_rank {
            let by = match self.meaning_by {
                Some(MeaningBy::Static) => " (static vectors)",
                Some(MeaningBy::ModelAndStatic) => " (model and static vectors)",
                _ => "",
            };
            out.push(format!("{} by meaning{by}{of}", ordinal(rank)));
        }
        match (self.words_rank, self.matched_words.is_empty()) {
            (Some(rank), true) => out.push(format!("{} by words{of}", ordinal(rank))),
            (Some(rank), false) => {
                out.push(format!("{} by words{of} ({})", ordinal(rank), self.matched_words.join(", ")))
            }
            (None, false) => out.push(format!("has the words {}", self.matched_words.join(", "))),
            (None, true) => {}
        }
        if let Some(n) = &self.names {
            out.push(format!(
                "its name {} answers the query (name score {:.2}, +{:.2})",
                n.names.join(", "),
                n.score,
                n.added
            ));
        }
        if !self.concepts.is_empty() {
            out.push(format!("mentions the concept {}", self.concepts.join(", ")));
        }
        out.extend(self.lifts.iter().map(Lift::reason));
        if self.joined > 0 {
            let s = if self.joined == 1 { "" } else { "s" };
            out.push(format!("joined with {} neighbouring chunk{s}", self.joined));
        }
        out
    }

    /// The reasons as one line.
    pub fn reasoning(&self) -> String {
        self.reasons().join("; ")
    }
}

impl Lift {
    /// The lift with each amount it added multiplied by `k`, every figure
    /// rounded to what a reader can use.
    fn scaled(self, k: f32) -> Lift {
        match self {
            Lift::FileCoherence { share, added } => Lift::FileCoherence { share: r4(share), added: r4(added * k) },
            Lift::SymbolFile { added } => Lift::SymbolFile { added: r4(added * k) },
            Lift::Defines { added } => Lift::Defines { added: r4(added * k) },
            Lift::FileMeaning { cosine, added } => Lift::FileMeaning { cosine: r4(cosine), added: r4(added * k) },
            Lift::PathWords { share, added } => Lift::PathWords { share: r4(share), added: r4(added * k) },
            other => other,
        }
    }

    fn reason(&self) -> String {
        match self {
            Lift::FileCoherence { share, added } => {
                format!("its file's candidates weigh {:.0}% of the heaviest file's (+{added:.2})", share * 100.0)
            }
            Lift::SymbolFile { added } => format!("its file is named after the symbol asked for (+{added:.2})"),
            Lift::Defines { added } => format!("it defines the symbol asked for (+{added:.2})"),
            Lift::StepBack { file_is, factor } => format!("{file_is} file, stepped back (x{factor:.2})"),
            Lift::FileMeaning { cosine, added } => {
                format!("its file is close in meaning as a whole (cosine {cosine:.2}, +{added:.2})")
            }
            Lift::PathWords { share, added } => {
                format!("its path says {:.0}% of the question's words (+{added:.2})", share * 100.0)
            }
            Lift::Repeat { nth, factor } => {
                format!("{} chunk of its file, stepped back (x{factor:.2})", ordinal(*nth as usize))
            }
            Lift::KeptInPlace { nth } => {
                format!("{} chunk of its file, kept in place (its names or a side's very best)", ordinal(*nth as usize))
            }
            Lift::FreshFile { place } => {
                format!(
                    "its file is not among the first {} results' files, so placed {}",
                    place - 1,
                    ordinal(*place as usize)
                )
            }
            Lift::SideFirst { by, within } => {
                format!("first by {by}, so kept among the first {within} (reranking had put it lower)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal).into();
        assert_eq!(got, ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]);
    }

    #[test]
    fn words_are_matched_as_the_word_index_folds_them() {
        let terms: Vec<String> = ["retry", "uploads", "ledger"].map(String::from).into();
        let got = matched_words(&terms, "fn retrying_upload() {}", "src/net.rs");
        assert_eq!(got, ["retry", "uploads"], "porter folds retrying and uploads");
        assert_eq!(matched_words(&terms, "nothing here", "ledger/book.rs"), ["ledger"], "the path counts");
        assert_eq!(
            matched_words(&terms, "fn retryUpload()", "a.rs"),
            ["retry", "uploads"],
            "identifiers split as indexed"
        );
        assert!(matched_words(&[], "retry", "a.rs").is_empty());
    }

    #[test]
    fn reasons_say_what_was_recorded_and_nothing_else() {
        let why = Why {
            meaning_rank: Some(2),
            meaning_by: Some(MeaningBy::Model),
            words_rank: Some(1),
            matched_words: vec!["retry".into()],
            candidates: 40,
            lifts: vec![Lift::StepBack { file_is: "a test", factor: 0.7 }],
            ..Why::default()
        };
        assert_eq!(
            why.reasoning(),
            "2nd by meaning of 40; 1st by words of 40 (retry); a test file, stepped back (x0.70)"
        );
        assert_eq!(Why::default().reasoning(), "", "no evidence, no reason");
    }
}
