//! Running a search against an index: embed the query, rank the candidates
//! of each side, fuse, cut at the threshold, join neighbouring hits.
//! Implements SearchCompletesOrFails: a query that cannot be embedded is an
//! error, never an empty result.
//!
//! The store answers plain questions (`store::IndexReader`); every ranking
//! decision is here. Hybrid mode orders by reciprocal-rank fusion of the
//! semantic and the lexical (BM25) ranking (`fusion`), raised for chunks
//! whose own names match the query's words (`names`); `score` stays the
//! cosine similarity whatever decided the order, so that a threshold means
//! the same in hybrid and semantic mode. In lexical mode no model is loaded
//! and `score` is BM25 mapped onto 0..1 (`scoring::bm25::bounded`).

mod filter;
mod fusion;
mod join;
mod lexical;
mod names;
mod package;
mod rerank;
mod spans;
mod statics;
mod vectors;
mod why;
mod word_table;

use std::collections::HashSet;

use anyhow::{anyhow, Context, Result};

pub use filter::{parse_when, FileFilter};
pub use join::MAX_JOINED_LINES;
pub use package::package_files;
pub use vectors::VectorTable;
pub use why::{matched_words, Lift, MeaningBy, NameMatch, Why};
pub use word_table::WordTable;

use crate::concepts::Expansion;
use crate::embed::{Embedder, StaticModel};
use crate::project::{ProjectRoot, SearchMode, Threshold};
use crate::store::{ChunkId, IndexReader, Scope};

/// One search hit before it becomes a record.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
    /// The lines of the chunk that ranked the hit, within `start_line..=end_line`:
    /// a hit joined from neighbouring chunks is shown by the lines of its
    /// best, not of a lower neighbour that shares as many of the query's words.
    pub best_start_line: usize,
    pub best_end_line: usize,
    /// The cosine similarity to the query (mapped BM25 in lexical mode):
    /// what the threshold cuts.
    pub score: f32,
    /// What the hits are ordered by, descending: the fused score in hybrid
    /// mode (1 for a chunk first in meaning and in words), the score otherwise.
    pub relevance: f32,
    /// The relevance on a bounded scale, the same order: in hybrid mode
    /// `tanh` of it (0..1; 0.76 for a chunk first in meaning and in words),
    /// the score otherwise (a cosine, or mapped BM25). The number people
    /// are shown, colored by its band (`format::score_band`).
    pub fit: f32,
    pub text: String,
    /// The names of the query's concepts that the hit mentions.
    pub concepts: Vec<String>,
    /// Why it ranked where it did, as the ranking worked it out
    /// (`explain` adds the words it matched).
    pub why: Why,
}

/// What one search asks for.
#[derive(Clone, Debug)]
pub struct SearchRequest<'q> {
    /// The question, in plain words (`check_query` says what is accepted).
    pub query: &'q str,
    pub mode: SearchMode,
    /// The files results may come from.
    pub scope: Scope,
    /// At most this many hits.
    pub k: usize,
    /// No hit scoring below this (but a definition of the symbol the
    /// query names, when no one chose the threshold).
    pub threshold: Threshold,
    /// Files left out by their metadata or path, whatever their rank.
    pub filter: FileFilter,
    /// The project's concepts the query names (`ConceptSet::expand`): their
    /// words join the query's on every side.
    pub expansion: Expansion,
    /// At most this many hits from one file (`vg-query -m`, as ripgrep's
    /// `--max-count` limits the matches of a file); None: no limit, further
    /// chunks of a file already placed only step back in the ranking.
    pub per_file: Option<usize>,
}

