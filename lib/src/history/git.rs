//! The project's git repository, read through gix from the object database:
//! HEAD's history, each commit's message, author, date, touched paths and
//! the lines its diff adds and removes. Never spawns git.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use gix::bstr::ByteSlice;

use super::above_root::{self, TreeRules};
use super::diff::{changed_pieces, DiffPiece};
use super::tree_files::{self, EntryContents, WrittenTree};
use crate::project::{Skip, SkipReason};
use crate::store::CommitRow;

/// Why blobs the history names cannot be read: a partial clone
/// (`--filter=blob:none`) lacks the contents of what was never checked out.
pub const NOT_FETCHED: &str = "not in this repository (a partial clone fetches them only when checked out)";

/// A blob larger than this is left out of a commit's diff (a data file, a bundle).
const MAX_DIFFED_BLOB: usize = 1 << 20;

/// A commit message is read to its first 64 KiB: the model reads its first
/// 256 tokens, and a search's words lie far within it. Read whole, a 30 MB
/// message (a pack of 89 KB, any clone may hold one) cost 2.9 GB of memory
/// to store and embed (audit 188).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// An ignore file outside a revision's tree is read to its first MiB, as
/// far as any rule file reaches.
const MAX_IGNORE_FILE_BYTES: usize = 1 << 20;

/// At most this many diff pieces of one commit are indexed: a commit that
/// vendors a library or reformats the tree says little per line.
pub const MAX_PIECES_PER_COMMIT: usize = 64;

/// The repository a project root is in.
pub struct GitRepo {
    repo: gix::Repository,
    /// The root's path inside the repository's work tree, `/`-separated;
    /// empty when the root is the work tree.
    prefix: String,
}

/// One commit as read from the repository: what the log stores of it, and
/// the pieces of its diff when they were asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitData {
    pub commit: CommitRow,
    pub pieces: Vec<DiffPiece>,
    /// Changed files whose diff was left out because a side's blob could
    /// not be read: a partial clone (`--filter=blob:none`) lacks them.
    pub unread_diffs: usize,
}

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

impl GitRepo {
    /// The repository whose work tree holds `root`.
    pub fn open(root: &Path) -> Result<GitRepo> {
        let repo = gix::discover(root).map_err(|e| {
            match root.ancestors().map(|dir| dir.join(".git")).find(|git| git.symlink_metadata().is_ok()) {
                Some(git) => match (std::fs::read_dir(&git), missing_gitdir(&git)) {
                    // gix says it found none where it could not look.
                    (Err(why), _) if git.is_dir() => {
                        anyhow!("cannot read the git repository {}: {why}", git.display())
                    }
                    // A worktree's or submodule's `.git` file naming a gitdir
                    // that is gone: gix said it found no repository (audit 188).
                    (_, Some(gone)) => anyhow!(
                        "cannot open the git repository of {}: {} points at {}, which does not exist (a worktree or submodule moved or deleted?)",
                        root.display(),
                        git.display(),
                        gone.display()
                    ),
                    _ if innermost_words(&e).contains("objectFormat") => anyhow!(
                        "cannot open the git repository of {}: its object format (extensions.objectFormat) is one vecgrep cannot read yet; it reads SHA-1 repositories",
                        root.display()
                    ),
                    _ => anyhow!("cannot open the git repository of {}: {}", root.display(), with_cause(&e)),
                },
                None => anyhow!("{} is not in a git repository", root.display()),
            }
        })?;
        // gix reads only the files backend; with another, every ref fails
        // later in words about decoding.
        let refs = repo.config_snapshot().string("extensions.refStorage").map(|v| v.to_string());
        if let Some(storage) = refs.filter(|v| !v.eq_ignore_ascii_case("files")) {
            return Err(anyhow!(
                "cannot open the git repository of {}: its references are kept as {storage} (extensions.refStorage), which vecgrep cannot read yet; `git refs migrate --ref-format=files` converts them",
                root.display()
            ));
        }
        let workdir: PathBuf = repo
            .workdir()
            .ok_or_else(|| {
                anyhow!("{} is in a bare git repository; run it in a clone with a work tree", root.display())
            })?
            .to_path_buf();
        let workdir = workdir.canonicalize().unwrap_or(workdir);
        let inside = root.strip_prefix(&workdir).map_err(|_| {
            anyhow!("{} is not inside the work tree of its repository, {}", root.display(), workdir.display())
        })?;
        let prefix =
            inside.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
        Ok(GitRepo { repo, prefix })
    }

