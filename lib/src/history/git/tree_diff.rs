//! The entries one tree changes against another, each path built from
//! names checked one by one (`tree_paths`). gix's own tree diff takes a
//! path apart at its last `/`, so a hand-made tree's `src/x.py` entry gave
//! the changes after it other paths; and its `diff_tree_to_tree` looks up
//! attributes, which without `.git/index` reads HEAD's tree as an index and
//! failed every vg-log run on a tree holding `.git` or `../x` (audit 214).

use anyhow::{Context, Result};
use gix::bstr::{BStr, BString};
use gix::diff::tree::{visit, Visit};
use gix::objs::tree::EntryMode;
use gix::ObjectId;

use super::tree_paths::TrackedPath;

/// One entry changed, under a path a checkout could hold.
pub(super) struct TreeChange {
    pub location: BString,
    /// Its mode and object before (None when added) and after (None when deleted).
    pub before: Option<(EntryMode, ObjectId)>,
    pub after: Option<(EntryMode, ObjectId)>,
}

impl TreeChange {
    /// The mode it has now, or had before it was deleted.
    pub(super) fn entry_mode(&self) -> EntryMode {
        self.after.or(self.before).map(|(mode, _)| mode).expect("a change has a side")
    }

    /// Whether a side of it is a file (not a link, a submodule or a tree):
    /// only a file's side has lines.
    pub(super) fn has_a_file_side(&self) -> bool {
        file_of(self.before).is_some() || file_of(self.after).is_some()
    }
}

/// The blob of a side that is a file.
fn file_of(side: Option<(EntryMode, ObjectId)>) -> Option<ObjectId> {
    side.filter(|s| s.0.is_blob()).map(|s| s.1)
}

/// The entries (not trees) that `new` changes against `old` (None: the
/// empty tree); those under a name no checkout holds are left out.
pub(super) fn tree_changes(
    repo: &gix::Repository,
    old: Option<&gix::Tree<'_>>,
    new: &gix::Tree<'_>,
) -> Result<Vec<TreeChange>> {
    let empty = repo.empty_tree();
    let old = old.unwrap_or(&empty);
    let mut delegate = Delegate::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old.data, old.id.kind()),
        gix::objs::TreeRefIter::from_bytes(&new.data, new.id.kind()),
        gix::diff::tree::State::default(),
        &repo.objects,
        &mut delegate,
    )
    .context("cannot compare the trees")?;
    Ok(delegate.changes)
}

/// The places in `changes` (in their order) of files moved unchanged:
/// each deletion of a file paired with an addition of the same content
/// (git's exact rename), both sides counted, as many pairs as each content
/// has.
pub(super) fn exact_moves<'c>(changes: impl Iterator<Item = &'c TreeChange>) -> std::collections::HashSet<usize> {
    use std::collections::HashMap;
    let mut deleted: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    let mut added: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    for (at, change) in changes.enumerate() {
        match (file_of(change.before), file_of(change.after), change.before.is_none(), change.after.is_none()) {
            (Some(id), None, _, true) => deleted.entry(id).or_default().push(at),
            (None, Some(id), true, _) => added.entry(id).or_default().push(at),
            _ => {}
        }
    }
    let mut moved = std::collections::HashSet::new();
    for (id, from) in deleted {
        let Some(to) = added.get(&id) else { continue };
        for (a, b) in from.into_iter().zip(to.iter().copied()) {
            moved.extend([a, b]);
        }
    }
    moved
}

#[derive(Default)]
struct Delegate {
    path: TrackedPath,
    changes: Vec<TreeChange>,
}

impl Visit for Delegate {
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

    fn visit(&mut self, change: visit::Change) -> visit::Action {
        use visit::Change as C;
        let (before, after) = match change {
            C::Addition { entry_mode, oid, .. } => (None, Some((entry_mode, oid))),
            C::Deletion { entry_mode, oid, .. } => (Some((entry_mode, oid)), None),
            C::Modification { previous_entry_mode, previous_oid, entry_mode, oid } => {
                (Some((previous_entry_mode, previous_oid)), Some((entry_mode, oid)))
            }
        };
        let change = TreeChange { location: self.path.path().clone(), before, after };
        if self.path.checkout() && !change.entry_mode().is_tree() {
            self.changes.push(change);
        }
        std::ops::ControlFlow::Continue(())
    }
}
