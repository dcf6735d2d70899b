//! `GET /search`: the parameters checked, the search run over the live
//! index (or an indexed git revision's, `rev=`, or a catalog label's,
//! `label=`), and the hit records written as NDJSON.

use anyhow::Result;

use super::http::{self, Response};
use super::{shown, Shared, StoreSlot};
use crate::history::Label;
use crate::live::Searched;
use crate::project::catalog::Catalog;
use crate::project::{RootMarker, SearchMode, Threshold};
use crate::records::HitRecord;
use crate::search;
use crate::search::MAX_K;

/// A search's parameters, checked.
struct SearchParams {
    query: String,
    k: usize,
    threshold: Threshold,
    mode: SearchMode,
    filter: search::FileFilter,
    /// The revision searched (its sha), when not the working tree.
    rev: Option<String>,
    /// The catalog label searched, when not the working trees.
    label: Option<(Catalog, Label)>,
}

/// Why a search was not run: its status (400, a parameter's fault; 500,
/// an index that could not be read) and what to say.
struct Refused(u16, String);

impl From<String> for Refused {
    fn from(message: String) -> Self {
        Refused(400, message)
    }
}

impl From<&str> for Refused {
    fn from(message: &str) -> Self {
        Refused(400, message.to_string())
    }
}

/// A revision or label that cannot be searched: not one, or not indexed,
/// is the request's fault; an index there that cannot be read is the server's.
fn index_refused(e: anyhow::Error) -> Refused {
    let unreadable = e.chain().any(|cause| {
        cause
            .downcast_ref::<crate::store::StoreError>()
            .is_some_and(|s| !matches!(s, crate::store::StoreError::Missing(_)))
    });
    Refused(if unreadable { 500 } else { 400 }, crate::project::shown::error_line(&e))
}

fn search_params(shared: &Shared, target: &http::Target) -> Result<SearchParams, Refused> {
    let config = &shared.target().config;
    let query = target.param("q").unwrap_or("").to_string();
    if query.trim().is_empty() {
        return Err("the query parameter q is missing or empty".into());
    }
    search::check_query(&query).map_err(|e| e.to_string())?;
    let k = match target.param("k") {
        None => config.top_k.min(MAX_K),
        Some(v) => match v.parse::<usize>() {
            Ok(k) if (1..=MAX_K).contains(&k) => k,
            _ => return Err(format!("k must be a whole number from 1 to {MAX_K}, got {:?}", shown(v)).into()),
        },
    };
    let mode = match target.param("mode") {
        None => config.mode,
        Some("hybrid") => SearchMode::Hybrid,
        Some("semantic") => SearchMode::Semantic,
        Some("lexical") => SearchMode::Lexical,
        Some(v) => return Err(format!("mode must be hybrid, semantic or lexical, got {:?}", shown(v)).into()),
    };
    search::check_query_in(&query, mode).map_err(|e| e.to_string())?;
    let threshold = match target.param("threshold") {
        None => config.threshold_in(mode),
        Some(v) => match v.parse::<f32>() {
            Ok(t) if t.is_finite() && (-1.0..=1.0).contains(&t) => Threshold::chosen(t),
            _ => return Err(format!("threshold must be a number from -1 to 1, got {:?}", shown(v)).into()),
        },
    };
    // A filter given empty is refused, as k= and mode= are: `rev=` searching
    // the working tree instead would answer another question.
    for name in ["changed_within", "changed_before", "size", "exclude", "rev", "label"] {
        if target.all(name).iter().any(|v| v.is_empty()) {
            return Err(format!("{name} is empty; leave it out not to filter by it").into());
        }
    }
    let filter = search::FileFilter::from_flags(
        target.param("changed_within"),
        target.param("changed_before"),
        &target.all("size"),
        &target.all("exclude"),
        std::time::SystemTime::now(),
    )?;
    if target.param("rev").is_some() && target.param("label").is_some() {
        return Err("rev and label do not go together".into());
    }
    if target.param("rev").is_some() || target.param("label").is_some() {
        filter.check_for_history()?;
    }
    let rev = match target.param("rev") {
        None => None,
        Some(spec) => Some(
            crate::history::indexed_revision(&shared.target().root, spec, &config.embedder_model)
                .map_err(index_refused)?,
        ),
    };
    let label = match target.param("label") {
        None => None,
        Some(name) => Some(label_param(shared, name)?),
    };
    Ok(SearchParams { query, k, threshold, mode, filter, rev, label })
}

