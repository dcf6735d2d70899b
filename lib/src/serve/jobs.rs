//! Index runs asked for over HTTP: `POST /v1/index/start` keeps a job in
//! the index as running and wakes the indexer, which records how it ended;
//! `GET /v1/index/status?job_id=ID` reads it back, from this server or a
//! later one. A job that was running when its server stopped reads as
//! failed, with that reason.

use serde_json::{json, Value};

use super::http::{self, Response};
use super::{shown, Shared, StoreSlot};
use crate::live::now_ms;
use crate::store::{self, IndexJob};

pub(super) const START_PATH: &str = "/v1/index/start";
pub(super) const STATUS_PATH: &str = "/v1/index/status";
/// Largest body `POST /v1/index/start` reads: it takes no fields.
pub(super) const MAX_START_BODY: usize = 64 * 1024;

/// `POST /v1/index/start` with an empty body or `{}`: 202 and the new job's id.
pub(super) fn start_response(shared: &Shared, body: &[u8]) -> Response {
    let takes_no_fields = || -> Result<(), String> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(fields)) if fields.is_empty() => Ok(()),
            Ok(Value::Object(_)) => Err("the body takes no fields: the server indexes the paths it serves".into()),
            _ => Err("the body must be empty or a JSON object, {}".into()),
        }
    };
    if let Err(message) = takes_no_fields() {
        return Response::error(400, &message);
    }
    // Its indexer runs no more: a job accepted now would never begin.
    if shared.shutdown.load(std::sync::atomic::Ordering::SeqCst) {
        return Response::error(503, "the server is stopping; start the run on a server that is not");
    }
    let job = IndexJob::running(new_job_id(), now_ms());
    let live = shared.searcher.live();
    // Said in words, as the server said it at its start (review 255: SQLite's
    // "attempt to write a readonly database").
    if let Some(why) = store::unwritable_index(&live.target.root) {
        return Response::error(500, &format!("cannot keep the job in the index: {why}"));
    }
    if let Err(e) = store::open_in_place(&live.target.root).and_then(|mut s| s.put_index_job(&job)) {
        return Response::error(500, &format!("cannot keep the job in the index: {:#}", anyhow::Error::new(e)));
    }
    live.start_job(job.id.clone());
    Response::json(202, &json!({ "status": "accepted", "job_id": job.id }))
}

/// `GET /v1/index/status?job_id=ID`: the job, or 404.
pub(super) fn status_response(shared: &Shared, target: &http::Target, store: &mut StoreSlot) -> Response {
    let Some(id) = target.param("job_id").filter(|id| !id.is_empty()) else {
        return Response::error(400, "the parameter job_id is missing or empty");
    };
    let mut found = read_job(shared, store, id);
    // A kept connection the database closed (restarted): once more on a
    // fresh one, as a search is (review 266).
    if found.as_ref().is_err_and(store::StoreError::is_connection_lost) {
        *store = None;
        found = read_job(shared, store, id);
    }
    match found {
        Ok(Some(job)) => Response::json(200, &job_json(&job)),
        Ok(None) => Response::error(404, &format!("no index job {:?}", shown(id))),
        Err(e) => {
            *store = None;
            Response::error(500, &format!("cannot read the job: {:#}", anyhow::Error::new(e)))
        }
    }
}

/// Job `id` as the index keeps it, read through `store` (opened when it
/// is not; no index yet is no job either).
fn read_job(shared: &Shared, store: &mut StoreSlot, id: &str) -> Result<Option<IndexJob>, store::StoreError> {
    let _ = crate::live::open_slot(store, &shared.target().root);
    match store.as_ref() {
        Some(s) => s.index_job(id),
        None => Ok(None),
    }
}

fn job_json(job: &IndexJob) -> Value {
    json!({
        "job_id": job.id,
        "status": job.state.as_str(),
        "started_at": rfc3339(job.started_ms),
        "finished_at": job.finished_ms.map(rfc3339),
        "files": job.files,
        "chunks": job.chunks,
        "embedded": job.embedded,
        "removed": job.removed,
        "error": job.error,
    })
}

/// A new job's id: 16 hex digits, unique to this process and moment.
fn new_job_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut seed = blake3::Hasher::new();
    seed.update(&std::process::id().to_le_bytes());
    seed.update(&NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst).to_le_bytes());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    seed.update(&now.as_nanos().to_le_bytes());
    seed.finalize().to_hex()[..16].to_string()
}

/// `ms` since the epoch as an RFC 3339 UTC time with milliseconds.
fn rfc3339(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_868_800_000), "2000-03-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_769_869_805_042), "2026-01-31T14:30:05.042Z");
        assert_eq!(rfc3339(1_709_164_800_000 - 1), "2024-02-28T23:59:59.999Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn job_ids_differ() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_job_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit())));
    }
}
