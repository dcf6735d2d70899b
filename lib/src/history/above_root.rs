//! The ignore rules a revision keeps from outside its tree. The working
//! tree's walk reads the ignore files between the repository's top and the
//! project root, and the repository's `info/exclude`; a revision's tree is
//! written from the root down, so those were never read and a revision
//! indexed what the working tree leaves out (audits 191, 194). These rules
//! are read (the ignore files from the commit) and the files they leave out
//! are not written.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore files the walk reads, highest precedence first: a match in a
/// file of an earlier kind, at any depth, outranks one of a later kind, as
/// the walk (the `ignore` crate) ranks them.
pub(super) const KINDS: [&str; 3] = [crate::project::IGNORE_FILE_NAME, ".ignore", ".gitignore"];

/// The repository's `info/exclude`, a kind below the files': its rules
/// are the top's, and any match in an ignore file outranks them.
const EXCLUDE: usize = KINDS.len();

/// Where the rules are matched: a path no file has, as the rules' roots
/// and the paths matched are only compared, never read.
const BASE: &str = "/repository";

/// The rules of a commit's ignore files, by kind, each with its directory
/// (repository-relative); deepest first.
#[derive(Default)]
pub(super) struct TreeRules {
    /// The project root in the repository, `/`-separated.
    prefix: String,
    /// Per kind (`KINDS`, then `EXCLUDE`), the directories above the root
    /// (the top included) with their rules.
    above: [Vec<(String, Gitignore)>; EXCLUDE + 1],
    /// Per kind, the directories at or under the root with their rules.
    own: [Vec<(String, Gitignore)>; EXCLUDE + 1],
}

impl TreeRules {
    /// The rules of `files` (repository path and contents of each ignore
    /// file the commit holds) and of the repository's `exclude` for a
    /// project root at `prefix`.
    pub(super) fn new(prefix: &str, files: Vec<(String, Vec<u8>)>, exclude: Option<&[u8]>) -> TreeRules {
        let mut rules = TreeRules { prefix: prefix.to_string(), ..TreeRules::default() };
        if let Some(text) = exclude {
            rules.above[EXCLUDE].push((String::new(), matcher("", &String::from_utf8_lossy(text))));
        }
        for (path, text) in files {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", &path));
            let Some(kind) = KINDS.iter().position(|k| *k == name) else { continue };
            let matcher = matcher(dir, &String::from_utf8_lossy(&text));
            let inside = prefix.is_empty() || dir == prefix || dir.starts_with(&format!("{prefix}/"));
            let list = if inside { &mut rules.own[kind] } else { &mut rules.above[kind] };
            list.push((dir.to_string(), matcher));
        }
        for list in rules.above.iter_mut().chain(rules.own.iter_mut()) {
            list.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.len()));
        }
        rules
    }

    /// Whether there is a rule from outside the tree: none for a whole
    /// repository without `info/exclude`, nor for a root with no ignore
    /// file above it.
    pub(super) fn any_above(&self) -> bool {
        self.above.iter().any(|list| !list.is_empty())
    }

    /// Whether the rules from outside the tree leave out root-relative `rel`
    /// or a directory it lies in, as the working tree's walk would: a match
    /// of the tree's own rules is left to the walk, which reads them.
    pub(super) fn leaves_out(&self, rel: &str) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        if (1..parts.len()).any(|n| self.decided_above(&parts[..n].join("/"), true)) {
            return true;
        }
        // An ignore file is written whatever leaves it out (`.*`): the walk
        // reads its rules either way, and without it they went unapplied
        // (review 196). Being hidden, it is not indexed.
        !parts.last().is_some_and(|name| KINDS.contains(name)) && self.decided_above(rel, false)
    }

    /// Whether the walk of the tree passes over root-relative directory
    /// `dir`: it or one above it is hidden, or a rule leaves it out (the
    /// tree's own or one from outside it). An ignore file there is never
    /// read, whatever it holds.
    pub(super) fn walk_passes_over(&self, dir: &str) -> bool {
        let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        (1..=parts.len()).any(|n| {
            parts[n - 1].starts_with('.')
                || self.deciding(&parts[..n].join("/"), true).is_some_and(|(left_out, _)| left_out)
        })
    }

    /// Whether, of every rule that matches root-relative `rel`, the one the
    /// walk would follow is an ignore rule from outside the tree.
    fn decided_above(&self, rel: &str, is_dir: bool) -> bool {
        self.deciding(rel, is_dir) == Some((true, true))
    }

    /// The rule the walk would follow for root-relative `rel`: whether it
    /// leaves `rel` out, and whether it is from outside the tree.
    fn deciding(&self, rel: &str, is_dir: bool) -> Option<(bool, bool)> {
        let repo_path = if self.prefix.is_empty() { rel.to_string() } else { format!("{}/{rel}", self.prefix) };
        let path = Path::new(BASE).join(&repo_path);
        let in_dir = |list: &[(String, Gitignore)]| {
            list.iter()
                .filter(|(dir, _)| dir.is_empty() || repo_path.starts_with(&format!("{dir}/")))
                .map(|(_, m)| m.matched(&path, is_dir))
                .find(|m| !m.is_none())
                .map(|m| m.is_ignore())
        };
        (0..=EXCLUDE).find_map(|kind| {
            let own = in_dir(&self.own[kind]).map(|left_out| (left_out, false));
            own.or_else(|| in_dir(&self.above[kind]).map(|left_out| (left_out, true)))
        })
    }
}