    /// The branch HEAD names when it has no commits yet (a new repository,
    /// `git checkout --orphan`), which has no history to search.
    pub fn unborn_head(&self) -> Option<String> {
        let head = self.repo.head().ok().filter(|h| h.is_unborn())?;
        Some(head.referent_name().map_or_else(|| "HEAD".to_string(), |n| n.shorten().to_string()))
    }

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
    /// ([`super::loose`]): slower than gix's walk, for histories it refuses.
    fn history_loosely(&self, head: gix::ObjectId, limit: Option<usize>) -> Result<Vec<String>> {
        let read = |id: gix::ObjectId| -> Result<(i64, Vec<gix::ObjectId>)> {
            let object = self.repo.find_object(id).map_err(|e| anyhow!("cannot walk the history at {id}: {e}"))?;
            let commit = super::loose::parse(&object.data);
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
                let loose = super::loose::parse(&commit.data);
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
        let changes = self
            .repo
            .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), gix::diff::Options::default())
            .with_context(|| format!("cannot diff {sha} against its parent"))?;
        for change in changes {
            // A name that is not UTF-8 is left out, as the code index leaves such files
            // out: written lossily it would name a file that does not exist.
            let Ok(location) = change.location().to_str() else { continue };
            // A tree crafted to hold `..` or `.git` names no file a checkout
            // has, and a path that is not one below the root breaks every
            // reader of the records.
            let Some(rel) = self.root_relative(location).filter(|rel| is_checkout_path(rel)) else { continue };
            // A submodule's new commit, or a link's new target, changes its
            // path, as git log counts it; neither has lines here.
            if change.entry_mode().is_commit() || change.entry_mode().is_link() {
                changed.paths.push(rel);
                continue;
            }
            if !change.entry_mode().is_blob() {
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

    /// The text before and after a change (an added file's "before" is empty).
    fn change_blobs(&self, change: &gix::object::tree::diff::ChangeDetached) -> Result<(BlobText, BlobText)> {
        use gix::object::tree::diff::ChangeDetached as C;
        let text = |id: &gix::ObjectId| self.blob_text(id);
        let empty = || BlobText::Text(String::new());
        // A file where a submodule was: its before is another repository's commit.
        let before = |id: &gix::ObjectId| if was_submodule(change) { Ok(empty()) } else { text(id) };
        Ok(match change {
            C::Addition { id, .. } => (empty(), text(id)?),
            C::Deletion { id, .. } => (text(id)?, empty()),
            C::Modification { previous_id, id, .. } => (before(previous_id)?, text(id)?),
            C::Rewrite { source_id, id, .. } => (before(source_id)?, text(id)?),
        })
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
    fn lacks_by_design(&self, id: gix::ObjectId) -> Result<()> {
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
    fn tree_lacking(&self, e: anyhow::Error, what: String) -> anyhow::Error {
        if !self.is_partial_clone() {
            return e.context(what);
        }
        anyhow!(
            "{what}: this partial clone lacks the trees of its history (cloned with --filter=tree:0?), which the \
             commit log and revisions read; a clone with --filter=blob:none has them ({e})"
        )
    }

    fn is_partial_clone(&self) -> bool {
        let config = self.repo.config_snapshot();
        config.string("extensions.partialClone").is_some()
            || self
                .repo
                .remote_names()
                .iter()
                .any(|r| config.boolean(format!("remote.{r}.promisor").as_str()) == Some(true))
    }

    /// The commit `spec` names (a branch, a tag, a sha or a prefix of one,
    /// `HEAD~2`, ...), as a full sha.
    pub fn resolve_commit(&self, spec: &str) -> Result<String> {
        // A name from a request may be of any length; its errors quote 100 characters.
        let said = crate::project::shown::clipped(spec, 100);
        // `:/text` would search the whole history for a message; a revision is named, not sought.
        if spec.is_empty() || spec.starts_with('-') || spec.starts_with(':') || spec.chars().any(|c| c.is_control()) {
            return Err(anyhow!("{said:?} is not a revision"));
        }
        // `a..b`, `a^!`, `a^@`, `a^-`: git reads a range of commits there; a
        // ref's name never holds `..` (git check-ref-format), and a `^{/text}`
        // or `@{…}` body, which may, is no range.
        let outside = outside_braces(spec);
        if outside.contains("..") || outside.ends_with("^!") || outside.ends_with("^@") || outside.contains("^-") {
            return Err(anyhow!("{said:?} names a range of commits; --rev takes one revision"));
        }
        // `^{/text}` is the same search from a commit: refused with it (a
        // server's request for one walked 300,000 commits), not read as
        // plain text where git reads a regular expression.
        if spec.contains("^{/") {
            return Err(anyhow!("{said:?} seeks a commit by its message; name the revision (a branch, tag or sha)"));
        }
        let id = self.repo.rev_parse_single(spec).map_err(|e| self.unresolved(spec, &e))?;
        // A ref naming a commit the repository lacks, or cannot read: damage.
        let object = id.object().map_err(|_| self.lacking(&said, "read", id.detach()))?;
        let commit = object.peel_to_commit().map_err(|_| anyhow!("revision {said:?} does not name a commit"))?;
        Ok(self.read_in_place_of(commit.id.to_string()))
    }

    /// The commit git reads for `sha`: the one `git replace` puts in its
    /// place, followed as git follows them (5 deep), or itself. A revision
    /// is indexed by what is read: an index kept under the replaced sha
    /// showed its old tree.
    fn read_in_place_of(&self, mut sha: String) -> String {
        let pairs = self.replacements();
        for _ in 0..5 {
            match pairs.iter().find(|(original, _)| *original == sha) {
                Some((_, replacement)) => sha.clone_from(replacement),
                None => break,
            }
        }
        sha
    }

    /// The objects git reads in place of others (`git replace`), as
    /// (original, replacement) shas, sorted; none where replace refs are off.
    pub(super) fn replacements(&self) -> Vec<(String, String)> {
        if self.repo.objects.ignore_replacements {
            return Vec::new();
        }
        let mut pairs: Vec<(String, String)> =
            self.repo.objects.store_ref().replacements().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        pairs.sort();
        pairs
    }

    /// Whether `spec` is the name of a ref (a branch, tag or remote
    /// branch, as git looks one up), which git reads before a sha's prefix.
    pub fn names_a_ref(&self, spec: &str) -> bool {
        self.repo.try_find_reference(spec).ok().flatten().is_some()
    }

    /// When `spec` is the name of both a tag and a branch at different
    /// commits, the branch's commit: git takes the tag's (and warns), so
    /// `resolve_commit` does too, and the caller says so.
    pub fn branch_beside_tag(&self, spec: &str) -> Option<String> {
        let at = |prefix: &str| self.resolve_commit(&format!("{prefix}{spec}")).ok();
        let (tag, branch) = (at("refs/tags/")?, at("refs/heads/")?);
        (tag != branch).then_some(branch)
    }

    /// Where the first-parent line from `from` (the commit a `~N` counted
    /// from) breaks: the commit whose first parent is missing, and that
    /// parent, or a commit that cannot be read; None where it ends at a root.
    fn broken_first_parent(&self, from: &str) -> Option<LineBreak> {
        let mut id = self.repo.rev_parse_single(from).ok()?.detach();
        let mut child = None;
        // Bounded: a replacement (`git replace`) can make a line a loop.
        for _ in 0..100_000 {
            // Found as git finds it: a replaced commit's replacement.
            match self.repo.find_object(id) {
                Ok(object) => {
                    child = Some(id);
                    id = *super::loose::parse(&object.data).parents.first()?;
                }
                Err(_) if self.repo.has_object(id) => return Some(LineBreak::Unreadable(id)),
                Err(_) => return Some(LineBreak::Missing { child: child?, parent: id }),
            }
        }
        None
    }

    /// Why a name that led to `id` cannot be read: past a shallow clone's
    /// boundary (a parent of a commit it was made without the parents of,
    /// as `HEAD^` of a `--depth 1` clone), or damage.
    fn lacking(&self, said: &str, verb: &str, id: gix::ObjectId) -> anyhow::Error {
        if !self.repo.has_object(id) && self.past_shallow_boundary(id) {
            return past_shallow_clone(said);
        }
        anyhow!("cannot {verb} revision {said:?}: {}", bad_object(self, id))
    }

    /// Whether `id` is a parent of a commit this shallow clone was made
    /// without the parents of: missing by design.
    fn past_shallow_boundary(&self, id: gix::ObjectId) -> bool {
        let Ok(Some(boundary)) = self.repo.shallow_commits() else { return false };
        boundary.iter().any(|commit| {
            self.repo.find_object(*commit).is_ok_and(|o| super::loose::parse(&o.data).parents.contains(&id))
        })
    }

    /// Whether `id` is a commit whose parents this shallow clone was made
    /// without (listed in `.git/shallow`): only theirs are missing by design.
    fn at_shallow_boundary(&self, id: &gix::oid) -> bool {
        self.repo.shallow_commits().ok().flatten().is_some_and(|commits| commits.iter().any(|c| c.as_ref() == id))
    }

    /// Why `spec` names no commit: ambiguous, unknown, a branch without
    /// commits, or what git met on the way (a commit it cannot read, an
    /// object missing from a damaged repository).
    fn unresolved(&self, spec: &str, e: &gix::Error) -> anyhow::Error {
        use gix::revision::spec::parse::Error as Parse;
        let said = crate::project::shown::clipped(spec, 100);
        if let Some(many) = ambiguous(e) {
            return AmbiguousRevision { said, many }.into();
        }
        if let Ok(head) = self.repo.head() {
            if head.is_unborn() && spec.starts_with("HEAD") {
                let any_commit =
                    self.repo.references().is_ok_and(|r| r.all().is_ok_and(|mut all| all.next().is_some()));
                return match (any_commit, head.referent_name()) {
                    (true, Some(name)) => {
                        anyhow!("unknown revision {said:?}: HEAD names {}, which has no commits yet", name.shorten())
                    }
                    _ => anyhow!("unknown revision {said:?}: the repository has no commits yet"),
                };
            }
        }
        if matches!(e.downcast_any_ref::<Parse>(), Some(Parse::MissingReference { .. })) {
            return anyhow!("unknown revision {said:?}");
        }
        let words = innermost_words(e);
        // An object a name leads through that the repository lacks (gix
        // names it in a few ways: `with id X`, `object_id="X"`).
        let full_id = |token: &&str| matches!(token.len(), 40 | 64) && token.chars().all(|c| c.is_ascii_hexdigit());
        let lacked = words.contains("could not be found").then(|| {
            words
                .split(|c: char| !c.is_ascii_alphanumeric())
                .find(full_id)
                .and_then(|id| gix::ObjectId::from_hex(id.as_bytes()).ok())
        });
        if let Some(id) = lacked.flatten() {
            return self.lacking(&said, "resolve", id);
        }
        // A parent missing, or a commit unreadable, ends the first-parent
        // line there, which gix reports as a history too short: by design
        // only at a shallow clone's boundary (gix counts its commits as
        // having no parent), damage anywhere else.
        let counted_from = words.split_once("Commit ").and_then(|(_, rest)| rest.split_whitespace().next());
        if words.contains("ancestors") {
            let shallow = self.repo.is_shallow().unwrap_or(false);
            match counted_from.and_then(|c| self.broken_first_parent(c)) {
                Some(LineBreak::Missing { child, .. }) if shallow && self.at_shallow_boundary(&child) => {
                    return past_shallow_clone(&said)
                }
                Some(LineBreak::Missing { parent, .. }) => {
                    return anyhow!("cannot resolve revision {said:?}: {}", missing_object(parent))
                }
                Some(LineBreak::Unreadable(id)) => {
                    return anyhow!("cannot resolve revision {said:?}: {}", unreadable_object(id))
                }
                None if shallow => return past_shallow_clone(&said),
                None => {}
            }
        }
        anyhow!("cannot resolve revision {said:?}: {}", crate::project::shown::clipped(&words, 300))
    }

    /// Write the files of commit `sha`'s tree that lie under the project
    /// root into `dest` (paths relative to the root), dated by the commit,
    /// for a walk to meet as it would meet a checkout: a symbolic link as
    /// a link (never followed, nor written through), a blob over `max_bytes`
    /// as a sparse file of its size (passed over as too large, never read),
    /// a name that is not UTF-8 as it is. Submodules and anything under
    /// `.vecgrep/` or `.git/` are left out; the submodules' root-relative
    /// paths are returned, to be said, with the entries that could not be
    /// written (`tree_files::place`). A root that did not exist at that
    /// commit is an error.
    pub(super) fn write_tree(&self, sha: &str, dest: &Path, max_bytes: u64) -> Result<WrittenTree> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().map_err(|e| self.tree_lacking(e.into(), format!("cannot read the tree of {sha}")))?;
        let entries = tree.traverse().breadthfirst.files().with_context(|| format!("cannot walk the tree of {sha}"))?;
        let dated = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(commit.time().map_or(0, |t| t.seconds.max(0) as u64));
        std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
        let unreadable = self.dirs_of_unreadable_rules(&entries);
        let rules = self.tree_rules(&entries, !unreadable.is_empty());
        // Only a directory the walk enters reads its ignore file (review
        // 197: one in a directory left out was an error of the revision).
        let unwalked: Vec<(String, String)> =
            unreadable.into_iter().filter(|(dir, _)| !rules.walk_passes_over(dir)).collect();
        let mut under_root = false;
        let mut written = WrittenTree::default();
        written.unwritten.extend(unwalked.iter().map(|(dir, why)| Skip {
            path: if dir.is_empty() { ".".into() } else { dir.clone() },
            reason: SkipReason::Error(why.clone()),
        }));
        for entry in entries {
            if !entry.mode.is_blob() && !entry.mode.is_link() {
                if entry.mode.is_commit() {
                    written.submodules.extend(
                        self.root_relative_bytes(entry.filepath.as_ref()).map(|r| r.to_str_lossy().into_owned()),
                    );
                }
                continue;
            }
            let Some(rel) = self.root_relative_bytes(entry.filepath.as_ref()) else { continue };
            let shown = rel.to_str_lossy();
            // Case-blind: on a case-insensitive disk `.VECGREP/` is the revision's own index.
            if !is_checkout_path(&shown) || shown.split('/').any(|part| part.eq_ignore_ascii_case(".vecgrep")) {
                continue;
            }
            under_root = true;
            let in_unwalked = |(dir, _): &(String, String)| dir.is_empty() || shown.starts_with(&format!("{dir}/"));
            if unwalked.iter().any(in_unwalked) || rules.any_above() && rules.leaves_out(&shown) {
                continue;
            }
            let rel_path = Path::new(std::ffi::OsStr::from_bytes(rel));
            let unwritten = self
                .write_entry(entry.oid, entry.mode.is_link(), dest, rel_path, (max_bytes, dated))
                .with_context(|| format!("cannot write {shown} of {sha} to {}", dest.join(rel_path).display()))?;
            if let Some(reason) = unwritten {
                written.unwritten.push(Skip { path: shown.into_owned(), reason });
            }
        }
        if !under_root && !self.root_exists_in(&tree)? {
            return Err(anyhow!("the project root {} did not exist at {}", self.prefix, &sha[..12.min(sha.len())]));
        }
        Ok(written)
    }

    /// The directories of the tree under the root (root-relative) whose
    /// ignore file has a line that is not UTF-8, with why. The walk reads no
    /// rule after such a line, and so walks none of the directory: an error
    /// no later run of the same tree gets past, which kept the revision
    /// incomplete for ever (audit 194). Written as entries no run can write,
    /// the revision completes without them and its searches say so.
    fn dirs_of_unreadable_rules(&self, entries: &[gix::traverse::tree::recorder::Entry]) -> Vec<(String, String)> {
        let unreadable = |entry: &gix::traverse::tree::recorder::Entry| {
            let rel = self.root_relative_bytes(entry.filepath.as_ref())?.to_str().ok()?;
            let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
            if !entry.mode.is_blob() || !above_root::KINDS.contains(&name) {
                return None;
            }
            let blob = self.repo.find_object(entry.oid).ok()?;
            let line = crate::project::small_file::first_line_not_utf8(&blob.data)?;
            let why = format!(
                "ignore file {name}: line {line} is not UTF-8, and the rules from there on would go unread; \
                 its directory is not walked"
            );
            Some((dir.to_string(), why))
        };
        entries.iter().filter_map(unreadable).collect()
    }

    /// The rules a revision keeps from outside its tree (`above_root`):
    /// the ignore files above a subproject's root and the repository's
    /// `info/exclude`, with the tree's own that outrank them; all of the
    /// tree's own when `wanted_whole`, to tell which directories the walk
    /// enters.
    fn tree_rules(&self, entries: &[gix::traverse::tree::recorder::Entry], wanted_whole: bool) -> TreeRules {
        let exclude = self.info_exclude();
        if self.prefix.is_empty() && exclude.is_none() && !wanted_whole {
            return TreeRules::default();
        }
        let wanted = |path: &str| {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            let above = dir.is_empty() || self.prefix.starts_with(&format!("{dir}/")) || dir == self.prefix;
            let inside = self.prefix.is_empty() || dir.starts_with(&format!("{}/", self.prefix));
            above_root::KINDS.contains(&name) && (above || inside)
        };
        let files = entries
            .iter()
            .filter(|e| e.mode.is_blob())
            .filter_map(|e| Some((e.filepath.to_str().ok()?, e.oid)))
            .filter(|(path, _)| wanted(path))
            .filter_map(|(path, oid)| {
                let blob = self.repo.find_object(oid).ok()?;
                Some((path.to_string(), blob.data[..blob.data.len().min(MAX_IGNORE_FILE_BYTES)].to_vec()))
            })
            .collect();
        TreeRules::new(&self.prefix, files, exclude.as_deref())
    }

    /// What the rules from outside a revision's tree that this repository
    /// holds (`info/exclude`) are, in short: a revision indexed under other
    /// rules is indexed again, as the working tree is walked again.
    pub(super) fn outside_rules_key(&self) -> String {
        self.info_exclude().map_or_else(|| "none".into(), |text| blake3::hash(&text).to_hex()[..16].to_string())
    }

    /// The repository's `info/exclude` (a linked worktree's is its main
    /// repository's), which the working tree's walk applies; None when it
    /// holds no rule or cannot be read.
    fn info_exclude(&self) -> Option<Vec<u8>> {
        let path = self.repo.common_dir().join("info/exclude");
        let mut text = Vec::new();
        let file = std::fs::File::open(path).ok()?;
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_IGNORE_FILE_BYTES as u64), &mut text).ok()?;
        let rules = |line: &&[u8]| !line.trim().is_empty() && !line.starts_with(b"#");
        text.split(|b| *b == b'\n').any(|line| rules(&line)).then_some(text)
    }

    /// Whether the project root is a directory of commit `sha`'s tree (the
    /// whole repository always is): a catalog's label leaves a project out
    /// at a commit of its repository from before the project's directory.
    pub(super) fn root_exists_at(&self, sha: &str) -> Result<bool> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().with_context(|| format!("cannot read the tree of {sha}"))?;
        self.root_exists_in(&tree)
    }

