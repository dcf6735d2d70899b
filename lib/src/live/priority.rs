//! The background indexer's CPU priority: below the searches it serves. A
//! fill runs the model on every core for minutes; at the same priority a
//! search made meanwhile got a share of a core like the fill's threads and
//! took ~90 ms on tokio (2 cores), and ~55 ms with the fill at nice +10.

/// How much nicer than the process the indexer thread is: `nice`'s default.
pub(super) const INDEXER_NICE_STEP: i32 = 10;

/// The highest nice value Linux has.
const NICEST: i32 = 19;

/// Make the calling thread `INDEXER_NICE_STEP` nicer than it is (at most
/// 19); the threads it starts afterwards (ONNX Runtime's pool) inherit it.
/// Linux keeps a nice value per thread; elsewhere it is the process's,
/// which would slow its searches too, so nothing changes there. A refusal
/// changes nothing either: the indexer then runs as before.
pub(super) fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    // SAFETY: gettid, getpriority and setpriority take and return plain
    // integers; none touches memory of ours.
    unsafe {
        let thread = libc::gettid() as libc::id_t;
        // -1 is also a nice value: errno tells it from a failure.
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, thread);
        if now != -1 || *libc::__errno_location() == 0 {
            libc::setpriority(libc::PRIO_PROCESS, thread, (now + INDEXER_NICE_STEP).min(NICEST));
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The nice value of thread `tid` of this process, from /proc.
    fn nice_of(tid: i32) -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        // Fields after the command's closing parenthesis; nice is the 19th field.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[allow(unsafe_code)]
    fn this_thread() -> i32 {
        // SAFETY: gettid takes nothing and returns an integer.
        unsafe { libc::gettid() }
    }

    #[test]
    fn the_indexer_thread_and_the_threads_it_starts_are_nicer_and_no_other() {
        let caller = nice_of(this_thread());
        let (lowered, started) = std::thread::spawn(|| {
            lower_this_thread();
            let lowered = nice_of(this_thread());
            let started = std::thread::spawn(|| nice_of(this_thread())).join().unwrap();
            (lowered, started)
        })
        .join()
        .unwrap();
        let expected = (caller + INDEXER_NICE_STEP).min(NICEST);
        assert_eq!((lowered, started), (expected, expected));
        assert_eq!(nice_of(this_thread()), caller, "the caller keeps its priority");
    }
}