/// The rules of one ignore file in repository directory `dir`; a line that
/// is no valid rule is passed over, as the walk passes it over.
fn matcher(dir: &str, text: &str) -> Gitignore {
    let root: PathBuf = Path::new(BASE).join(dir);
    let mut builder = GitignoreBuilder::new(&root);
    for line in text.lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(prefix: &str, files: &[(&str, &str)]) -> TreeRules {
        TreeRules::new(prefix, files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect(), None)
    }

    #[test]
    fn the_rules_above_the_root_leave_out_what_the_working_tree_does() {
        let r = rules(
            "sub",
            &[
                (".gitignore", "*.gen.py\n/sub/build/\n"),
                (".vecgrepignore", "secret_notes.py\n"),
                ("a/.gitignore", "*"),
            ],
        );
        assert!(r.any_above());
        assert!(r.leaves_out("src/a.gen.py"));
        assert!(r.leaves_out("src/secret_notes.py"));
        assert!(r.leaves_out("build/out.py"), "a directory left out leaves out what it holds");
        assert!(!r.leaves_out("src/b.py"));
        assert!(!r.leaves_out("a/b.py"), "a sibling directory's rules are not the root's");
    }

    #[test]
    fn the_roots_own_rules_outrank_those_above_of_their_kind_or_a_later_one() {
        // The root's .gitignore keeps what the top's .gitignore leaves out;
        // the top's .ignore, a kind above it, still leaves its own out.
        let r = rules(
            "sub",
            &[(".gitignore", "*.gen.py\n"), (".ignore", "*.tmp.py\n"), ("sub/.gitignore", "!keep.gen.py\n!x.tmp.py\n")],
        );
        assert!(!r.leaves_out("keep.gen.py"), "the root's own .gitignore keeps it");
        assert!(r.leaves_out("other.gen.py"));
        assert!(r.leaves_out("x.tmp.py"), ".ignore outranks .gitignore at any depth");
    }

    #[test]
    fn the_walk_passes_over_hidden_and_ignored_directories() {
        let r = rules("", &[(".gitignore", "vendor/\n"), ("src/.gitignore", "!keep/\ngen/\n")]);
        assert!(r.walk_passes_over("vendor") && r.walk_passes_over("vendor/lib") && r.walk_passes_over(".cache"));
        assert!(r.walk_passes_over("src/gen") && !r.walk_passes_over("src") && !r.walk_passes_over("src/keep"));
    }

    #[test]
    fn an_ignore_file_is_kept_whatever_leaves_it_out() {
        let r = rules("sub", &[(".gitignore", ".*\n!.gitignore\ngen/\n")]);
        assert!(!r.leaves_out(".vecgrepignore") && !r.leaves_out("src/.ignore"));
        assert!(r.leaves_out(".env"), "other dotfiles go");
        assert!(r.leaves_out("gen/.gitignore"), "in a directory left out, it goes with it");
    }

    #[test]
    fn a_whole_repository_has_no_rules_above_it_but_its_exclude() {
        let r = rules("", &[(".gitignore", "*.py\n")]);
        assert!(!r.any_above());
        assert!(!r.leaves_out("a.py"), "the root's own rules are the walk's");
        let files = vec![("src/.gitignore".to_string(), b"!keep/\n".to_vec())];
        let r = TreeRules::new("", files, Some(b"vendor/\nkeep/\n/top.py\n"));
        assert!(r.any_above());
        assert!(r.leaves_out("vendor/v.py") && r.leaves_out("top.py"));
        assert!(!r.leaves_out("src/keep/a.py"), "an ignore file outranks info/exclude");
        assert!(!r.leaves_out("src/top.py") && !r.leaves_out("a.py"));
        let r = TreeRules::new("sub", vec![], Some(b"/sub/gen/\n"));
        assert!(r.leaves_out("gen/a.py") && !r.leaves_out("src/gen.py"));
    }
}
