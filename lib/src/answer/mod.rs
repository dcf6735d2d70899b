//! A language model's answer from a search's top hits (terraphim-grep's
//! third tier, `vg-answer`): asked only when the judgement says the hits
//! may not answer the query, unless forced; given the hits' paths, lines
//! and text, never whole files; and held to them: a citation of anything it
//! was not given is dropped. With `--learn`, the words the answer bridges
//! (a query word the code lacks, the identifiers it names instead) become
//! concepts in `.vecgrep/kg/learned.md` for a person to review.
//!
//! `chat.rs` talks to the endpoint, `prompt.rs` writes what it is sent,
//! `cite.rs` checks the answer's citations, `learn.rs` keeps its concepts
//! (`names.rs` the names it gives, `denial.rs` what it denies).

mod chat;
mod cite;
mod denial;
mod learn;
mod names;
mod prompt;
mod spaceless;

use std::collections::HashSet;

use anyhow::Result;

pub use chat::{ChatClient, ChatSettings, API_KEY_VAR};
pub use cite::{cite, Citation, Cited};
pub use learn::{append_learned, concepts_bridged, learned_path, refuse_unless_project, LearnedConcept};

use crate::judge::Judgement;
use crate::project::SearchMode;
use crate::records::{AnswerRecord, CitationRecord, HitRecord, JudgementRecord, CONTRACT_VERSION};
use crate::search::Hit;

/// Results sent to the model unless told otherwise.
pub const DEFAULT_CONTEXT_HITS: usize = 5;
/// Most results that may be sent.
pub const MAX_CONTEXT_HITS: usize = 20;

/// Why the model is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskReason {
    /// The judgement says the results may not answer the query.
    Insufficient,
    /// The user asked for an answer whatever the judgement.
    Forced,
    /// The stream had no judgement (`vg-query` without `--judge`).
    Unjudged,
}

impl AskReason {
    pub fn as_str(self) -> &'static str {
        match self {
            AskReason::Insufficient => "insufficient",
            AskReason::Forced => "forced",
            AskReason::Unjudged => "unjudged",
        }
    }
}

/// Whether to ask the model about a search, or why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Ask(AskReason),
    Skip(&'static str),
}

/// Ask when there is something to answer from and the judgement says the
/// results fall short (or there is none), or when forced.
pub fn decide(judgement: Option<&JudgementRecord>, hits: usize, force: bool) -> Decision {
    if hits == 0 {
        return Decision::Skip("no results to answer from (a lower --threshold given to the search, vecgrep or vg-query, lets weaker ones through)");
    }
    match judgement {
        _ if force => Decision::Ask(AskReason::Forced),
        None => Decision::Ask(AskReason::Unjudged),
        Some(j) if j.is_insufficient() => Decision::Ask(AskReason::Insufficient),
        Some(_) => {
            Decision::Skip("the results look like they answer the query; not asking (--force-answer asks anyway)")
        }
    }
}

/// The model's answer, held to the hits it was given.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The model that answered, as the endpoint names it.
    pub model: String,
    /// The results it was given, best first.
    pub given: usize,
    pub cited: Cited,
}

impl Answer {
    /// The `answer` record of this answer to `query`, asked for `reason`,
    /// that taught the concepts `learned`.
    pub fn record(&self, query: &str, reason: AskReason, learned: Vec<String>) -> AnswerRecord {
        AnswerRecord {
            v: CONTRACT_VERSION,
            query: query.to_string(),
            model: self.model.clone(),
            reason: reason.as_str().into(),
            given: self.given,
            text: self.cited.text.clone(),
            citations: self
                .cited
                .citations
                .iter()
                .map(|c| CitationRecord { file: c.file.clone(), line: c.line, later: Default::default() })
                .collect(),
            dropped: self.cited.dropped.clone(),
            learned,
            later: Default::default(),
        }
    }
}

/// Ask `client` about `query`, given the first `context_hits` of `hits`.
pub fn answer(client: &ChatClient, query: &str, hits: &[HitRecord], context_hits: usize) -> Result<Answer> {
    // A stream is anyone's to write: a query no search takes is not sent
    // (twice, in the prompt) to the model.
    if query.len() > crate::search::MAX_QUERY_BYTES {
        anyhow::bail!("the query to answer is over {} bytes, which no search takes", crate::search::MAX_QUERY_BYTES);
    }
    // Nor one of no words (blanks, control characters alone).
    crate::search::check_query(query).map_err(|e| anyhow::anyhow!("the query to answer: {e}"))?;
    let given = &hits[..hits.len().min(context_hits.clamp(1, MAX_CONTEXT_HITS))];
    let reply = client.complete(&prompt::messages(query, given))?;
    let text = tidy(&reply.text, reply.cut);
    let cited = cite(&text, given);
    // An answer is words: control characters alone, or citations of places
    // it was not given, are no answer to show.
    // A reply cut at the token limit ends in an ellipsis tidy adds.
    if cited.text.trim().trim_end_matches('…').trim().is_empty() {
        let what = match cited.dropped.is_empty() {
            true => "nothing but control characters".to_string(),
            false => {
                let dropped = crate::project::shown::clipped(&cited.dropped.join(", "), 200);
                format!("nothing but citations of places it was not given ({dropped})")
            }
        };
        anyhow::bail!("the chat model at {} answered with {what}", client.endpoint());
    }
    Ok(Answer { model: reply.model, given: given.len(), cited })
}

