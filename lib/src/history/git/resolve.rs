//! A revision named by the user (a sha, a ref, `HEAD~2`, a tag) resolved
//! to a commit, or why it names none: ambiguous, missing, past a shallow
//! clone's boundary, damaged.

use anyhow::{anyhow, Result};

use super::{innermost_words, GitRepo};

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

/// A revision that names more than one object: git has it, so no index
/// stored under a sha it begins is searched in its stead.
#[derive(Debug, thiserror::Error)]
#[error("revision {said:?} is ambiguous: {many} objects' ids begin with it; give more of the sha")]
pub(in crate::history) struct AmbiguousRevision {
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
pub(super) fn missing_object(id: gix::ObjectId) -> String {
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

impl GitRepo {
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
    pub(in crate::history) fn replacements(&self) -> Vec<(String, String)> {
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
                    id = *super::super::loose::parse(&object.data).parents.first()?;
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
            self.repo.find_object(*commit).is_ok_and(|o| super::super::loose::parse(&o.data).parents.contains(&id))
        })
    }

    /// Whether `id` is a commit whose parents this shallow clone was made
    /// without (listed in `.git/shallow`): only theirs are missing by design.
    pub(super) fn at_shallow_boundary(&self, id: &gix::oid) -> bool {
        self.repo.shallow_commits().ok().flatten().is_some_and(|commits| commits.iter().any(|c| c.as_ref() == id))
    }

    /// Why `spec`'s `@{upstream}` or `@{push}` names nothing, in git's
    /// sense (audit 214: gix's "Couldn't find sibling of Upstream", and for
    /// a detached HEAD "Unborn heads cannot have … tracking branches").
    fn no_tracking_branch(&self, spec: &str) -> Option<String> {
        let lower = spec.to_ascii_lowercase();
        let suffixes = [("@{upstream}", "upstream"), ("@{u}", "upstream"), ("@{push}", "push destination")];
        let (at, suffix, what) =
            suffixes.iter().find_map(|(suffix, what)| lower.find(suffix).map(|at| (at, suffix.len(), *what)))?;
        // One that names a commit leaves the rest of the spec to blame
        // (review 216: `@{u}~100` past the root was "no upstream").
        if self.repo.rev_parse_single(&spec[..at + suffix]).is_ok() {
            return None;
        }
        let who = match &spec[..at] {
            "" | "HEAD" | "@" => match self.repo.head_name().ok().flatten() {
                Some(name) => format!("branch {}", name.shorten()),
                None => return Some(format!("HEAD is detached, on no branch, and so has no {what}")),
            },
            named => format!("branch {named}"),
        };
        Some(format!("{who} has no {what} (none is configured, or it was never fetched)"))
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
        if let Some(why) = self.no_tracking_branch(spec) {
            return anyhow!("unknown revision {said:?}: {why}");
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_told_apart_from_a_brace_body_that_holds_its_signs() {
        assert_eq!(outside_braces("HEAD^{/1..2}"), "HEAD^");
        assert_eq!(outside_braces("main@{2 days ago}~1"), "main@~1");
        assert_eq!(outside_braces("a..b"), "a..b");
        assert_eq!(outside_braces("x^{/a^-b}^!"), "x^^!");
        assert_eq!(outside_braces("feat{1..main"), "feat{1..main");
    }
}