impl SearchRequest<'_> {
    /// The text every side searches for: the query, and its concepts' words.
    fn words(&self) -> Result<String> {
        Ok(with_concept_words(check_query(self.query)?, &self.expansion))
    }

    /// The request with its filter applied to its scope: the index's files
    /// that pass, so that the top-k cut comes after the filter. `root` is
    /// the index's: a catalog's filters are matched within each project.
    pub fn narrowed(mut self, store: &dyn IndexReader, root: Option<&ProjectRoot>) -> Result<Self> {
        let filter = std::mem::take(&mut self.filter);
        let per_project = root.is_some_and(|r| r.marker == crate::project::RootMarker::Catalog);
        self.scope = filter.narrow(std::mem::take(&mut self.scope), store, per_project)?;
        Ok(self)
    }
}

/// Whether `mode` needs the query embedded.
pub fn needs_embedder(mode: SearchMode) -> bool {
    mode != SearchMode::Lexical
}

/// Return the best hits for `request`. `embedder` may be None only in lexical mode.
pub fn search(
    store: &dyn IndexReader,
    embedder: Option<&mut dyn Embedder>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    let vector = embed_query(embedder, request)?;
    let request = request.clone().narrowed(store, None)?;
    let mut ranking = Ranking { vector: vector.as_deref(), ..Ranking::default() };
    search_embedded(store, &mut ranking, &request)
}

/// A search over the index of `root`, which may hold chunks with static
/// vectors only (`statics`, the static table of `embedder`'s model): their
/// meaning is ranked by the static table, that of chunks with the model's
/// vector by the model, as `sides` (`MeaningSides::of` the same index)
/// says; the model is loaded for the query only when the index holds some
/// of its vectors (a static index is searched without it). A hybrid search ranks its words on a connection of its own
/// meanwhile: on a large index each side takes a good part of the search
/// (at a million chunks, 40-260 ms for the words, 90 ms for the vectors).
/// Should a second connection not open, the words are ranked after.
pub fn search_index(
    root: &ProjectRoot,
    store: &dyn IndexReader,
    embedder: Option<&mut dyn Embedder>,
    statics: Option<&StaticModel>,
    sides: MeaningSides,
    request: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    let request = request.clone().narrowed(store, Some(root))?;
    let statics = statics.filter(|_| sides.by_statics);
    let by_model = sides.by_model;
    let at_generation = Some(store.generation()?);
    let (meaning, words) = std::thread::scope(|s| {
        let words = (request.mode == SearchMode::Hybrid).then(|| {
            s.spawn(|| match crate::store::open_for_reading(root) {
                Ok(own) => Some(lexical_ranking(&*own, None, None, &request)),
                Err(_) => None,
            })
        });
        let meaning = (|| -> Result<_> {
            if !by_model {
                return Ok((None, None));
            }
            let vector = embed_query(embedder, &request)?.ok_or_else(|| anyhow!("no vector for the query"))?;
            check_query_dims(store, &vector, Some(root))?;
            let nearest = store.nearest_chunks(&vector, &request.scope, fusion::candidate_pool(request.k))?;
            Ok((Some(vector), Some(nearest)))
        })();
        (meaning, words.map(|w| w.join().unwrap_or_else(|_| Some(Err(anyhow!("ranking the words panicked"))))))
    });
    let (vector, semantic) = meaning?;
    let lexical = match words {
        Some(Some(ranked)) => ranked?,
        _ => lexical_ranking(store, None, None, &request)?,
    };
    let mut ranking =
        Ranking { vector: vector.as_deref(), semantic, lexical, statics, at_generation, ..Ranking::default() };
    search_embedded(store, &mut ranking, &request)
        .or_else(|e| ranked_again_in_one_snapshot(e, store, &ranking, &request))
}

/// The index changed between the reads that ranked a search and the
/// snapshot its hits are read from: the ranked chunk ids may name other
/// chunks by then (a rewritten file's chunks take their ids back), and a
/// search for one word returned chunks that say another.
#[derive(Debug, thiserror::Error)]
#[error("the index changed while the search ranked it")]
pub struct IndexChangedMeanwhile;

