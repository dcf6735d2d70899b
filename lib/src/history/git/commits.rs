//! HEAD's history, and each commit as the log stores it: message,
//! author, date, touched paths and the pieces of its diff.

use anyhow::{anyhow, Context, Result};
use gix::bstr::ByteSlice;

use super::super::diff::{changed_pieces, DiffPiece};
use super::checkout::is_checkout_path;
use super::resolve::missing_object;
use super::tree_diff::TreeChange;
use super::{CommitData, GitRepo, MAX_PIECES_PER_COMMIT};
use crate::store::CommitRow;

/// A blob larger than this is left out of a commit's diff (a data file, a bundle).
const MAX_DIFFED_BLOB: usize = 1 << 20;

/// A commit message is read to its first 64 KiB: the model reads its first
/// 256 tokens, and a search's words lie far within it. Read whole, a 30 MB
/// message (a pack of 89 KB, any clone may hold one) cost 2.9 GB of memory
/// to store and embed (audit 188).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// What a commit changed: the paths, and the diff pieces when asked for.
struct Changes {
    paths: Vec<String>,
    pieces: Vec<DiffPiece>,
    unread_diffs: usize,
}

/// One side of a changed file, as a diff sees it.
enum BlobText {
    Text(String),
    /// Binary, too large or not UTF-8: left out of diffs by design.
    Unfit,
    /// Not in the object database, or unreadable there.
    Unread,
}

/// The text encoding a commit's `encoding` header names (git writes one
/// when `i18n.commitEncoding` is not UTF-8); None for UTF-8 or a name
/// nobody knows, whose text is then read as UTF-8, bad bytes replaced.
fn encoding_named(label: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    encoding_rs::Encoding::for_label(label.trim()).filter(|e| *e != encoding_rs::UTF_8)
}

/// A commit's bytes as text, in the commit's own encoding.
fn decoded(bytes: &[u8], encoding: Option<&'static encoding_rs::Encoding>) -> String {
    match encoding {
        Some(encoding) => encoding.decode_without_bom_handling(bytes).0.into_owned(),
        None => bytes.to_str_lossy().into_owned(),
    }
}

/// A message's subject and body as git reads them (`%s`, `%b`): the
/// blank lines (empty, or of whitespace alone) it may begin with skipped,
/// its first paragraph, lines joined by spaces; then what follows the blank
/// line that ends it. gix's split left a subject empty after a blank first
/// line, and ran on past a line of spaces.
fn subject_and_body(message: &[u8]) -> (Vec<u8>, &[u8]) {
    let blank = |line: &[u8]| line.iter().all(u8::is_ascii_whitespace);
    let line_end = |from: usize| message[from..].iter().position(|&b| b == b'\n').map_or(message.len(), |i| from + i);
    let mut at = 0;
    while at < message.len() && blank(&message[at..line_end(at)]) {
        at = line_end(at) + 1;
    }
    let mut subject = Vec::new();
    while at < message.len() && !blank(&message[at..line_end(at)]) {
        if !subject.is_empty() {
            subject.push(b' ');
        }
        subject.extend_from_slice(message[at..line_end(at)].trim_ascii());
        at = line_end(at) + 1;
    }
    (subject, &message[at.min(message.len())..])
}

impl GitRepo {
    /// The commits reachable from HEAD, newest first (by commit time), at most `limit`.
    pub fn head_history(&self, limit: Option<usize>) -> Result<Vec<String>> {
        let head = match self.repo.head_id() {
            Ok(id) => id,
            Err(_) if self.repo.head().is_ok_and(|h| h.is_unborn()) => return Ok(Vec::new()),
            Err(e) => return Err(anyhow!("cannot read HEAD: {e}")),
        };
        let walk = match head.ancestors().sorting(gix::revision::walk::Sorting::ByCommitTime(Default::default())).all()
        {
            Ok(walk) => walk,
            // HEAD itself may be a commit gix's parser refuses.
            Err(_) => return self.history_loosely(head.detach(), limit),
        };
        let mut shas = Vec::new();
        for info in walk {
            match info {
                Ok(info) => shas.push(info.id.to_string()),
                // A commit gix's parser refuses: walked again, read as git reads it.
                Err(_) => return self.history_loosely(head.detach(), limit),
            }
            if limit.is_some_and(|l| shas.len() >= l) {
                break;
            }
        }
        Ok(shas)
    }

