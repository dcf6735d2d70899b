//! Waiting for a writer's lock by asking for it again and again, alike for
//! the file lock of a local index and the advisory lock of a shared one, so
//! that both wait, say so and give up the same way.

use super::StoreError;

/// Try `take` every `poll` until it takes the lock (Some), calling
/// `waiting` once when it does not at once; None once `give_up` says so
/// meanwhile. The file lock and the database's advisory lock wait alike.
pub(super) fn poll_for<T>(
    poll: std::time::Duration,
    waiting: &mut dyn FnMut(),
    give_up: &dyn Fn() -> bool,
    mut take: impl FnMut() -> Result<Option<T>, StoreError>,
) -> Result<Option<T>, StoreError> {
    let mut said = false;
    loop {
        if let Some(held) = take()? {
            return Ok(Some(held));
        }
        if !std::mem::replace(&mut said, true) {
            waiting();
        }
        if give_up() {
            return Ok(None);
        }
        std::thread::sleep(poll);
    }
}