/// After `IndexChangedMeanwhile`, the search again with every side ranked
/// from the store within the snapshot its hits are read from: slower (no
/// side in parallel or from memory), and only when a writer committed in
/// the moment between. Any other error is passed on.
pub fn ranked_again_in_one_snapshot(
    error: anyhow::Error,
    store: &dyn IndexReader,
    ranked: &Ranking<'_>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    if !error.is::<IndexChangedMeanwhile>() {
        return Err(error);
    }
    let mut ranking = Ranking { vector: ranked.vector, statics: ranked.statics, ..Ranking::default() };
    search_embedded(store, &mut ranking, request)
}

/// What ranks the meaning of a search's chunks, decided once from the
/// index's counts: the static table where chunks lack the model's vector
/// (`by_statics`), the model for the query where chunks have it or no table
/// ranks the others (`by_model`). On a fully embedded index the static
/// ranking is not a third fused signal: it gained nothing for a second scan
/// of every vector (bench/TUNING.md).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeaningSides {
    pub by_statics: bool,
    pub by_model: bool,
}

impl MeaningSides {
    /// The sides of a search of `store` in `mode`, with a static table at
    /// hand or not (`has_table`). Only the counts that decide are read, each
    /// once: on a fully embedded index none lack the model's vector and
    /// that settles it, and a count of every chunk is a scan on Postgres.
    pub fn of(store: &dyn IndexReader, mode: SearchMode, has_table: bool) -> Result<MeaningSides> {
        let counts = match needs_embedder(mode) && has_table && store.unembedded_count()? > 0 {
            true => store.vector_counts()?,
            false => VectorCounts::default(),
        };
        Ok(MeaningSides::from_counts(counts, mode, has_table))
    }

    /// The sides, from counts already read (a server holds them per change
    /// of the index).
    pub fn from_counts(counts: VectorCounts, mode: SearchMode, has_table: bool) -> MeaningSides {
        if !needs_embedder(mode) {
            return MeaningSides::default();
        }
        let by_statics = has_table && counts.unembedded > 0;
        MeaningSides { by_statics, by_model: !by_statics || counts.vectors > 0 }
    }
}

/// Whether the static vectors `store` holds come from the table this
/// process embeds a query with: only then are the two comparable. An
/// index run gives an index of another table this one's vectors; a search
/// that may not index (`--no-index`) must not rank by it. An index from
/// before tables were recorded (no id) is taken at its word.
pub fn statics_match(store: &dyn IndexReader) -> Result<bool> {
    Ok(store.meta()?.is_none_or(|m| m.static_table_in_use() != Some(false)))
}

/// How many of an index's chunks have the model's vector and how many
/// lack it decide whether a search ranks statically and whether it needs
/// the model. A server asks once per change of the index, not per search:
/// on Postgres each count reads an index of the chunks.
pub use crate::store::VectorCounts;

/// What a search ranks by, worked out before the search proper so that a
/// long-running caller can do it its own way (in parallel, from memory).
#[derive(Default)]
pub struct Ranking<'a> {
    /// The index's vectors in memory, to rank by instead of asking the store.
    pub vectors: Option<&'a VectorTable>,
    /// The query's vector (`embed_query`), when the mode needs one.
    pub vector: Option<&'a [f32]>,
    /// The semantic ranking (the store's `nearest_chunks` for `vector`,
    /// in scope, as many as fusion considers), if it was already run.
    pub semantic: Option<Vec<(ChunkId, f32)>>,
    /// The lexical ranking (`lexical_ranking`), if it was already run.
    pub lexical: Option<Vec<(ChunkId, f64)>>,
    /// The static table, to rank meaning by the chunks' static vectors too
    /// (`statics`); without it chunks lacking the model's vector are not on
    /// the semantic side.
    pub statics: Option<&'a StaticModel>,
    /// The chunks' static vectors in memory (`VectorTable::load_statics`),
    /// to rank by instead of asking the store.
    pub static_vectors: Option<&'a VectorTable>,
    /// The index's generation when the sides given above were read: the
    /// hits are read only from a snapshot of the same, else the search
    /// fails with `IndexChangedMeanwhile`. None when every side is ranked
    /// within the snapshot.
    pub at_generation: Option<i64>,
}