    /// Whether root-relative `rel` is a symbolic link in commit `sha`'s
    /// tree: a revision's search does not follow it, as its walk does not.
    pub fn is_link_at(&self, sha: &str, rel: &str) -> bool {
        let path = if self.prefix.is_empty() { rel.to_string() } else { format!("{}/{rel}", self.prefix) };
        let tree = gix::ObjectId::from_hex(sha.as_bytes())
            .ok()
            .and_then(|id| self.repo.find_commit(id).ok())
            .and_then(|commit| commit.tree().ok());
        let entry = tree.and_then(|tree| tree.lookup_entry_by_path(path.trim_end_matches('/')).ok().flatten());
        entry.is_some_and(|e| e.mode().is_link())
    }

    fn root_exists_in(&self, tree: &gix::Tree<'_>) -> Result<bool> {
        if self.prefix.is_empty() {
            return Ok(true);
        }
        let entry =
            tree.lookup_entry_by_path(&self.prefix).with_context(|| format!("cannot look up {}", self.prefix))?;
        Ok(entry.is_some_and(|e| e.mode().is_tree()))
    }

    /// The bytes of the file at root-relative `rel` in commit `sha`, when it
    /// is a file there of at most `max_bytes` that the repository holds:
    /// the lines around a hit from that revision, which the work tree's
    /// file may no longer have.
    pub fn file_at(&self, sha: &str, rel: &str, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let id = gix::ObjectId::from_hex(sha.as_bytes()).map_err(|e| anyhow!("not a commit id {sha:?}: {e}"))?;
        let commit = self.repo.find_commit(id).with_context(|| format!("cannot read commit {sha}"))?;
        let tree = commit.tree().with_context(|| format!("cannot read the tree of {sha}"))?;
        let path = if self.prefix.is_empty() { rel.to_string() } else { format!("{}/{rel}", self.prefix) };
        let entry = tree.lookup_entry_by_path(&path).with_context(|| format!("cannot read {path} at {sha}"))?;
        let Some(oid) = entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()) else { return Ok(None) };
        if !self.repo.has_object(oid) || self.repo.find_header(oid).map_or(true, |h| h.size() > max_bytes) {
            return Ok(None);
        }
        Ok(Some(self.repo.find_object(oid)?.data.clone()))
    }

    /// One entry of a tree at `rel` below `dest`: a link to what its blob
    /// names, a sparse file of its size when over `max_bytes`, else its
    /// contents dated `dated`; why not, when it cannot be placed there.
    fn write_entry(
        &self,
        oid: gix::ObjectId,
        is_link: bool,
        dest: &Path,
        rel: &Path,
        (max_bytes, dated): (u64, std::time::SystemTime),
    ) -> Result<Option<SkipReason>> {
        if !self.repo.has_object(oid) {
            self.lacks_by_design(oid)?;
            return Err(anyhow!("its contents are {NOT_FETCHED}"));
        }
        let size = self.repo.find_header(oid).map(|h| h.size()).unwrap_or(0);
        if !is_link && size > max_bytes {
            return Ok(tree_files::place(dest, rel, EntryContents::Sparse { size, limit: max_bytes, dated })?);
        }
        let blob = self.repo.find_object(oid)?;
        let contents = if is_link { EntryContents::Link(&blob.data) } else { EntryContents::File(&blob.data, dated) };
        Ok(tree_files::place(dest, rel, contents)?)
    }

    /// A repository path's bytes relative to the project root; None outside it.
    fn root_relative_bytes<'p>(&self, repo_path: &'p [u8]) -> Option<&'p [u8]> {
        if self.prefix.is_empty() {
            return Some(repo_path);
        }
        repo_path.strip_prefix(self.prefix.as_bytes()).and_then(|rest| rest.strip_prefix(b"/"))
    }

    /// Whether the project root is a subdirectory of the work tree, so that
    /// some commits touch nothing of the project.
    pub fn root_is_subdirectory(&self) -> bool {
        !self.prefix.is_empty()
    }

    /// A repository path relative to the project root; None outside it.
    pub fn root_relative(&self, repo_path: &str) -> Option<String> {
        if self.prefix.is_empty() {
            return Some(repo_path.to_string());
        }
        repo_path.strip_prefix(self.prefix.as_str()).and_then(|rest| rest.strip_prefix('/')).map(str::to_string)
    }
}