    /// The commits reachable from `head`, newest first by commit time, as
    /// [`GitRepo::head_history`] lists them, each read leniently
    /// ([`super::super::loose`]): slower than gix's walk, for histories it refuses.
    fn history_loosely(&self, head: gix::ObjectId, limit: Option<usize>) -> Result<Vec<String>> {
        let read = |id: gix::ObjectId| -> Result<(i64, Vec<gix::ObjectId>)> {
            let object = self.repo.find_object(id).map_err(|e| anyhow!("cannot walk the history at {id}: {e}"))?;
            let commit = super::super::loose::parse(&object.data);
            Ok((commit.time.seconds, commit.parents))
        };
        let mut queue = std::collections::BinaryHeap::new();
        let mut seen = std::collections::HashSet::from([head]);
        let (time, parents) = read(head)?;
        queue.push((time, head, parents));
        let mut shas = Vec::new();
        while let Some((_, id, parents)) = queue.pop() {
            shas.push(id.to_string());
            if limit.is_some_and(|l| shas.len() >= l) {
                break;
            }
            // A shallow clone's boundary commits name parents it does not have.
            for parent in parents.into_iter().filter(|p| self.repo.has_object(p)) {
                if seen.insert(parent) {
                    let (time, grandparents) = read(parent)?;
                    queue.push((time, parent, grandparents));
                }
            }
        }
        Ok(shas)
    }

