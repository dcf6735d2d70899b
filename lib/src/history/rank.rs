//! A question into commits: each commit ranked by its best piece on each
//! side (meaning, words), the sides fused as hybrid code search fuses them,
//! and the lines of the piece that placed it best shown as its match.

use std::collections::{HashMap, HashSet};

use anyhow::{anyhow, Result};

use super::filter::CommitFilter;
use crate::project::SearchMode;
use crate::scoring::{bm25, rrf};
use crate::search::{query_words, word_expression, NO_WORDS};
use crate::store::{CommitRow, CommitStore, PieceKind, StoredPiece};

/// How many commits each side contributes before fusion, at least: a
/// search asking for more (`-k 500`) takes as many from each, else lexical
/// and hybrid searches stopped at 100 or 200 in silence.
const CANDIDATE_POOL: usize = 100;

/// The candidates each side contributes for a search of `k` commits.
fn pool_for(k: usize) -> usize {
    CANDIDATE_POOL.max(k)
}

/// Most lines of a piece shown as a commit's match.
pub const MAX_MATCHED_LINES: usize = 4;

/// Which pieces of a commit a search reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pieces {
    Messages,
    MessagesAndDiffs,
    DiffsOnly,
}

impl Pieces {
    fn admits(self, kind: PieceKind) -> bool {
        match self {
            Pieces::Messages => kind == PieceKind::Message,
            Pieces::MessagesAndDiffs => true,
            Pieces::DiffsOnly => kind == PieceKind::Diff,
        }
    }
}

/// One log search.
#[derive(Clone, Debug)]
pub struct LogQuery<'q> {
    pub query: &'q str,
    pub mode: SearchMode,
    pub k: usize,
    /// No commit scoring below this.
    pub threshold: f32,
    pub pieces: Pieces,
    pub filter: CommitFilter,
}

/// A line of a commit's matching piece.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedLine {
    /// The file, for a changed line.
    pub path: Option<String>,
    /// Its line in the new file, for a changed line.
    pub line: Option<usize>,
    pub text: String,
}

/// A commit a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitHit {
    pub commit: CommitRow,
    /// The cosine of its best piece (semantic and hybrid), or BM25 on 0..1 (lexical).
    pub score: f32,
    /// What placed it: its message or its changed lines.
    pub matched: PieceKind,
    pub lines: Vec<MatchedLine>,
}

/// A commit's best piece on one side.
#[derive(Clone, Copy)]
struct Best {
    piece: i64,
    score: f32,
}

/// The best commits of `history` (shas, newest first) for `q`.
/// `vector` is the query's, needed unless the mode is lexical.
pub fn search_log(
    store: &dyn CommitStore,
    history: &[String],
    vector: Option<&[f32]>,
    q: &LogQuery<'_>,
) -> Result<Vec<CommitHit>> {
    let scope = scope(store, history, &q.filter)?;
    let semantic = match (q.mode, vector) {
        (SearchMode::Lexical, _) => HashMap::new(),
        (_, Some(v)) => by_meaning(store, &scope, q.pieces, v)?,
        (mode, None) => return Err(anyhow!("{mode} search needs the query's vector")),
    };
    let words = word_expression(q.query, q.mode);
    if q.mode == SearchMode::Lexical && words.is_none() {
        return Err(anyhow!(NO_WORDS));
    }
    let lexical = match (&words, q.mode) {
        (Some(expr), SearchMode::Lexical | SearchMode::Hybrid) => {
            by_words(store, &scope, q.pieces, expr, pool_for(q.k))?
        }
        _ => Vec::new(),
    };
    let ranked = ranked(&semantic, &lexical, q.mode, pool_for(q.k));
    let mut hits = Vec::new();
    for (commit, best) in ranked.into_iter().filter(|(_, b)| b.score >= q.threshold).take(q.k) {
        let Some(piece) = store.piece(best.piece)? else { continue };
        let Some(row) = store.commit_rows(&[scope.shas[commit as usize]])?.pop() else { continue };
        hits.push(CommitHit {
            commit: row,
            score: best.score,
            matched: piece.kind,
            lines: matched_lines(&piece, &query_words(q.query)),
        });
    }
    Ok(hits)
}

/// The commits a search may return: their shas, and each one's place.
struct Scope<'h> {
    shas: Vec<&'h str>,
    place: HashMap<&'h str, i64>,
}

fn scope<'h>(store: &dyn CommitStore, history: &'h [String], filter: &CommitFilter) -> Result<Scope<'h>> {
    let mut shas: Vec<&str> = history.iter().map(String::as_str).collect();
    if !filter.is_empty() {
        let admitted: HashSet<String> =
            store.commit_rows(&shas)?.into_iter().filter(|c| filter.admits(c)).map(|c| c.sha).collect();
        shas.retain(|s| admitted.contains(*s));
    }
    let place = shas.iter().enumerate().map(|(i, s)| (*s, i as i64)).collect();
    Ok(Scope { shas, place })
}

