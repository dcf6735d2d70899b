//! Where a search happens and what it covers: the project root (`root`),
//! the settings of one invocation (`settings`, declared once, and `config`,
//! the files and layers they come from), and the files a walk admits
//! (`walk`, with `generated` telling files made by tools), for one project
//! or for each project of a catalog (`catalog`).

mod base_dirs;
pub mod catalog;
pub(crate) mod config;
mod encoding;
mod generated;
mod packages;
mod root;
mod settings;
pub mod shown;
pub(crate) mod small_file;
pub(crate) mod urls;
mod user;
mod walk;

pub use base_dirs::BaseDir;
pub use config::{check_next_start, global_config_path, planted_config, why_untrusted, ConfigError, ConfigLayers};
pub use encoding::{as_utf8, decode as decode_text, looks_binary, BINARY_SNIFF};
pub use generated::{by_content, Generated};
pub use packages::PackageIndex;
pub(crate) use root::is_users_catalog;
pub use root::{
    admit_paths, admit_paths_lexically, is_below_root, is_under, markers_passed_over, normalize_lexically, planted_by,
    relative_to, root_named, select_root, shared_index, Admission, AdmittedPath, LexicalAdmission, ProjectRoot,
    RootError, RootMarker, SharedIndex, CATALOG_FILE,
};
pub use settings::{
    check_chunk_size, check_threshold, check_top_k, is_commit_id, setting, ByteSize, ConfigValues, EmbedderSource,
    Planner, PrivacyMode, ResolvedConfig, SearchMode, Setting, Threshold, DEFAULT_EMBEDDER_MODEL, MAX_TOP_K,
    MIN_CHUNK_SIZE, SETTINGS,
};
pub(crate) use user::effective_uid;
pub use walk::{check_walk_options, Skip, SkipReason, WalkOptions, WalkResult, WalkedFile};
pub use walk::{
    ctime_ns, in_always_excluded_dir, in_bare_repository, mtime_ns, own_output_for_stages, type_names,
    IGNORE_FILE_NAME, OWN_OUTPUT_VAR,
};

/// Name of the per-project directory that holds the index and project config.
pub const PROJECT_DIR: &str = ".vecgrep";

/// The directory of the revisions' indexes, in the project's data directory
/// (`store::revision_root`); root selection passes over what is in it.
pub const REVS_DIR: &str = "revs";

/// What starts the name of the directory, in `REVS_DIR`, that keeps what
/// this checkout knows of the revisions of one shared index.
pub const SHARED_REVS_PREFIX: &str = "shared-";

/// The project's own settings, in `PROJECT_DIR`.
pub const CONFIG_FILE: &str = "config.toml";

/// Walk `paths` under `root` and collect indexable files, sorted by path:
/// a project's tree, or each project of a catalog.
pub fn walk(root: &ProjectRoot, paths: &[AdmittedPath], opts: &WalkOptions) -> anyhow::Result<WalkResult> {
    if root.marker == RootMarker::Catalog {
        catalog::walk_catalog(root, paths, opts)
    } else {
        walk::walk_tree(root, paths, opts)
    }
}
