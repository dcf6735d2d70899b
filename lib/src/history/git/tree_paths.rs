//! A tree's entries with their full paths, each name checked on its own:
//! a tree made by hand may name an entry `src/x.py` or `..`, which no
//! checkout holds. gix's recorder takes a path apart at its last `/`, so
//! such a name moved every later entry under another directory, or (`..`)
//! dropped them (audit 214).

use std::collections::VecDeque;

use gix::bstr::{BStr, BString, ByteVec};
use gix::traverse::tree::recorder::Entry;
use gix::traverse::tree::{visit::Action, Visit};

/// The entries of a tree under names a checkout could hold, and the paths
/// of those it could not (their subtrees not walked).
#[derive(Default)]
pub(super) struct CheckedEntries {
    pub entries: Vec<Entry>,
    /// Each refused entry's directory (its path in the tree) and name.
    pub refused: Vec<(BString, BString)>,
}

/// Whether `name`, one entry's, is one git would check out: no `/` or NUL,
/// not empty, `.` or `..`, and not `.git` in any case (a case-blind disk
/// takes `.GIT` for it).
pub(super) fn is_checkout_name(name: &[u8]) -> bool {
    !(name.is_empty()
        || name == b"."
        || name == b".."
        || name.eq_ignore_ascii_case(b".git")
        || name.contains(&b'/')
        || name.contains(&0))
}

/// The entries of `tree`, breadth first, as gix's recorder gives them but
/// for the names checked.
pub(super) fn checked_entries(tree: &gix::Tree<'_>) -> gix::Result<CheckedEntries> {
    let mut delegate = Delegate::default();
    tree.traverse().breadthfirst(&mut delegate)?;
    Ok(delegate.out)
}

/// The path of the entry a tree walk or diff is at, kept by the length
/// each name added (never taken apart at a `/`), with whether every name
/// in it is one a checkout holds; and the paths of the trees queued for
/// later, as gix's visitors ask them to be kept.
pub(super) struct TrackedPath {
    path: BString,
    checkout: bool,
    pushed: Vec<(usize, bool)>,
    queued: VecDeque<(BString, bool)>,
}

impl Default for TrackedPath {
    fn default() -> Self {
        TrackedPath { path: BString::default(), checkout: true, pushed: Vec::new(), queued: VecDeque::new() }
    }
}

impl TrackedPath {
    pub(super) fn path(&self) -> &BString {
        &self.path
    }

    /// Whether a checkout could hold every name of the path.
    pub(super) fn checkout(&self) -> bool {
        self.checkout
    }

    /// The path before its last name: the directory of the entry at it.
    pub(super) fn dir(&self) -> &[u8] {
        self.pushed.last().map_or(&self.path[..0], |&(length, _)| &self.path[..length])
    }

    pub(super) fn push(&mut self, name: &BStr) {
        self.pushed.push((self.path.len(), self.checkout));
        if !self.path.is_empty() {
            self.path.push(b'/');
        }
        self.path.push_str(name);
        self.checkout &= is_checkout_name(name);
    }

    pub(super) fn pop(&mut self) {
        if let Some((length, checkout)) = self.pushed.pop() {
            self.path.truncate(length);
            self.checkout = checkout;
        }
    }

    /// Push `name` and keep the path for a tree to walk later.
    pub(super) fn push_queued(&mut self, name: &BStr) {
        self.push(name);
        self.queued.push_back((self.path.clone(), self.checkout));
    }

    /// Go on at the first (or last) path queued.
    pub(super) fn take_queued(&mut self, first: bool) {
        let taken = if first { self.queued.pop_front() } else { self.queued.pop_back() };
        (self.path, self.checkout) = taken.unwrap_or_default();
        self.pushed.clear();
    }
}

#[derive(Default)]
struct Delegate {
    path: TrackedPath,
    out: CheckedEntries,
}

impl Delegate {
    /// Keep the entry under its path, or refuse it: `Continue(false)` for
    /// a tree keeps the walk out of it, so every path kept holds names a
    /// checkout could.
    fn record(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        if !is_checkout_name(entry.filename) {
            self.out.refused.push((self.path.dir().into(), entry.filename.into()));
            return std::ops::ControlFlow::Continue(false);
        }
        let filepath = self.path.path().clone();
        self.out.entries.push(Entry { mode: entry.mode, filepath, oid: entry.oid.to_owned() });
        std::ops::ControlFlow::Continue(true)
    }
}

impl Visit for Delegate {
    fn pop_back_tracked_path_and_set_current(&mut self) {
        self.path.take_queued(false);
    }

    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.path.take_queued(true);
    }

    fn push_back_tracked_path_component(&mut self, component: &BStr) {
        self.path.push_queued(component);
    }

    fn push_path_component(&mut self, component: &BStr) {
        self.path.push(component);
    }

    fn pop_path_component(&mut self) {
        self.path.pop();
    }

    fn visit_tree(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        self.record(entry)
    }

    fn visit_nontree(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        self.record(entry)
    }
}

#[cfg(test)]
mod tests {
    use gix::bstr::ByteSlice;

    use super::*;

    #[test]
    fn only_names_a_checkout_could_hold_are_names() {
        for plain in [&b"a.rs"[..], b".github", b"a..b", b".gitignore", b"..."] {
            assert!(is_checkout_name(plain), "{}", plain.as_bstr());
        }
        for crafted in [&b".."[..], b".", b"", b"src/x.py", b"../x", b".GIT", b"a\0b"] {
            assert!(!is_checkout_name(crafted), "{}", crafted.as_bstr());
        }
    }
}