    /// A shallow clone's boundary: the commits whose parents it lacks (none
    /// for a whole clone).
    pub fn shallow_boundary(&self) -> Vec<String> {
        match self.repo.shallow_commits() {
            Ok(Some(commits)) => commits.iter().map(|id| id.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    /// One commit, with the pieces of its diff when `with_diff` (merges have none).
    pub fn read_commit(&self, sha: &str, with_diff: bool) -> Result<CommitData> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let encoding = commit.decode().ok().and_then(|c| c.encoding.and_then(|e| encoding_named(e)));
        let text = |bytes: &[u8]| decoded(bytes, encoding);
        let parsed = commit.message_raw().ok().zip(commit.author().ok());
        let parsed = parsed.and_then(|(message, author)| Some((message, author, author.time().ok()?)));
        let (message, author, time) = match parsed {
            Some((message, author, time)) => (message, (author.name, author.email), time),
            // A commit gix's parser refuses (an author without an email, a
            // date past i64's seconds), read as git log reads it.
            None => {
                let loose = super::super::loose::parse(&commit.data);
                let time = loose.author.time.unwrap_or(loose.time);
                (loose.message.as_bstr(), (loose.author.name.as_bstr(), loose.author.email.as_bstr()), time)
            }
        };
        let cut = message.len() > MAX_MESSAGE_BYTES;
        let message = &message[..message.len().min(MAX_MESSAGE_BYTES)];
        let (subject, body) = subject_and_body(message);
        let (mut subject, mut body) = (text(&subject).trim().to_string(), text(body).trim().to_string());
        if cut {
            // The cut may end inside a character, read as U+FFFD: not the message's.
            let last = if body.is_empty() { &mut subject } else { &mut body };
            last.truncate(last.trim_end_matches('\u{fffd}').len());
        }
        let parents: Vec<gix::ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        let mut changes = self.changes(&commit, parents.first().copied(), with_diff && parents.len() < 2)?;
        // A merge touched a path only where it differs from every parent, as
        // `git log -- PATH` counts it: what one side brought is that side's change.
        for parent in parents.iter().skip(1) {
            let against: std::collections::HashSet<String> =
                self.changes(&commit, Some(*parent), false)?.paths.into_iter().collect();
            changes.paths.retain(|p| against.contains(p));
        }
        let commit = CommitRow {
            sha: sha.to_string(),
            time: time.seconds,
            offset: time.offset,
            author: text(author.0),
            email: text(author.1),
            subject,
            body,
            paths: changes.paths,
            diffs: with_diff,
        };
        Ok(CommitData { commit, pieces: changes.pieces, unread_diffs: changes.unread_diffs })
    }

    /// The files `commit` touched against `parent` (or the empty tree), and
    /// the pieces of their diffs when `with_diff`.
    fn changes(&self, commit: &gix::Commit<'_>, parent: Option<gix::ObjectId>, with_diff: bool) -> Result<Changes> {
        let mut changed = Changes { paths: Vec::new(), pieces: Vec::new(), unread_diffs: 0 };
        let sha = commit.id.to_string();
        for (rel, change, moved) in self.listed_changes(commit, parent)? {
            // A file moved unchanged touches both paths, as git log counts
            // them, and changes no line (audit 276: a rename was indexed as
            // its every line removed and added). A submodule's new commit,
            // or a link's new target, changes its path too, and has no
            // lines here; a file made a link, or a link made a file, has the
            // file's side's (audit 276: they were lost with the link's).
            if moved || !change.has_a_file_side() {
                if moved || change.entry_mode().is_commit() || change.entry_mode().is_link() {
                    changed.paths.push(rel);
                }
                continue;
            }
            if with_diff && changed.pieces.len() < MAX_PIECES_PER_COMMIT {
                let blobs =
                    self.change_blobs(&change).with_context(|| format!("cannot read the diff of {rel} in {sha}"))?;
                match blobs {
                    (BlobText::Text(before), BlobText::Text(after)) => {
                        changed.pieces.extend(changed_pieces(&rel, &before, &after));
                    }
                    (BlobText::Unread, _) | (_, BlobText::Unread) => changed.unread_diffs += 1,
                    _ => {}
                }
            }
            changed.paths.push(rel);
        }
        changed.pieces.truncate(MAX_PIECES_PER_COMMIT);
        Ok(changed)
    }

    /// The changes of `commit` against `parent` under the paths records
    /// name, each with its path and whether it is a side of a file moved
    /// unchanged. Moves are paired among these alone: a file moved in from
    /// outside a subdirectory's root, or from a name that is not UTF-8, is
    /// added here (review 279: its lines were lost as a move's).
    fn listed_changes(
        &self,
        commit: &gix::Commit<'_>,
        parent: Option<gix::ObjectId>,
    ) -> Result<Vec<(String, TreeChange, bool)>> {
        let (tree, parent_tree) = self.trees_of(commit, parent)?;
        let changes = super::tree_diff::tree_changes(&self.repo, parent_tree.as_ref(), &tree)
            .with_context(|| format!("cannot diff {} against its parent", commit.id))?;
        let listed: Vec<(String, TreeChange)> =
            changes.into_iter().filter_map(|c| Some((self.changed_path(&c)?, c))).collect();
        let moved = super::tree_diff::exact_moves(listed.iter().map(|(_, c)| c));
        Ok(listed.into_iter().enumerate().map(|(at, (rel, c))| (rel, c, moved.contains(&at))).collect())
    }

    /// How many files the diff of commit `sha` changed whose contents are
    /// not in the repository now (a partial clone's, not yet fetched): the
    /// log reads a commit again once fewer are (audit 253: what `--with-diff`
    /// left out stayed out after git fetched it). A merge's diff is none.
    /// Only a file's side is read (`change_blobs`): a link's or a
    /// submodule's is never waited for, nor a file moved unchanged.
    pub fn diffs_unread(&self, sha: &str) -> Result<usize> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let parents: Vec<gix::ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        if parents.len() > 1 {
            return Ok(0);
        }
        let absent_file = |side: Option<(gix::objs::tree::EntryMode, gix::ObjectId)>| {
            side.is_some_and(|(mode, id)| mode.is_blob() && !self.repo.has_object(id))
        };
        let listed = self.listed_changes(&commit, parents.first().copied())?;
        Ok(listed.iter().filter(|(_, c, moved)| !moved && (absent_file(c.before) || absent_file(c.after))).count())
    }

    /// The path below the root that `change` names, as records name it;
    /// None for one that is not UTF-8 (the code index leaves such files out:
    /// written lossily it would name a file that does not exist), or that
    /// is no path a checkout has (a crafted tree's `..` or `.git`), which
    /// breaks every reader of the records.
    fn changed_path(&self, change: &TreeChange) -> Option<String> {
        let location = change.location.to_str().ok()?;
        self.root_relative(location).filter(|rel| is_checkout_path(rel))
    }

    /// `commit`'s tree and its parent's (none for a root commit, or one at
    /// a shallow clone's boundary).
    fn trees_of<'r>(
        &'r self,
        commit: &gix::Commit<'r>,
        parent: Option<gix::ObjectId>,
    ) -> Result<(gix::Tree<'r>, Option<gix::Tree<'r>>)> {
        let sha = commit.id.to_string();
        let tree = commit.tree().map_err(|e| self.tree_lacking(e.into(), format!("cannot read the tree of {sha}")))?;
        let parent_tree = match parent {
            // A shallow clone ends at commits whose parents it does not
            // have: as git log reads them, each added every file it holds
            // (they touched nothing, and a PATH or a subdirectory's root
            // never found the only commit of a `--depth 1` clone).
            Some(p) if !self.repo.has_object(p) && self.at_shallow_boundary(&commit.id) => None,
            Some(p) => {
                // A parent missing anywhere else is damage (a shallow clone's
                // too, inside the history it holds): "could not be found" did
                // not say so, and a shallow clone's diff took every file as
                // new. Found, it may be another's replacement (`git replace`).
                let parent = self.repo.find_commit(p).map_err(|e| match self.repo.has_object(p) {
                    true => anyhow::Error::from(e),
                    false => anyhow!(missing_object(p)),
                });
                let tree = parent.and_then(|c| c.tree().map_err(anyhow::Error::from));
                Some(tree.map_err(|e| self.tree_lacking(e, format!("cannot read the parent of {sha}")))?)
            }
            None => None,
        };
        Ok((tree, parent_tree))
    }