/// The lexical side of a search on its own: chunks by BM25, best first, as
/// many as fusion considers; None when the mode does not rank by words or
/// the query has none. The request is narrowed already (`narrowed`).
/// `words`, the index's words in memory, answers instead of the store.
pub fn lexical_ranking(
    store: &dyn IndexReader,
    vectors: Option<&VectorTable>,
    words: Option<&WordTable>,
    request: &SearchRequest<'_>,
) -> Result<Option<Vec<(ChunkId, f64)>>> {
    debug_assert!(request.filter.is_empty(), "narrow the request first");
    let expression = lexical::match_expression_in(&request.words()?, request.mode);
    match expression {
        Some(expr) if request.mode != SearchMode::Semantic => {
            let limit = fusion::candidate_pool(request.k);
            Ok(Some(lexical::word_ranking(store, &expr, &request.scope, limit, vectors, words)?))
        }
        _ => Ok(None),
    }
}

/// The semantic side of a search (`Ranking::semantic`) from vectors in
/// memory: the chunks in scope nearest `vector`, as many as fusion considers.
pub fn semantic_ranking(table: &VectorTable, vector: &[f32], request: &SearchRequest<'_>) -> Vec<(ChunkId, f32)> {
    table.ranking(vector, &request.scope, fusion::candidate_pool(request.k))
}

/// That the query's vector has the size of those the index holds: a server
/// that answers for the model's name with another model left the ranking by
/// meaning empty in silence (a hybrid search lost its words too), or had
/// the index called damaged and thrown away.
fn check_query_dims(store: &dyn IndexReader, vector: &[f32], root: Option<&ProjectRoot>) -> Result<()> {
    // `--reindex` rebuilds the working tree's index, not a revision's.
    let rebuild = match root.map(|r| r.marker) {
        Some(crate::project::RootMarker::Revision) => {
            "vg-index --forget REV and then --rev REV rebuild a revision's index (a label's: --label NAME --reindex)"
        }
        _ => "vg-index --reindex rebuilds the index",
    };
    match store.dims()? {
        Some(held) if held != vector.len() => Err(anyhow!(
            "the query model gives {}-dimensional vectors but the index holds {held}-dimensional ones (another model behind the name?); {rebuild}",
            vector.len()
        )),
        _ => Ok(()),
    }
}

/// The query's vector when the mode needs one (None in lexical mode). Split
/// from the search so that a server holds its model only while embedding.
pub fn embed_query(embedder: Option<&mut dyn Embedder>, request: &SearchRequest<'_>) -> Result<Option<Vec<f32>>> {
    // The concepts' words join the query's: the chunk that says
    // `AccountBook` is then near "ledger" in meaning too, not only in words.
    let query = request.words()?;
    match (needs_embedder(request.mode), embedder) {
        (false, _) => Ok(None),
        (true, Some(e)) => {
            let mut vectors = e.embed(&[query.as_str()]).context("cannot embed the query")?;
            Ok(Some(vectors.pop().ok_or_else(|| anyhow!("cannot embed the query: no vector returned"))?))
        }
        (true, None) => Err(anyhow!("{} search needs the embedding model", request.mode)),
    }
}

