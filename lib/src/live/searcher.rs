//! Searches over a live index from any number of threads: each brings its
//! own connection to the index; the query model and the vectors in memory
//! are shared.

use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};

use super::filled::Filled;
use super::held::Held;
use super::{lock, LiveIndex, StoreSlot};
use crate::concepts::{Expansion, LiveConcepts};
use crate::embed::{LazyEmbedder, StaticModel};
use crate::project::{ProjectRoot, SearchMode, Threshold};
use crate::search::{self, Hit, MeaningSides, SearchRequest, VectorCounts, VectorTable, WordTable};
use crate::store::{self, IndexReader};

/// Why a search found no index after the server's runs had made one: it
/// was removed since, and a run is making it again (audit 252: a 500 that
/// said "run vg-index first" to a client whose server was about to).
#[derive(Debug, thiserror::Error)]
#[error("the index was removed since the last run: this server is making it again; retry in a moment")]
pub struct IndexRemoved;

/// What a search found, and what to know about how.
#[derive(Debug)]
pub struct Searched {
    pub hits: Vec<Hit>,
    /// Why the ranking is not the one asked for, or None.
    pub note: Option<String>,
}

/// The query model could not be loaded or could not embed the query.
#[derive(Debug, thiserror::Error)]
#[error("the query model is unavailable: {0:#}")]
struct ModelUnavailable(anyhow::Error);

/// Searches over a live index, shared by any number of threads; each
/// thread passes its own store slot (its own connection to the index).
pub struct Searcher {
    live: Arc<LiveIndex>,
    embedder: Mutex<LazyEmbedder>,
    /// The index's vectors in memory, reloaded when the index changes.
    vectors: Mutex<Option<Arc<VectorTable>>>,
    /// The model's vectors stored so far, in memory through a fill, caught
    /// up with each batch it stores.
    filled: Mutex<Option<Filled>>,
    /// The index's words in memory, read again in the background when the
    /// index changes.
    words: Arc<Mutex<Held<WordTable>>>,
    /// The chunks' static vectors in memory while searches rank by them (a
    /// static index, a fill under way), read again in the background when
    /// the words change; a fill leaves them as they are.
    statics: Arc<Mutex<Held<VectorTable>>>,
    /// The project's concepts, read again when their files change.
    concepts: Mutex<LiveConcepts>,
    /// How many chunks have and lack the model's vector, with the index
    /// generation they were counted at.
    counts: Mutex<Option<(i64, VectorCounts)>>,
}