/// Each commit in scope with its piece nearest `vector` in meaning.
fn by_meaning(
    store: &dyn CommitStore,
    scope: &Scope<'_>,
    pieces: Pieces,
    vector: &[f32],
) -> Result<HashMap<i64, Best>> {
    let mut best: HashMap<i64, Best> = HashMap::new();
    // A server answering for the model's name with another model: the dot
    // product ran over the shorter vector and ranked by nothing.
    let mut other_size = None;
    store.each_piece_vector(&mut |piece, v| {
        if v.len() != vector.len() {
            other_size = Some(v.len());
            return;
        }
        let Some(&commit) = scope.place.get(piece.sha).filter(|_| pieces.admits(piece.kind)) else { return };
        let score: f32 = v.iter().zip(vector).map(|(a, b)| a * b).sum();
        let entry = best.entry(commit).or_insert(Best { piece: piece.id, score });
        if score > entry.score {
            *entry = Best { piece: piece.id, score };
        }
    })?;
    if let Some(held) = other_size {
        anyhow::bail!(
            "the query model gives {}-dimensional vectors but the commit log holds {held}-dimensional ones (another model behind the name?); remove .vecgrep's commit log with vg-index --clear-cache to rebuild it",
            vector.len()
        );
    }
    Ok(best)
}

/// The commits in scope whose pieces best match `expr`, best first, each
/// with its best piece and BM25 as a score, at most `pool`.
fn by_words(
    store: &dyn CommitStore,
    scope: &Scope<'_>,
    pieces: Pieces,
    expr: &str,
    pool: usize,
) -> Result<Vec<(i64, Best)>> {
    let mut ranked: Vec<(i64, Best)> = Vec::new();
    let mut seen = HashSet::new();
    store.each_word_match(expr, &mut |piece, bm25| {
        if let Some(&commit) = scope.place.get(piece.sha).filter(|_| pieces.admits(piece.kind)) {
            if seen.insert(commit) {
                ranked.push((commit, Best { piece: piece.id, score: bm25::bounded(bm25) }));
            }
        }
        ranked.len() < pool
    })?;
    Ok(ranked)
}

/// Commits best first, each with the piece to show and its score: by
/// cosine, by words, or fused, as the mode says. In hybrid mode the score
/// is the cosine of the best piece by meaning, as in code search, and the
/// piece shown is the one from the side that ranked the commit higher.
fn ranked(semantic: &HashMap<i64, Best>, lexical: &[(i64, Best)], mode: SearchMode, pool: usize) -> Vec<(i64, Best)> {
    let mut by_cosine: Vec<(i64, Best)> = semantic.iter().map(|(c, b)| (*c, *b)).collect();
    by_cosine.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
    match mode {
        SearchMode::Semantic => by_cosine,
        SearchMode::Lexical => lexical.to_vec(),
        SearchMode::Hybrid => {
            by_cosine.truncate(pool);
            let sem_ids: Vec<i64> = by_cosine.iter().map(|c| c.0).collect();
            let lex_ids: Vec<i64> = lexical.iter().map(|c| c.0).collect();
            let sem_rank: HashMap<i64, usize> = sem_ids.iter().enumerate().map(|(i, c)| (*c, i)).collect();
            let lex: HashMap<i64, (usize, Best)> =
                lexical.iter().enumerate().map(|(i, (c, b))| (*c, (i, *b))).collect();
            rrf::fuse(&[(&sem_ids[..], 1.0), (&lex_ids[..], 1.0)])
                .into_iter()
                .filter_map(|(commit, _)| {
                    let cosine = semantic.get(&commit)?;
                    let shown = match (sem_rank.get(&commit), lex.get(&commit)) {
                        (Some(s), Some((l, by_words))) if l < s => by_words.piece,
                        (None, Some((_, by_words))) => by_words.piece,
                        _ => cosine.piece,
                    };
                    Some((commit, Best { piece: shown, score: cosine.score }))
                })
                .collect()
        }
    }
}

/// The lines of `piece` that hold a query word (at most
/// `MAX_MATCHED_LINES`), else its first lines; a message's subject is
/// shown anyway, so only its body counts.
fn matched_lines(piece: &StoredPiece, words: &[String]) -> Vec<MatchedLine> {
    let mut lines: Vec<MatchedLine> = Vec::new();
    let mut new_line = piece.line;
    for (i, text) in piece.text.lines().enumerate() {
        let place = match piece.kind {
            PieceKind::Diff => Some(new_line),
            PieceKind::Message => None,
        };
        if piece.kind == PieceKind::Diff && (text.starts_with('+') || text.starts_with(' ')) {
            new_line += 1;
        }
        let unchanged = piece.kind == PieceKind::Diff && text.starts_with(' ');
        if (piece.kind == PieceKind::Message && i == 0) || unchanged || text.trim().is_empty() {
            continue;
        }
        lines.push(MatchedLine { path: piece.path.clone(), line: place, text: text.to_string() });
    }
    let holds_word = |l: &MatchedLine| {
        let lower = l.text.to_lowercase();
        words.iter().any(|w| lower.contains(w.as_str()))
    };
    let matching: Vec<MatchedLine> = lines.iter().filter(|l| holds_word(l)).cloned().collect();
    let mut shown = if matching.is_empty() { lines } else { matching };
    shown.truncate(MAX_MATCHED_LINES);
    for line in &mut shown {
        line.text = around_first_word(&line.text, words);
    }
    shown
}

