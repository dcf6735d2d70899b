//! A tree's entries with their full paths, each name checked on its own:
//! a tree made by hand may name an entry `src/x.py` or `..`, which no
//! checkout holds. gix's recorder takes a path apart at its last `/`, so
//! such a name moved every later entry under another directory, or (`..`)
//! dropped them (audit 214).

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

/// The path kept by the length each component added, not by its `/`.
#[derive(Default)]
struct Delegate {
    path: BString,
    lengths: Vec<usize>,
    queued: std::collections::VecDeque<BString>,
    out: CheckedEntries,
}

impl Delegate {
    fn push(&mut self, name: &BStr) {
        self.lengths.push(self.path.len());
        if !self.path.is_empty() {
            self.path.push(b'/');
        }
        self.path.push_str(name);
    }

    /// Keep the entry under its path, or refuse it: `Continue(false)` for
    /// a tree keeps the walk out of it.
    fn record(&mut self, entry: &gix::objs::tree::EntryRef<'_>) -> Action {
        if !is_checkout_name(entry.filename) {
            let dir = self.lengths.last().map_or(&self.path[..0], |&length| &self.path[..length]);
            self.out.refused.push((dir.into(), entry.filename.into()));
            return std::ops::ControlFlow::Continue(false);
        }
        self.out.entries.push(Entry { mode: entry.mode, filepath: self.path.clone(), oid: entry.oid.to_owned() });
        std::ops::ControlFlow::Continue(true)
    }
}

impl Visit for Delegate {
    fn pop_back_tracked_path_and_set_current(&mut self) {
        self.path = self.queued.pop_back().unwrap_or_default();
        self.lengths.clear();
    }

    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.path = self.queued.pop_front().unwrap_or_default();
        self.lengths.clear();
    }

    fn push_back_tracked_path_component(&mut self, component: &BStr) {
        self.push(component);
        self.queued.push_back(self.path.clone());
    }

    fn push_path_component(&mut self, component: &BStr) {
        self.push(component);
    }

    fn pop_path_component(&mut self) {
        if let Some(length) = self.lengths.pop() {
            self.path.truncate(length);
        }
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