/// `search` of `request`, but when a hybrid search cannot have the query
/// model (a server that does not answer), the hits by words alone with a
/// note saying so, rather than a failure: a server's clients keep getting
/// answers while the model is away.
fn by_words_when_the_model_is_away(
    request: &SearchRequest<'_>,
    mut search: impl FnMut(&SearchRequest<'_>) -> Result<Vec<Hit>>,
) -> Result<Searched> {
    match search(request) {
        Err(e) if request.mode == SearchMode::Hybrid && e.is::<ModelUnavailable>() => {
            // A cosine's threshold means nothing to words: every match is kept.
            let by_words =
                SearchRequest { mode: SearchMode::Lexical, threshold: Threshold::default_at(0.0), ..request.clone() };
            let note =
                format!("{}; these results are ranked by their words alone", crate::project::shown::error_line(&e));
            Ok(Searched { hits: search(&by_words)?, note: Some(note) })
        }
        other => other.map(|hits| Searched { hits, note: None }),
    }
}

impl Searcher {
    pub fn new(live: Arc<LiveIndex>, embedder: LazyEmbedder) -> Self {
        Searcher {
            live,
            embedder: Mutex::new(embedder),
            vectors: Mutex::new(None),
            filled: Mutex::new(None),
            words: Arc::default(),
            statics: Arc::default(),
            concepts: Mutex::default(),
            counts: Mutex::default(),
        }
    }

    pub fn live(&self) -> &Arc<LiveIndex> {
        &self.live
    }

    /// Load the query model now rather than at the first search.
    pub fn load_model(&self) -> Result<()> {
        lock(&self.embedder).get().map(|_| ())
    }

    /// A search of `query` over the live index's scope.
    pub fn request<'q>(&self, query: &'q str, k: usize, threshold: Threshold, mode: SearchMode) -> SearchRequest<'q> {
        let expansion = self.expand(query);
        SearchRequest {
            query,
            mode,
            scope: self.live.scope(),
            k,
            threshold,
            filter: Default::default(),
            expansion,
            per_file: None,
        }
    }

    /// The project's concepts that `query` names, as their files stand now.
    pub fn expand(&self, query: &str) -> Expansion {
        let notes = |p: &crate::concepts::ConceptProblem| self.live.note(&p.to_string());
        lock(&self.concepts).current(&self.live.target.root, &notes).expand(query)
    }

    /// The best hits for `request`. `store` is the caller's connection,
    /// opened on first use and dropped after a failure so that the next
    /// search opens a fresh one (the index may have been rebuilt under it).
    /// Before the first index run has created the index there is nothing to
    /// find, which is not a failure.
    pub fn search(&self, store: &mut StoreSlot, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        let kept = store.is_some();
        let mut result = self.search_with(store, request);
        if result.is_err() {
            *store = None;
        }
        // A connection kept from an earlier search that the database closed
        // meanwhile (restarted): one more try on a fresh one (audit 263:
        // each kept connection failed one search with a 500, while the
        // status said ready).
        if kept && result.as_ref().is_err_and(connection_lost) {
            result = self.search_with(store, request);
            if result.is_err() {
                *store = None;
            }
        }
        result
    }

    /// As `search`, but when a hybrid search cannot have the query model (a
    /// server that does not answer), the hits by words alone with a note
    /// saying so, rather than a failure: a server's clients keep getting
    /// answers while the model is away.
    /// Results from an index the last run failed to bring up to date, or
    /// that another process's run left partial, say so.
    pub fn search_noted(&self, store: &mut StoreSlot, request: &SearchRequest<'_>) -> Result<Searched> {
        let mut searched = by_words_when_the_model_is_away(request, |r| self.search(store, r))?;
        let failed = self.live.progress().error.map(|e| super::failed_run_note(&e));
        let partial = self.live.others_run(store).map(|p| p.said().to_string());
        searched.note =
            [searched.note.take(), failed, partial].into_iter().flatten().reduce(|a, b| format!("{a}. {b}"));
        Ok(searched)
    }

    /// `search_revision` as `search_noted` is `search`: a revision's hybrid
    /// search was a 500 while the model was away, where http.md promises
    /// every hybrid search an answer by words.
    pub fn search_revision_noted(&self, root: &ProjectRoot, request: &SearchRequest<'_>) -> Result<Searched> {
        by_words_when_the_model_is_away(request, |r| self.search_revision(root, r))
    }

    fn search_with(&self, store: &mut StoreSlot, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        // A query no model could take is the query's fault, said as such,
        // never taken for the model's absence (`ModelUnavailable`).
        search::check_query(request.query)?;
        match super::open_slot(store, &self.live.target.root) {
            Ok(()) => {}
            Err(_) if !self.live.progress().ran => return Ok(Vec::new()),
            // Removed since its last run made it (`vg-index --clear-cache`):
            // the server makes it again, at once, rather than at the next
            // refresh. One its runs could not make (review 255: a directory
            // it may not write) is their failure, said as that.
            Err(store::StoreError::Missing(_)) => match self.live.progress().error {
                None => {
                    self.live.request_run();
                    return Err(IndexRemoved.into());
                }
                Some(failed) => return Err(anyhow!("there is no index: the server's last run failed: {failed}")),
            },
            Err(e) => return Err(e.into()),
        }
        let store = store.as_deref().ok_or_else(|| anyhow!("no index"))?;
        // An index that came from elsewhere is searched once the first run
        // has checked it: a server on a fresh clone answered from a
        // committed index.db's own text (review 238).
        // A first run that failed checked nothing either (review 240).
        let progress = self.live.progress();
        if (!progress.ran || progress.error.is_some()) && !store.checked_here()? {
            return Ok(Vec::new());
        }
        let request = &request.clone().narrowed(store, Some(&self.live.target.root))?;
        let generation = store.generation()?;
        let counts = self.vector_counts(store, generation)?;
        if counts.unembedded == 0 {
            // Every chunk has the model's vector now: no search ranks by them.
            Held::release(&self.statics);
        }
        // Only asked where it can matter: the embedder's lock is the query's.
        let has_table = counts.unembedded > 0 && lock(&self.embedder).has_statics();
        let sides = MeaningSides::from_counts(counts, request.mode, has_table);
        let statics = self.statics_for(sides)?;
        let needs_model = sides.by_model;
        if needs_model {
            self.check_vectors_model(store)?;
        }
        // While chunks still lack the model's vector a fill is under way:
        // the vectors it stored so far are held apart (`Filled`), caught up
        // with each batch, and rank the model's side of the search alone;
        // `vectors` is the whole index's, which places every chunk.
        // First, so that a fill's vectors are let go before the whole
        // index's are read, not held beside them.
        let filled = self.filled_vectors(store, needs_model && statics.is_some())?;
        let vectors =
            if needs_model && statics.is_none() { Some(self.current_vectors(store, generation)?) } else { None };
        let word_generation = store.word_generation()?;
        let words = match request.mode {
            SearchMode::Semantic => None,
            _ => Held::current(&self.words, word_generation, &self.live),
        };
        let static_vectors = statics.as_ref().and_then(|_| Held::current(&self.statics, word_generation, &self.live));
        // The query is embedded while the word index is searched: they take
        // about as long as each other, and together most of a search. With
        // the query model on one thread, each has a core (tokio: 4.2 ms
        // per /search instead of 5.8 ms, bench/perf.sh).
        let (vector, lexical) = std::thread::scope(|s| {
            let embedding = needs_model.then(|| {
                s.spawn(|| {
                    let mut embedder = lock(&self.embedder);
                    let embedded = search::embed_query(Some(embedder.get()?), request);
                    if let Err(e) = &embedded {
                        embedder.failed(e);
                    }
                    embedded
                })
            });
            let lexical = search::lexical_ranking(store, vectors.as_deref(), words.as_deref(), request);
            let vector = match embedding {
                Some(handle) => handle.join().unwrap_or_else(|_| Err(anyhow!("embedding the query panicked"))),
                None => Ok(None),
            };
            (vector, lexical)
        });
        let (vector, lexical) = (vector.map_err(|e| anyhow::Error::new(ModelUnavailable(e)))?, lexical?);
        let semantic = filled.as_deref().zip(vector.as_deref()).map(|(t, v)| search::semantic_ranking(t, v, request));
        let mut ranking = search::Ranking {
            vectors: vectors.as_deref(),
            vector: vector.as_deref(),
            semantic,
            lexical,
            statics: statics.as_deref(),
            static_vectors: static_vectors.as_deref(),
            at_generation: Some(generation),
        };
        search::search_embedded(store, &mut ranking, request)
            .or_else(|e| search::ranked_again_in_one_snapshot(e, store, &ranking, request))
    }

    /// The static table, when it ranks some of a search's chunks (those
    /// lacking the model's vector, after a static run or during a fill).
    fn statics_for(&self, sides: MeaningSides) -> Result<Option<Arc<StaticModel>>> {
        match sides.by_statics {
            true => lock(&self.embedder).statics(),
            false => Ok(None),
        }
    }

    /// The best hits for `request` in the index of a git revision
    /// (`store::revision_root`), which no live run changes: read from its
    /// store, with the warm query model.
    pub fn search_revision(&self, root: &ProjectRoot, request: &SearchRequest<'_>) -> Result<Vec<Hit>> {
        let store = store::open_for_reading(root)?;
        let has_table = lock(&self.embedder).has_statics();
        let sides = MeaningSides::of(&*store, request.mode, has_table)?;
        let statics = self.statics_for(sides)?;
        let mut embedder = lock(&self.embedder);
        let model = match sides.by_model {
            true => Some(embedder.get().map_err(|e| anyhow::Error::new(ModelUnavailable(e)))?),
            false => None,
        };
        let searched = search::search_index(root, &*store, model, statics.as_deref(), sides, request);
        // A server that did not answer is not asked again a while, by these
        // searches or the working tree's (`LazyEmbedder::failed`).
        match searched {
            Err(e) if e.downcast_ref::<crate::embed::ServerAway>().is_some() => {
                embedder.failed(&e);
                Err(ModelUnavailable(e).into())
            }
            searched => searched,
        }
    }

    /// The vectors of the index as it is now: those in memory if the index
    /// has not changed since they were read, otherwise read again (once, by
    /// the first search that notices).
    fn current_vectors(&self, store: &dyn IndexReader, generation: i64) -> Result<Arc<VectorTable>> {
        let mut cached = lock(&self.vectors);
        if let Some(table) = cached.as_ref().filter(|t| t.generation == generation) {
            return Ok(Arc::clone(table));
        }
        let table = Arc::new(VectorTable::load(store)?);
        *cached = Some(Arc::clone(&table));
        Ok(table)
    }

    /// The index's vectors are the served model's: a one-shot run given
    /// another `embedder_model` rebuilds the index under the server, whose
    /// queries, embedded by its own model, then ranked against the other's
    /// vectors (cosines that mean nothing) until its next refresh rebuilt
    /// the index again. Meanwhile the model is as good as unavailable: a
    /// hybrid search answers by words, with a note (`search_noted`).
    fn check_vectors_model(&self, store: &dyn IndexReader) -> Result<()> {
        let served = &self.live.target.config.embedder_model;
        match store.meta_value("model")? {
            Some(built) if &built != served => Err(ModelUnavailable(anyhow!(
                "the index was rebuilt with {built} by another run, and this server embeds with {served}; its next refresh rebuilds it"
            ))
            .into()),
            _ => Ok(()),
        }
    }

    /// The index's `VectorCounts` at `generation` (read before them): those
    /// held if they are of it, otherwise counted again. A count read after
    /// a later write is held under an older generation, which no later
    /// search asks for.
    fn vector_counts(&self, store: &dyn IndexReader, generation: i64) -> Result<VectorCounts> {
        let mut held = lock(&self.counts);
        match *held {
            Some((at, counts)) if at == generation => Ok(counts),
            _ => {
                let counts = store.vector_counts()?;
                *held = Some((generation, counts));
                Ok(counts)
            }
        }
    }

    /// The model's vectors stored so far when a fill is under way
    /// (`filling`), brought up to the index as it is now; otherwise None,
    /// and those held are let go.
    fn filled_vectors(&self, store: &dyn IndexReader, filling: bool) -> Result<Option<Arc<VectorTable>>> {
        let mut held = lock(&self.filled);
        if !filling {
            *held = None;
            return Ok(None);
        }
        let filled = Filled::current(held.take(), store)?;
        let table = Arc::clone(&filled.table);
        *held = Some(filled);
        Ok(Some(table))
    }

    /// Whether searches rank words from memory, with the index as it is now.
    pub fn words_in_memory(&self, store: &dyn IndexReader) -> bool {
        store.word_generation().is_ok_and(|generation| Held::is_at(&self.words, generation))
    }

    /// How the live index stands (`LiveIndex::status`), and whether its
    /// words are in memory.
    pub fn status(&self, store: &mut StoreSlot) -> super::LiveStatus {
        let mut status = self.live.status(store);
        status.words_in_memory = store.as_deref().is_some_and(|s| self.words_in_memory(s));
        status
    }
}

/// Whether `error` came of a store connection closed under it.
fn connection_lost(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.downcast_ref::<store::StoreError>().is_some_and(store::StoreError::is_connection_lost))
}