/// The search itself, given what `Ranking` says was worked out already and
/// a request narrowed already (`narrowed`).
pub fn search_embedded(
    store: &dyn IndexReader,
    ranking: &mut Ranking<'_>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    debug_assert!(request.filter.is_empty(), "narrow the request first");
    let query = request.words()?;
    let mode = request.mode;
    let words = lexical::match_expression_in(&query, mode);
    if mode == SearchMode::Lexical && words.is_none() {
        return Err(anyhow!(NO_WORDS));
    }
    if needs_embedder(mode) && ranking.vector.is_none() && ranking.statics.is_none() {
        return Err(anyhow!("{mode} search needs the query's vector"));
    }
    if let Some(vector) = ranking.vector {
        check_query_dims(store, vector, None)?;
    }
    let sides = fusion::Sides {
        vector: if mode == SearchMode::Lexical { None } else { ranking.vector },
        statics: ranking
            .statics
            .filter(|_| mode != SearchMode::Lexical)
            .map(|s| statics::StaticQuery::new(s, &query, ranking.static_vectors)),
        words: if mode == SearchMode::Semantic { None } else { words },
        names: (mode == SearchMode::Hybrid).then(|| names::QueryWords::of(&query)),
    };
    // One snapshot for all the questions below, whatever a writer commits
    // meanwhile; of the state the sides given were ranked in.
    let snapshot = store.snapshot()?;
    if ranking.at_generation.is_some_and(|at| store.generation().is_ok_and(|now| now != at)) {
        snapshot.finish()?;
        return Err(IndexChangedMeanwhile.into());
    }
    let mut hits = per_file_hits(store, ranking, &sides, request)?;
    snapshot.finish()?;
    if !request.expansion.is_empty() {
        for hit in &mut hits {
            hit.concepts = request.expansion.mentioned_in(&hit.text);
            hit.why.concepts = hit.concepts.clone();
        }
    }
    Ok(hits)
}

/// The most candidates each side draws for a search with at most
/// `per_file` hits of a file.
const MOST_DRAWN_PER_FILE: usize = 6400;

/// The hits of the candidates drawn for `request`: with at most `per_file`
/// of a file, a draw that gives fewer than `k`, passing over candidates of
/// files full already, while a side had more to give, is made again eight
/// times as large (up to `MOST_DRAWN_PER_FILE`),
/// since one file of hundreds of chunks alike can fill each side's pool
/// (`-m 1 -k 10` gave one result).
fn per_file_hits(
    store: &dyn IndexReader,
    ranking: &mut Ranking<'_>,
    sides: &fusion::Sides<'_>,
    request: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    let mut pool = fusion::candidate_pool(request.k);
    loop {
        let mut drawn = fusion::scored_candidates(store, ranking, sides, request, pool)?;
        let (hits, file_full) = join::collect_hits(store, &drawn.scored, &mut drawn.whys, request.k, request.per_file)?;
        if hits.len() < request.k && request.per_file.is_none() && drawn.scored.len() == request.k * fusion::JOIN_SPARE
        {
            return hits_past_the_joins(store, ranking, sides, request, drawn);
        }
        // Short of k because files were full, not because the threshold
        // cut the rest: deeper candidates may be other files'.
        let draw_again = file_full && drawn.cut_short && pool < MOST_DRAWN_PER_FILE;
        if hits.len() >= request.k || !draw_again {
            return Ok(hits);
        }
        pool = pool.saturating_mul(8).min(MOST_DRAWN_PER_FILE);
        // A side ranked before the search drew the first pool alone.
        (ranking.semantic, ranking.lexical) = (None, None);
    }
}

/// How many times as many candidates a search short of `k` results draws
/// when joins took the places of those it had (`hits_past_the_joins`),
/// each time again, up to `WIDEST_DRAW` times.
const WIDER_DRAW: usize = 8;
const WIDEST_DRAW: usize = 512;

