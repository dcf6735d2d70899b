//! Turns at the tools' blocking work: at most a few `search` calls, and
//! apart a few `ask` calls, run at once; the rest wait, and one cancelled
//! while it waits leaves the queue without running.

use std::future::Future;

/// The most `search` and `ask` calls at work at once. Each builds its
/// filters, ranks and reads (tens of MB at most); more wait their turn,
/// rather than hundreds of threads sharing the cores with memory growing
/// with each, as a client sending calls without waiting would have them.
pub(super) const CALLS_AT_WORK: usize = 8;

/// The most `ask` calls at work at once, apart from the searches' turns:
/// a quarter of theirs, as vg-serve gives its `/v1/ask` lane.
pub(super) const ASKS_AT_WORK: usize = CALLS_AT_WORK / 4;

/// A blocking call's result, or why the thread running it failed.
pub(super) async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f).await.map_err(|e| format!("internal error: {e}"))
}

pub(super) struct Turns(tokio::sync::Semaphore);

impl Turns {
    pub(super) fn new(at_once: usize) -> Turns {
        Turns(tokio::sync::Semaphore::new(at_once))
    }

    /// `f` on a blocking thread once a turn is free and then `ready` has
    /// resolved Ok (the answers the client has not read leave room for
    /// another); Err when `ready` does, or when `cancelled` ends first: the
    /// call was cancelled before its turn came.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        cancelled: impl Future<Output = ()>,
        ready: impl Future<Output = Result<(), String>>,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        tokio::pin!(cancelled);
        let _turn = tokio::select! {
            turn = self.0.acquire() => turn.map_err(|e| format!("internal error: {e}"))?,
            () = &mut cancelled => return Err("cancelled before its turn came".into()),
        };
        tokio::select! {
            ready = ready => ready?,
            () = &mut cancelled => return Err("cancelled before its turn came".into()),
        }
        blocking(f).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_take_turns_and_one_cancelled_while_waiting_never_runs() {
        let turns = Arc::new(Turns::new(2));
        let (at_work, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let calls: Vec<_> = (0..6)
            .map(|_| {
                let (turns, at_work, most) = (Arc::clone(&turns), Arc::clone(&at_work), Arc::clone(&most));
                tokio::spawn(async move {
                    turns
                        .run(std::future::pending(), std::future::ready(Ok(())), move || {
                            most.fetch_max(at_work.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(30));
                            at_work.fetch_sub(1, Ordering::SeqCst);
                        })
                        .await
                })
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at once, no more");
        // Every turn taken: a cancelled call leaves the queue, unrun.
        let held = turns.0.acquire_many(2).await.unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ran);
        let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        let waiting = tokio::spawn({
            let turns = Arc::clone(&turns);
            async move {
                let cancelled = async move {
                    let _ = cancelled.await;
                };
                turns.run(cancelled, std::future::ready(Ok(())), move || counted.fetch_add(1, Ordering::SeqCst)).await
            }
        });
        cancel.send(()).unwrap();
        let ended = tokio::time::timeout(std::time::Duration::from_secs(30), waiting).await;
        assert_eq!(
            ended.expect("a cancelled call still waited").unwrap(),
            Err("cancelled before its turn came".to_string())
        );
        drop(held);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }
}