/// A reply without control characters (a terminal would obey an escape
/// sequence an endpoint sent), without the sentences a small model repeats
/// word for word, and, when it was cut at the token limit, without its
/// unfinished last sentence. Linear in the reply (at most
/// `chat::MAX_REPLY_BYTES`): a hostile endpoint's megabyte of short
/// sentences costs milliseconds, not the minutes a scan of every earlier
/// sentence took (issue 42), so the answer stays within `llm_timeout`.
fn tidy(text: &str, cut: bool) -> String {
    let text: String = text.chars().filter(|&c| !c.is_control() || c == '\n' || c == '\t').collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut last: Option<&str> = None;
    let mut out = String::new();
    let mut sentences: Vec<&str> = split_sentences(&text);
    // A reply cut off inside one endless sentence is a loop of words
    // (`file.py` file.py` …`): cut at any dot, to find what repeats.
    if cut && sentences.len() == 1 {
        sentences = text.split_inclusive(['.', '!', '?']).collect();
    }
    if cut && sentences.len() > 1 && !sentences.last().is_some_and(|s| s.trim_end().ends_with(['.', '!', '?'])) {
        sentences.pop();
    }
    for sentence in sentences {
        let key = sentence.trim();
        // A short sentence may well come twice; the same one again and
        // again in a row is a loop.
        let again = seen.contains(key) && (key.len() > 12 || last == Some(key));
        if !key.is_empty() && again {
            continue;
        }
        seen.insert(key);
        last = Some(key);
        out.push_str(sentence);
    }
    let mut out = out.trim_end().to_string();
    if cut {
        out.push_str(" …");
    }
    out
}

/// `text` cut after each line's end, and after each `.`, `!` or `?` that a
/// space or the end follows: the dots inside `src/books.py:6` or `e.g.x`
/// end no sentence. The pieces joined are `text`.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
        if ends {
            out.push(&text[start..at + c.len_utf8()]);
            start = at + c.len_utf8();
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The judgement of hit records read from a stream, for a stream that came
/// without one: what the query's words are, and which the hits lack.
pub fn judge_records(query: &str, hits: &[HitRecord]) -> Judgement {
    let hits: Vec<Hit> = hits
        .iter()
        .map(|h| Hit {
            file: h.file.clone(),
            start_line: h.start_line,
            end_line: h.end_line,
            best_start_line: *h.best_lines().start(),
            best_end_line: *h.best_lines().end(),
            score: h.score as f32,
            relevance: h.order() as f32,
            fit: h.shown() as f32,
            text: h.text.clone(),
            concepts: h.concepts.clone(),
            why: Default::default(),
        })
        .collect();
    // The stream names the concepts its hits mention, not their terms.
    crate::judge::judge(query, SearchMode::Hybrid, &hits, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judgement(verdict: &str) -> JudgementRecord {
        serde_json::from_value(serde_json::json!({
            "type": "judgement", "v": 1, "query": "q", "verdict": verdict, "coverage": 0.5,
            "covered": [], "missing": [], "top_score": 0.5, "margin": 0.1, "files": 2, "reasons": []
        }))
        .unwrap()
    }

    #[test]
    fn repeated_sentences_and_a_cut_last_one_are_taken_out() {
        let looping = "It is AccountBook [1]. The code is missing a record. The code is missing a record. The code is missing a rec";
        assert_eq!(tidy(looping, true), "It is AccountBook [1]. The code is missing a record. …");
        assert_eq!(tidy("Yes. No. Yes. Done.", false), "Yes. No. Yes. Done.", "short sentences may repeat");
        assert_eq!(tidy("In `a.py` file.py` file.py` file.py` fi", true), "In `a.py` file. …");
        assert_eq!(tidy("Whole answer.", false), "Whole answer.");
        // The dots of a file name end no sentence: two citations of one file stay.
        let cites = "See src/books.py:1 for the class.\nSee src/books.py:6 for adding entries.";
        assert_eq!(tidy(cites, false), cites);
        assert_eq!(tidy("Retry in up.py twice. Retry in up.py twice. Done", true), "Retry in up.py twice. …");
        assert_eq!(tidy("Red\u{1b}]0;pwned\u{7}.\nNext.", false), "Red]0;pwned.\nNext.");
    }

    #[test]
    fn the_model_is_asked_only_when_the_results_fall_short_unless_forced() {
        let (bad, good) = (judgement("insufficient"), judgement("sufficient"));
        assert_eq!(decide(Some(&bad), 3, false), Decision::Ask(AskReason::Insufficient));
        assert!(matches!(decide(Some(&good), 3, false), Decision::Skip(_)));
        assert_eq!(decide(Some(&good), 3, true), Decision::Ask(AskReason::Forced));
        assert_eq!(decide(None, 3, false), Decision::Ask(AskReason::Unjudged));
        assert_eq!(
            decide(Some(&bad), 0, true),
            Decision::Skip("no results to answer from (a lower --threshold given to the search, vecgrep or vg-query, lets weaker ones through)")
        );
    }
}