    /// The text before and after a change (an added file's "before" is
    /// empty, and so is a file's where a submodule or a link was: its
    /// before is another repository's commit, or a path, no lines).
    fn change_blobs(&self, change: &TreeChange) -> Result<(BlobText, BlobText)> {
        let text = |side: Option<(gix::objs::tree::EntryMode, gix::ObjectId)>| match side {
            Some((mode, id)) if mode.is_blob() => self.blob_text(&id),
            _ => Ok(BlobText::Text(String::new())),
        };
        Ok((text(change.before)?, text(change.after)?))
    }

    /// A blob's text for a diff; `Unread` when a partial clone lacks it. A
    /// blob the object database should have and cannot give is an error:
    /// a damaged repository, whose diffs would be stored as read in full.
    fn blob_text(&self, id: &gix::ObjectId) -> Result<BlobText> {
        if !self.repo.has_object(*id) {
            self.lacks_by_design(*id)?;
            return Ok(BlobText::Unread);
        }
        // The header first, so that a large blob is never inflated to be dropped.
        let too_large = self.repo.find_header(*id).is_ok_and(|h| h.size() > MAX_DIFFED_BLOB as u64);
        if too_large {
            return Ok(BlobText::Unfit);
        }
        let blob = self.repo.find_object(*id).with_context(|| format!("cannot read object {id}"))?;
        let data = &blob.data;
        // Binary as the code index judges it, and text read as it reads text
        // (bytes that are no UTF-8 replaced, UTF-16 transcoded): a Latin-1
        // byte left a file's every diff out, in silence.
        if data.len() > MAX_DIFFED_BLOB || crate::project::looks_binary(data) {
            return Ok(BlobText::Unfit);
        }
        Ok(BlobText::Text(crate::project::decode_text(data.to_vec())))
    }

