//! Why a file the walk met is left out of the index (a skip), and how
//! each reason is said and counted.

use super::IGNORE_FILE_NAMES;
use crate::project::generated::Generated;

/// Why a file was passed over.
#[derive(Clone, Debug, PartialEq)]
pub enum SkipReason {
    Binary,
    TooLarge {
        size: u64,
        limit: u64,
    },
    NotUtf8Path,
    OutsideRoot,
    /// A followed link that resolves inside the root but outside the paths
    /// walked (for a server, the paths it serves).
    OutsidePaths,
    Symlink,
    /// The file vanished between walking and reading.
    Vanished,
    /// An I/O error: permissions, a symlink loop, a read failure.
    Error(String),
    /// A lock file, minified bundle or generated code (`generated`).
    Generated(Generated),
    /// A catalog's project whose directory has moved or vanished: where it
    /// was, "any more", and what is there now if a link is.
    MissingProject(String),
    /// A FIFO, socket or device: never read (a FIFO would block the run).
    Special,
    /// The file this process writes its output or its errors to (as
    /// ripgrep leaves it out): a server's log inside the tree it serves
    /// would be indexed at each refresh, and each index run would write
    /// to it again.
    OwnOutput,
}

impl SkipReason {
    /// Short machine-readable name used in records.
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge { .. } => "too_large",
            SkipReason::NotUtf8Path => "non_utf8_path",
            SkipReason::OutsideRoot => "outside_root",
            SkipReason::OutsidePaths => "outside_paths",
            SkipReason::Symlink => "symlink",
            SkipReason::Vanished => "vanished",
            SkipReason::Error(_) => "error",
            SkipReason::Generated(_) => "generated",
            SkipReason::MissingProject(_) => "missing_project",
            SkipReason::Special => "special",
            SkipReason::OwnOutput => "own_output",
        }
    }

    /// Whether a user should hear about it by default (binary files and
    /// unfollowed symlinks are routine, as in ripgrep, and so are lock
    /// files and minified bundles).
    pub fn is_notable(&self) -> bool {
        !matches!(self, SkipReason::Binary | SkipReason::Symlink | SkipReason::Generated(_))
    }

    /// Whether every run says so, a search's too: a whole project of a
    /// catalog is missing from the results.
    pub fn is_warning(&self) -> bool {
        matches!(self, SkipReason::MissingProject(_))
    }

    /// Whether it is an error that may pass by itself, so that a later run
    /// reads what this one could not: too many open files, a failing read,
    /// memory short. Not a link loop, a name too long, an ignore file that
    /// is not UTF-8: those stay until the user changes something. Said by
    /// the system's error number, which an I/O error's words hold, at their
    /// end or before what the walk adds (an ignore file's "; its directory
    /// is not walked", whose failing read went unsaid: audit 225).
    pub fn may_pass(&self) -> bool {
        let SkipReason::Error(said) = self else { return false };
        let number = said
            .rsplit_once("(os error ")
            .and_then(|(_, n)| n.split_once(')'))
            .and_then(|(n, _)| n.parse::<i32>().ok());
        matches!(
            number,
            Some(
                libc::EMFILE
                    | libc::ENFILE
                    | libc::EIO
                    | libc::ENOMEM
                    | libc::EAGAIN
                    | libc::EINTR
                    | libc::ETIMEDOUT
                    | libc::ENOBUFS
                    | libc::ESTALE
            )
        )
    }

    /// Whether it makes the run end with status 2, as a read error does in ripgrep.
    pub fn is_error(&self) -> bool {
        matches!(self, SkipReason::Error(_))
    }

    pub fn describe(&self) -> String {
        match self {
            SkipReason::Binary => "binary file".into(),
            SkipReason::TooLarge { size, limit } => {
                format!("{size} bytes is over max_filesize ({limit} bytes)")
            }
            SkipReason::NotUtf8Path => "path is not valid UTF-8".into(),
            SkipReason::OutsideRoot => "resolves outside the project root".into(),
            SkipReason::OutsidePaths => "resolves outside the paths walked".into(),
            // Not "pass --follow": a revision's links are never followed (audit 214).
            SkipReason::Symlink => "symbolic link (not followed; in a working tree, --follow follows it)".into(),
            SkipReason::Vanished => "file vanished while indexing".into(),
            SkipReason::Error(e) => e.clone(),
            SkipReason::Generated(g) => format!("{} (pass --include-generated to index it)", g.describe()),
            SkipReason::MissingProject(dir) => {
                format!("the catalog's project is not at {dir} (its files leave the index; vg-catalog remove-project drops it)")
            }
            SkipReason::Special => "not a regular file (a FIFO, socket or device)".into(),
            SkipReason::OwnOutput => "the file this process writes its output or errors to".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Skip {
    /// Root-relative where possible, else the path as found.
    pub path: String,
    pub reason: SkipReason,
}

impl Skip {
    /// Where the indexed files this skip leaves unseen are, which an index
    /// run keeps as they are: an error's own path, and for an ignore file
    /// that cannot be read, the directory it rules, which the walk did not
    /// enter ("" for the whole tree).
    pub fn unseen_under(&self) -> &str {
        let ignore_file_dir = IGNORE_FILE_NAMES.iter().find_map(|name| match self.path.strip_suffix(name)? {
            "" => Some(""),
            dir => dir.strip_suffix('/'),
        });
        match ignore_file_dir {
            Some(dir) if self.reason.is_error() => dir,
            _ => &self.path,
        }
    }
}