/// `e`'s own words (which may name the file at fault) and, when they
/// differ, its innermost cause that says something.
fn with_cause(e: &dyn std::error::Error) -> String {
    let (outer, inner) = (e.to_string(), innermost_words(e));
    if outer.contains(&inner) {
        outer
    } else {
        format!("{outer}: {inner}")
    }
}

/// The innermost cause of `e` that says something: gix's outer words name
/// its own steps, and its innermost can be a bare class ("Validation"),
/// whose reason is the cause around it.
fn innermost_words(e: &dyn std::error::Error) -> String {
    let mut said = e.to_string();
    let mut cause = e.source();
    while let Some(inner) = cause {
        let words = inner.to_string();
        if words.trim().contains(' ') {
            said = words;
        }
        cause = inner.source();
    }
    said
}

/// Whether `rel` is a path git would check out below the root: no empty,
/// `.` or `..` part, and no `.git` (in any case: a case-blind disk takes
/// `.GIT` for it), which only a tree made by hand holds.
fn is_checkout_path(rel: &str) -> bool {
    rel.split('/').all(|part| !(part.is_empty() || part == "." || part == ".." || part.eq_ignore_ascii_case(".git")))
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

/// `spec` without the bodies of its `^{…}` and `@{…}` parts (a message to
/// seek, a date, a count), which may hold what a range is written with.
fn outside_braces(spec: &str) -> String {
    let mut depth = 0usize;
    let outside: String = spec
        .chars()
        .filter(|&c| {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    // A `{` never closed is no body but part of a name (`feat{1..main`).
    if depth > 0 {
        return spec.to_string();
    }
    outside
}

/// Whether `change` replaced a submodule (its before names a commit of
/// another repository, never an object of this one).
fn was_submodule(change: &gix::object::tree::diff::ChangeDetached) -> bool {
    use gix::object::tree::diff::ChangeDetached as C;
    match change {
        C::Modification { previous_entry_mode, .. } => previous_entry_mode.is_commit(),
        C::Rewrite { source_entry_mode, .. } => source_entry_mode.is_commit(),
        C::Addition { .. } | C::Deletion { .. } => false,
    }
}

/// The directory a `.git` file names (`gitdir: PATH`, relative to the
/// file's directory), when it names one that does not exist.
fn missing_gitdir(git: &Path) -> Option<PathBuf> {
    let text = crate::project::small_file::read_small_text(git, 4096).ok()??;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let dir = git.parent()?.join(named);
    (!named.is_empty() && !dir.exists()).then_some(dir)
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

/// A revision that names more than one object: git has it, so no index
/// stored under a sha it begins is searched in its stead.
#[derive(Debug, thiserror::Error)]
#[error("revision {said:?} is ambiguous: {many} objects' ids begin with it; give more of the sha")]
pub(super) struct AmbiguousRevision {
    said: String,
    many: usize,
}

/// How many objects a short sha could name, when it names more than one.
fn ambiguous(e: &gix::Error) -> Option<usize> {
    use gix::revision::spec::parse::Error as Parse;
    match e.downcast_any_ref::<Parse>()? {
        Parse::AmbiguousPrefix { candidates, .. } | Parse::AmbiguousRefAndObject { candidates, .. } => {
            Some(candidates.len().max(2))
        }
        _ => None,
    }
}

/// What a damaged repository lacks, said as damage: git's "could not be
/// found" and gix's count of ancestors blamed the name or the history.
fn missing_object(id: gix::ObjectId) -> String {
    format!("object {id} is missing from the repository, which is damaged (git fsck says what else is)")
}

/// A name that reaches past what a shallow clone holds, which is no damage.
fn past_shallow_clone(said: &str) -> anyhow::Error {
    anyhow!(
        "revision {said:?} reaches past the commits this shallow clone holds (git fetch --unshallow fetches the rest)"
    )
}

/// An object the repository has and cannot read (cut short, corrupt).
fn unreadable_object(id: gix::ObjectId) -> String {
    format!("object {id} cannot be read, so the repository is damaged (git fsck says what else is)")
}

/// `id`, which a name led to and which cannot be read: missing or not.
fn bad_object(repo: &GitRepo, id: gix::ObjectId) -> String {
    match repo.repo.has_object(id) {
        true => unreadable_object(id),
        false => missing_object(id),
    }
}

/// Where a first-parent line breaks (`GitRepo::broken_first_parent`).
enum LineBreak {
    Missing { child: gix::ObjectId, parent: gix::ObjectId },
    Unreadable(gix::ObjectId),
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
    fn a_range_is_told_apart_from_a_brace_body_that_holds_its_signs() {
        assert_eq!(outside_braces("HEAD^{/1..2}"), "HEAD^");
        assert_eq!(outside_braces("main@{2 days ago}~1"), "main@~1");
        assert_eq!(outside_braces("a..b"), "a..b");
        assert_eq!(outside_braces("x^{/a^-b}^!"), "x^^!");
        assert_eq!(outside_braces("feat{1..main"), "feat{1..main");
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
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let repo = GitRepo::open(here).expect("the project is built from a git clone");
        let shas = repo.head_history(Some(3)).unwrap();
        assert!(!shas.is_empty() && shas.len() <= 3);
        let read = repo.read_commit(&shas[0], true).unwrap();
        assert_eq!(read.commit.sha, shas[0]);
        assert!(!read.commit.subject.is_empty());
        assert!(read.commit.time > 1_600_000_000);
    }

    #[test]
    fn only_paths_a_checkout_could_hold_are_paths() {
        for plain in ["a.rs", "src/a.rs", ".github/ci.yml", "a..b/c", ".gitignore"] {
            assert!(is_checkout_path(plain), "{plain}");
        }
        for crafted in ["..", ".", "", "a/../b", "a//b", ".git/config", "src/.GIT/hooks", "a/"] {
            assert!(!is_checkout_path(crafted), "{crafted}");
        }
    }
}
