//! The config files a live index started with, looked at each round: a
//! server or picker keeps the settings it started with, and says so when a
//! file changes (and when the change would fail the next start) rather
//! than pass over the edit in silence.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::project::{self, ConfigValues, ProjectRoot};

/// What a file was when last looked at: its size, inode and change
/// times (a file replaced by a rename is another inode), or absent.
type Stamp = Option<(u64, u64, i64, i64, i64, i64)>;

pub(super) struct ConfigWatch {
    files: Vec<(PathBuf, Stamp)>,
    /// What the next start would resolve with: the project's config and
    /// this start's command line.
    root_config: PathBuf,
    command_line: ConfigValues,
}

fn stamp(path: &PathBuf) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.ino(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()))
}

impl ConfigWatch {
    /// The project's config file and the user's, as they are now, for a
    /// start with `command_line`.
    pub(super) fn new(root: &ProjectRoot, command_line: &ConfigValues) -> Self {
        let root_config = Some(root.config_path()).filter(|p| !project::planted_config(p));
        let paths = root_config.into_iter().chain(project::global_config_path());
        ConfigWatch {
            files: paths.map(|p| (p.clone(), stamp(&p))).collect(),
            root_config: root.config_path(),
            command_line: command_line.clone(),
        }
    }

    /// What to say of each file changed since the last look.
    pub(super) fn changes(&mut self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, was) in &mut self.files {
            let now = stamp(path);
            if now == *was {
                continue;
            }
            *was = now;
            let kept = "the settings in use are those read at the start; start again to apply it";
            said.push(match project::check_next_start(&self.command_line, &self.root_config) {
                Ok(()) => format!("{} changed: {kept}", path.display()),
                Err(e) => format!(
                    "{} changed and a start with the same command line would fail ({e}): {kept}",
                    path.display()
                ),
            });
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::RootMarker;

    /// A project at `dir`, its data directory made.
    fn project_in(dir: &tempfile::TempDir) -> ProjectRoot {
        let root = ProjectRoot { path: dir.path().to_path_buf(), marker: RootMarker::None, shared: None };
        std::fs::create_dir_all(root.data_dir()).unwrap();
        root
    }

    #[test]
    fn each_change_of_the_project_config_is_said_once_and_a_broken_one_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = project_in(&dir);
        let mut watch = ConfigWatch::new(&root, &ConfigValues::default());
        assert!(watch.changes().is_empty());
        std::fs::write(root.config_path(), "top_k = 3\n").unwrap();
        let said = watch.changes();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].ends_with(
                "config.toml changed: the settings in use are those read at the start; start again to apply it"
            ),
            "{said:?}"
        );
        assert!(watch.changes().is_empty(), "said once");
        std::fs::write(root.config_path(), "top_k = 'many'\n").unwrap();
        let said = watch.changes();
        assert!(
            said[0].contains("changed and a start with the same command line would fail (config ")
                && said[0].contains("line 1"),
            "{said:?}"
        );
        std::fs::remove_file(root.config_path()).unwrap();
        assert_eq!(watch.changes().len(), 1, "a removed file is a change");
    }

    /// A file that parses can still fail the next start with the other
    /// layers: the command line the server started with counts.
    #[test]
    fn a_file_that_would_not_resolve_with_the_command_line_says_the_next_start_will_fail() {
        let dir = tempfile::tempdir().unwrap();
        let root = project_in(&dir);
        // Trusted, as an untrusted project's overlap is held to the user's.
        let trusted = ConfigValues { trust_project_config: Some(true), ..ConfigValues::default() };
        let mut plain = ConfigWatch::new(&root, &trusted);
        let wide = ConfigValues { chunk_size: Some(4000), ..trusted };
        let mut widened = ConfigWatch::new(&root, &wide);
        std::fs::write(root.config_path(), "chunk_overlap = 1000\n").unwrap();
        let said = plain.changes();
        assert!(
            said[0].contains("a start with the same command line would fail")
                && said[0].contains("chunk_overlap (1000"),
            "{said:?}"
        );
        let said = widened.changes();
        assert!(said[0].contains("config.toml changed: the settings in use"), "{said:?}");
    }
}
