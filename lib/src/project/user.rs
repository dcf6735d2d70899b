//! Who this process is to the file system: what reading a file, or
//! trusting a marker another user put down, turns on.

use std::sync::LazyLock;

/// The user this process reads files as.
#[allow(unsafe_code)]
pub(crate) fn effective_uid() -> u32 {
    static EUID: LazyLock<u32> = LazyLock::new(|| {
        // SAFETY: geteuid takes no argument, cannot fail and touches no memory.
        unsafe { libc::geteuid() }
    });
    *EUID
}
