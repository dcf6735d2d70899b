//! Where a search happens and what it covers: the project root, the
//! settings of one invocation, and the files a walk admits.

pub mod config;
pub mod generated;
pub mod root;
mod settings;
pub mod walk;

/// Name of the per-project directory that holds the index and project config.
pub const PROJECT_DIR: &str = ".vecgrep";