    /// Whether missing object `id` is one a partial clone lacks by design;
    /// from any other repository it is an error, saying it is damaged.
    pub(super) fn lacks_by_design(&self, id: gix::ObjectId) -> Result<()> {
        if self.is_partial_clone() {
            return Ok(());
        }
        Err(anyhow!(
            "object {id} is missing from the repository, which is no partial clone (git fsck says what is damaged)"
        ))
    }

    /// Whether the repository was cloned with a filter (`git clone
    /// --filter`): it fetches the objects it lacks when they are checked out.
    /// `e` in the words of `what` failed; in a partial clone, why: one
    /// made without trees (`--filter=tree:0`) lacks what the log and a
    /// revision read, and said only that an object could not be found.
    pub(super) fn tree_lacking(&self, e: anyhow::Error, what: String) -> anyhow::Error {
        if !self.is_partial_clone() {
            return e.context(what);
        }
        anyhow!(
            "{what}: this partial clone lacks the trees of its history (cloned with --filter=tree:0?), which the \
             commit log and revisions read; a clone with --filter=blob:none has them ({e})"
        )
    }

    /// What the repository's packs are now, in a few bytes: git fetches a
    /// partial clone's missing objects into packs of their own, so a log
    /// waiting on them looks again only when this changes.
    pub fn packs_seen(&self) -> String {
        let dir = self.repo.common_dir().join("objects/pack");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.retain(|n| n.ends_with(".pack"));
        names.sort_unstable();
        blake3::hash(names.join("\n").as_bytes()).to_hex()[..16].to_string()
    }

    pub(crate) fn is_partial_clone(&self) -> bool {
        let config = self.repo.config_snapshot();
        config.string("extensions.partialClone").is_some()
            || self
                .repo
                .remote_names()
                .iter()
                .any(|r| config.boolean(format!("remote.{r}.promisor").as_str()) == Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_is_the_first_paragraph_as_git_reads_it() {
        let split = |m: &str| {
            let (subject, body) = subject_and_body(m.as_bytes());
            (String::from_utf8(subject).unwrap(), std::str::from_utf8(body).unwrap().trim().to_string())
        };
        for (message, subject, body) in [
            ("Fix the parser\n\nWhy it broke\n", "Fix the parser", "Why it broke"),
            ("\n\n \t\n  Poll in batches\n\nbody\n", "Poll in batches", "body"),
            ("Fix the parser crash\n   \nBody about it\n", "Fix the parser crash", "Body about it"),
            ("Two lines\nof subject\n\nbody", "Two lines of subject", "body"),
            ("Only a subject", "Only a subject", ""),
            ("", "", ""),
            ("\n \n", "", ""),
        ] {
            assert_eq!(split(message), (subject.to_string(), body.to_string()), "{message:?}");
        }
    }

    #[test]
    fn a_commit_is_read_in_the_encoding_it_names() {
        let latin1 = encoding_named(b"ISO-8859-1");
        assert_eq!(decoded(b"Caf\xe9 cr\xe8me", latin1), "Café crème");
        assert_eq!(decoded("Café".as_bytes(), encoding_named(b"UTF-8")), "Café");
        assert_eq!(decoded(b"Caf\xe9", encoding_named(b"no-such-encoding")), "Caf\u{fffd}");
        assert_eq!(decoded(b"\x82\xa0", encoding_named(b"Shift_JIS")), "あ");
    }

    #[test]
    fn this_repository_has_a_history_with_authors_and_paths() {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let repo = GitRepo::open(here).expect("the project is built from a git clone");
        let shas = repo.head_history(Some(3)).unwrap();
        assert!(!shas.is_empty() && shas.len() <= 3);
        let read = repo.read_commit(&shas[0], true).unwrap();
        assert_eq!(read.commit.sha, shas[0]);
        assert!(!read.commit.subject.is_empty());
        assert!(read.commit.time > 1_600_000_000);
    }
}
