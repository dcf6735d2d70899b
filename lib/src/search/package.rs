//! `--package NAME`: a search kept to the files of one package, each file's
//! package being its nearest manifest's (`project::PackageIndex`), read
//! from the whole root's walk so that a manifest above the paths searched
//! still counts.

use std::collections::HashSet;

use anyhow::{bail, Result};

use crate::project::{walk, AdmittedPath, PackageIndex, ProjectRoot, ResolvedConfig, WalkOptions};

/// The root-relative paths of the files of package `name` under `root`, or
/// an error naming the packages there are.
pub fn package_files(root: &ProjectRoot, config: &ResolvedConfig, name: &str) -> Result<HashSet<String>> {
    let whole = [AdmittedPath::whole(root)];
    let files = walk(root, &whole, &WalkOptions::unfiltered(config))?.files;
    let packages = PackageIndex::build(&root.path, files.iter().map(|f| f.rel.as_str()));
    let kept: HashSet<String> =
        files.into_iter().filter(|f| packages.package_of(&f.rel) == Some(name)).map(|f| f.rel).collect();
    if kept.is_empty() {
        let names = packages.names();
        if names.is_empty() {
            bail!("no package named '{name}': no package manifest here names one (package.json, Cargo.toml, pyproject.toml, go.mod, ...)");
        }
        let shown: Vec<&str> = names.iter().take(12).copied().collect();
        let more =
            if names.len() > shown.len() { format!(" and {} more", names.len() - shown.len()) } else { String::new() };
        bail!("no package named '{name}' here; the manifests name {}{more}", shown.join(", "));
    }
    Ok(kept)
}