/// `label=NAME`: the label of the catalog served, if its index is whole.
fn label_param(shared: &Shared, name: &str) -> Result<(Catalog, Label), Refused> {
    let target = shared.target();
    if target.root.marker != RootMarker::Catalog {
        let why = "label searches a catalog's label; this server serves no catalog (vg-serve --catalog NAME)";
        return Err(why.into());
    }
    let catalog = Catalog::read(&target.root.path).map_err(|e| Refused(500, crate::project::shown::error_line(&e)))?;
    let label = crate::history::indexed_label(&catalog, &target.root, name, &target.config.embedder_model)
        .map_err(index_refused)?;
    Ok((catalog, label))
}

pub(super) fn search_response(shared: &Shared, target: &http::Target, store: &mut StoreSlot) -> Response {
    let params = match search_params(shared, target) {
        Ok(p) => p,
        Err(Refused(status, message)) => return Response::error(status, &message),
    };
    match run_search(shared, &params, store) {
        Ok((body, note)) => {
            let response = Response { status: 200, content_type: "application/x-ndjson", headers: Vec::new(), body };
            match note {
                Some(note) => response.with_header(NOTE_HEADER, header_value(&note)),
                None => response,
            }
        }
        Err(e) => index_being_made_again(&e).unwrap_or_else(|| {
            Response::error(500, &format!("search failed: {}", crate::project::shown::error_line(&e)))
        }),
    }
}

/// `503` with `Retry-After` for a request that met no index because it was
/// removed under the server, which is making it again
/// (`live::IndexRemoved`); None for any other failure.
pub(super) fn index_being_made_again(e: &anyhow::Error) -> Option<Response> {
    e.is::<crate::live::IndexRemoved>()
        .then(|| Response::error(503, &crate::project::shown::error_line(e)).with_header("Retry-After", "1"))
}

/// The header that says why a search's ranking is not the one asked for
/// (the query model was unavailable: ranked by words alone), or why its
/// results may be partial (the last index run failed, or another process's run is under way).
const NOTE_HEADER: &str = "Vecgrep-Note";

/// `text` as a header value: printable ASCII, other characters as `?`, at
/// most 1,000 bytes.
fn header_value(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).take(1000).collect()
}

/// NDJSON hit records for a search (HttpSearchReturnsResults) with the
/// note the search left, or the failure (HttpSearchReturnsFailure).
fn run_search(shared: &Shared, params: &SearchParams, store: &mut StoreSlot) -> Result<(Vec<u8>, Option<String>)> {
    let mut request = shared.searcher.request(&params.query, params.k, params.threshold, params.mode);
    request.filter = params.filter.clone();
    let root = &shared.target().root;
    let Searched { hits, note } = match (&params.rev, &params.label) {
        (_, Some((_, label))) => shared.searcher.search_revision_noted(&label.root, &request)?,
        (Some(sha), None) => {
            shared.searcher.search_revision_noted(&crate::store::revision_root(root, sha), &request)?
        }
        (None, None) => shared.searcher.search_noted(store, &request)?,
    };
    let mut body = Vec::with_capacity(hits.len() * 512);
    for hit in hits {
        let record = match &params.label {
            Some((catalog, label)) => HitRecord::new(&label.root, hit, &params.query).placed_in_label(catalog, label),
            None => HitRecord { rev: params.rev.clone(), ..HitRecord::new(root, hit, &params.query) },
        };
        crate::records::write_record(&mut body, &record)?;
    }
    Ok((body, note))
}