/// The hits of `drawn`, every candidate the threshold kept, that joins and
/// the pieces of a long line left short of `k` (audit 237: one 21 KB line
/// took `-k 10 --threshold -1` to 2 results where 8 places passed): the
/// candidates after them, from a draw `WIDER_DRAW` times as wide, follow
/// them in its order, and the hits are collected again; while still short
/// and the draw was cut, wider again (review 238: 602 pieces of one line).
/// Those of the first draw keep their order: only places it had no
/// candidate for are added.
fn hits_past_the_joins(
    store: &dyn IndexReader,
    ranking: &mut Ranking<'_>,
    sides: &fusion::Sides<'_>,
    request: &SearchRequest<'_>,
    mut drawn: fusion::Drawn,
) -> Result<Vec<Hit>> {
    let mut seen: HashSet<ChunkId> = drawn.scored.iter().map(|s| s.id).collect();
    let mut widened = WIDER_DRAW;
    loop {
        let wider = SearchRequest { k: request.k.saturating_mul(widened), ..request.clone() };
        (ranking.semantic, ranking.lexical) = (None, None);
        let more = fusion::scored_candidates(store, ranking, sides, &wider, fusion::candidate_pool(wider.k))?;
        let cut = more.scored.len() == wider.k.saturating_mul(fusion::JOIN_SPARE);
        for scored in more.scored {
            if seen.insert(scored.id) {
                if let Some(why) = more.whys.get(&scored.id) {
                    drawn.whys.insert(scored.id, why.clone());
                }
                drawn.scored.push(scored);
            }
        }
        // Each hit takes its why out of the map: a copy, kept whole for a wider round.
        let (hits, _) = join::collect_hits(store, &drawn.scored, &mut drawn.whys.clone(), request.k, None)?;
        if hits.len() >= request.k || !cut || widened >= WIDEST_DRAW {
            return Ok(hits);
        }
        widened *= WIDER_DRAW;
    }
}

/// The hits of a search for `query` with the words each matched added to
/// why it ranked (`Why::matched_words`): looked up only for a reader of the
/// reasons, since it costs a search about a millisecond.
pub fn explain(query: &str, hits: &mut [Hit]) {
    let terms = lexical::expression_words(query);
    for hit in hits {
        hit.why.matched_words = matched_words(&terms, &hit.text, &hit.file);
    }
}

/// The full-text expression for `query` that a search in `mode` matches
/// words with; None when it has no word worth matching.
pub fn word_expression(query: &str, mode: SearchMode) -> Option<String> {
    lexical::match_expression_in(query, mode)
}

/// Why a lexical search of a query no indexed word is in cannot be run.
pub const NO_WORDS: &str =
    "the query has no words to match in lexical mode: only punctuation, numbers or single letters, which are not indexed";

/// `check_query_in` for a query searched with its concepts' words
/// (`expansion`): the question alone is held to the length, and the words
/// of both may give a lexical search its words, as a search counts them.
pub fn check_query_with<'q>(query: &'q str, expansion: &Expansion, mode: SearchMode) -> Result<&'q str> {
    let query = check_query(query)?;
    if mode == SearchMode::Lexical && word_expression(&with_concept_words(query, expansion), mode).is_none() {
        return Err(anyhow!(NO_WORDS));
    }
    Ok(query)
}

/// `query` and the words its concepts (`expansion`) add: what every side
/// of a search looks for.
fn with_concept_words(query: &str, expansion: &Expansion) -> String {
    if expansion.is_empty() {
        query.to_string()
    } else {
        format!("{query} {}", expansion.words())
    }
}

/// Refuse a query a search in `mode` cannot run: `check_query`'s
/// refusals, and in lexical mode a query with no indexed word.
pub fn check_query_in(query: &str, mode: SearchMode) -> Result<&str> {
    let query = check_query(query)?;
    if mode == SearchMode::Lexical && word_expression(query, mode).is_none() {
        return Err(anyhow!(NO_WORDS));
    }
    Ok(query)
}

/// The parts of a query's words that say what it is about, lowercased, in
/// order: what the word side matches, without the words every question has.
pub fn query_words(query: &str) -> Vec<String> {
    lexical::content_words(query)
}

/// Longest query accepted, in bytes; the model sees at most 256 tokens anyway.
pub const MAX_QUERY_BYTES: usize = 4096;

/// Most results a search on a server (vg-serve, vg-mcp) may ask for.
pub const MAX_K: usize = 1000;

/// What a server says as it starts when the config's `top_k` is more than
/// a search of it returns (`MAX_K`): a search without `k` was cut to it
/// in silence.
pub fn capped_top_k_note(top_k: usize) -> Option<String> {
    (top_k > MAX_K)
        .then(|| format!("top_k = {top_k} is more than a server returns: a search without k returns at most {MAX_K}"))
}