/// Characters of a changed line shown, at most: a minified bundle's one
/// line made a record of a megabyte.
const MAX_LINE_CHARS: usize = 500;

/// `text`, or where it is longer than `MAX_LINE_CHARS`, that many of its
/// characters from a little before its first query word, `…` marking what
/// was cut.
fn around_first_word(text: &str, words: &[String]) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= MAX_LINE_CHARS {
        return text.to_string();
    }
    let lower: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
    // Where lowercasing changes the count of characters, the start stands.
    let first = (lower.len() == chars.len())
        .then(|| {
            let lower: String = lower.iter().collect();
            words.iter().filter_map(|w| lower.find(w.as_str())).min().map(|at| lower[..at].chars().count())
        })
        .flatten()
        .unwrap_or(0);
    let start = first.saturating_sub(MAX_LINE_CHARS / 5).min(chars.len() - MAX_LINE_CHARS);
    let end = start + MAX_LINE_CHARS;
    // A changed line keeps its `+` or `-` first.
    let marker = chars.first().filter(|c| start > 0 && matches!(c, '+' | '-'));
    let head =
        if start > 0 { format!("{}…", marker.map(char::to_string).unwrap_or_default()) } else { String::new() };
    let tail = if end < chars.len() { "…" } else { "" };
    format!("{head}{}{tail}", chars[start..end].iter().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_changed_line_is_shown_around_its_first_word() {
        let long = format!("+var c={{{}retry_upload(){}}}", "k:1,".repeat(300), ",x:2".repeat(300));
        let shown = around_first_word(&long, &["retry".to_string()]);
        assert_eq!(shown.chars().count(), MAX_LINE_CHARS + 3, "{shown}");
        assert!(shown.starts_with("+…") && shown.ends_with('…') && shown.contains("retry_upload()"), "{shown}");
        assert_eq!(around_first_word("+short", &["retry".to_string()]), "+short");
        let no_word = "é".repeat(900);
        assert_eq!(around_first_word(&no_word, &[]).chars().count(), MAX_LINE_CHARS + 1);
    }

    fn piece(kind: PieceKind, text: &str) -> StoredPiece {
        StoredPiece {
            sha: "s".into(),
            kind,
            path: (kind == PieceKind::Diff).then(|| "src/up.rs".to_string()),
            line: 10,
            text: text.into(),
        }
    }

    #[test]
    fn changed_lines_holding_a_query_word_are_shown_at_their_new_lines() {
        let p = piece(PieceKind::Diff, "-send(buf)\n+let tries = 3;\n same()\n+retry(send, tries)\n+log()");
        let lines = matched_lines(&p, &["retry".into()]);
        assert_eq!(lines.len(), 1);
        assert_eq!((lines[0].line, lines[0].text.as_str()), (Some(12), "+retry(send, tries)"));
        assert_eq!(lines[0].path.as_deref(), Some("src/up.rs"));
    }

    #[test]
    fn a_message_shows_its_body_not_its_subject() {
        let p = piece(PieceKind::Message, "Retry uploads\n\nUploads that fail are sent again.\nSee #12.");
        let lines = matched_lines(&p, &["nothing".into()]);
        assert_eq!(
            lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["Uploads that fail are sent again.", "See #12."]
        );
        assert!(matched_lines(&piece(PieceKind::Message, "Only a subject"), &[]).is_empty());
    }

    #[test]
    fn hybrid_keeps_the_cosine_as_score_and_shows_the_piece_of_the_better_side() {
        let semantic: HashMap<i64, Best> =
            [(0, Best { piece: 1, score: 0.6 }), (1, Best { piece: 3, score: 0.5 })].into();
        let lexical = vec![(1, Best { piece: 4, score: 0.9 })];
        let ranked = ranked(&semantic, &lexical, SearchMode::Hybrid, CANDIDATE_POOL);
        assert_eq!(ranked[0].0, 1, "ranked by both sides first");
        assert_eq!((ranked[0].1.piece, ranked[0].1.score), (4, 0.5));
        assert_eq!((ranked[1].1.piece, ranked[1].1.score), (1, 0.6));
    }
}