/// Reject queries that cannot mean anything to the model.
pub fn check_query(query: &str) -> Result<&str> {
    let trimmed = query.trim();
    if trimmed.chars().all(is_invisible) {
        return Err(anyhow!("the query is empty"));
    }
    if trimmed.len() > MAX_QUERY_BYTES {
        return Err(anyhow!("the query is {} bytes; the limit is {MAX_QUERY_BYTES}", trimmed.len()));
    }
    Ok(trimmed)
}

/// A character that shows nothing and means nothing to a search: spaces,
/// controls, and the zero-width and direction marks (U+200B, U+FEFF, ...)
/// that a copy from a web page or a terminal brings along.
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '\u{ad}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}')
        || matches!(c, '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A concept adds to a query as much as a query may hold.
    #[test]
    fn a_concepts_words_are_bounded_as_a_query_is() {
        assert_eq!(crate::concepts::MAX_EXPANSION_BYTES, MAX_QUERY_BYTES);
    }

    #[test]
    fn the_model_embeds_a_query_for_meaning_unless_static_vectors_rank_every_chunk() {
        let sides = |vectors, unembedded, mode, has_table| {
            MeaningSides::from_counts(VectorCounts { vectors, unembedded }, mode, has_table)
        };
        let (model, statics, both) = (
            MeaningSides { by_statics: false, by_model: true },
            MeaningSides { by_statics: true, by_model: false },
            MeaningSides { by_statics: true, by_model: true },
        );
        assert_eq!(sides(0, 5, SearchMode::Hybrid, true), statics, "a static index, a static table");
        assert_eq!(sides(0, 5, SearchMode::Hybrid, false), model, "no table to rank by");
        assert_eq!(sides(3, 2, SearchMode::Semantic, true), both, "the vectors a fill stored rank too");
        assert_eq!(sides(5, 0, SearchMode::Hybrid, true), model, "a full index");
        assert_eq!(sides(3, 2, SearchMode::Lexical, true), MeaningSides::default(), "words need no vector");
    }

    /// An audit's loop (a file rewritten between two texts while searched)
    /// got, one search in a few hundred, hits of the other text: the chunk
    /// ids ranked before a writer's commit named its new chunks after it.
    #[test]
    fn sides_ranked_before_a_change_are_ranked_again_in_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::project::ProjectRoot {
            path: dir.path().into(),
            marker: crate::project::RootMarker::None,
            shared: None,
        };
        let mut store = crate::store::open_for_writing(&root, &mut |_| {}).unwrap();
        store.reset(&crate::store::IndexMeta::for_tests()).unwrap();
        let file = |text: &str| {
            crate::store::FileWrite::of_texts("hot.py", &[text.to_string()], Some(&[1.0; crate::embed::DIMS]))
        };
        store.write_batch(&[file("alphaword handles the request")], &[], &[]).unwrap();
        let request = SearchRequest {
            query: "alphaword",
            mode: SearchMode::Lexical,
            scope: Scope::default(),
            k: 10,
            threshold: Threshold::default_at(0.0),
            filter: Default::default(),
            expansion: Default::default(),
            per_file: None,
        };
        let reader = store.as_reader();
        let at_generation = Some(reader.generation().unwrap());
        let lexical = lexical_ranking(reader, None, None, &request).unwrap();
        assert_eq!(lexical.as_ref().map(Vec::len), Some(1));
        store.write_batch(&[file("betaword handles the request")], &[], &[]).unwrap();
        let reader = store.as_reader();
        let mut ranked = Ranking { lexical, at_generation, ..Ranking::default() };
        let error = search_embedded(reader, &mut ranked, &request).unwrap_err();
        assert!(error.is::<IndexChangedMeanwhile>(), "{error}");
        let hits = ranked_again_in_one_snapshot(error, reader, &ranked, &request).unwrap();
        assert!(hits.is_empty(), "betaword's chunk is no hit for alphaword: {hits:?}");
    }
}
