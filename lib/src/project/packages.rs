//! Which package each file belongs to: the nearest package manifest at or
//! above its directory that names one (`package.json`'s name, `Cargo.toml`'s
//! `[package]`, `pyproject.toml`'s project, `go.mod`'s module, ...), read
//! once per run from the directories of the files a walk admitted and
//! those above them, as monodex's package index is. It says what `--package` keeps and what a chunk's context names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Directory (root-relative, `""` for the root) → the package its manifest names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackageIndex {
    by_dir: BTreeMap<String, String>,
}

impl PackageIndex {
    /// The packages named by the manifests in the directories of `files`
    /// (root-relative, under `root`) and in every directory above them up
    /// to the root, so that a run over part of a tree sees the manifests
    /// above it. Where one directory has several, the first by name wins.
    pub fn build<'f>(root: &Path, files: impl IntoIterator<Item = &'f str>) -> PackageIndex {
        let mut dirs: BTreeSet<&str> = BTreeSet::new();
        for rel in files {
            let mut dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
            while dirs.insert(dir) && !dir.is_empty() {
                dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
            }
        }
        let by_dir = dirs.into_iter().filter_map(|dir| Some((dir.to_string(), named_in(&root.join(dir))?))).collect();
        PackageIndex { by_dir }
    }

    /// The package of root-relative `path`: its nearest manifest's.
    pub fn package_of(&self, path: &str) -> Option<&str> {
        let mut dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        loop {
            if let Some(name) = self.by_dir.get(dir) {
                return Some(name);
            }
            if dir.is_empty() {
                return None;
            }
            dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
        }
    }

    /// Every package named, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.by_dir.values().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The package the first manifest (by file name) in `dir` names, if any.
fn named_in(dir: &Path) -> Option<String> {
    let mut manifests: Vec<(String, Manifest)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            Manifest::of(&name).filter(|_| e.file_type().is_ok_and(|t| t.is_file())).map(|m| (name, m))
        })
        .collect();
    manifests.sort_by(|a, b| a.0.cmp(&b.0));
    manifests.into_iter().find_map(|(name, kind)| {
        // Past the bound a manifest is not read at all, not read whole and dropped.
        let bytes = super::small_file::read_small(&dir.join(&name), MAX_MANIFEST_BYTES).ok().flatten()?;
        let text = String::from_utf8(bytes).ok()?;
        kind.name(&text).filter(|n| is_plain(n))
    })
}

/// Larger files are not manifests anyone wrote by hand.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// A name worth showing: one line, short, no control characters.
fn is_plain(name: &str) -> bool {
    !name.is_empty() && name.len() <= 200 && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The manifests read, by the file's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Manifest {
    PackageJson,
    CargoToml,
    Pyproject,
    SetupCfg,
    GoMod,
    ComposerJson,
    PomXml,
    Gemspec,
    MixExs,
    Pubspec,
    Cabal,
}

impl Manifest {
    fn of(file: &str) -> Option<Manifest> {
        Some(match file {
            "package.json" => Manifest::PackageJson,
            "Cargo.toml" => Manifest::CargoToml,
            "pyproject.toml" => Manifest::Pyproject,
            "setup.cfg" => Manifest::SetupCfg,
            "go.mod" => Manifest::GoMod,
            "composer.json" => Manifest::ComposerJson,
            "pom.xml" => Manifest::PomXml,
            "mix.exs" => Manifest::MixExs,
            "pubspec.yaml" => Manifest::Pubspec,
            f if f.ends_with(".gemspec") => Manifest::Gemspec,
            f if f.ends_with(".cabal") => Manifest::Cabal,
            _ => return None,
        })
    }

    /// The package `text` names, if it names one (a workspace's root
    /// `Cargo.toml` names none, so its members' files look further up).
    fn name(self, text: &str) -> Option<String> {
        match self {
            Manifest::PackageJson | Manifest::ComposerJson => {
                let value: serde_json::Value = serde_json::from_str(text).ok()?;
                value.get("name")?.as_str().map(str::to_string)
            }
            Manifest::CargoToml => toml_name(text, &[&["package", "name"]]),
            Manifest::Pyproject => toml_name(text, &[&["project", "name"], &["tool", "poetry", "name"]]),
            Manifest::SetupCfg => ini_name(text),
            Manifest::GoMod => go_module(text),
            Manifest::PomXml => pom_artifact(text),
            Manifest::Gemspec => quoted_after(text, ".name"),
            Manifest::MixExs => text.split("app:").nth(1).and_then(|r| {
                let r = r.trim_start().strip_prefix(':')?;
                Some(r.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
            }),
            Manifest::Pubspec | Manifest::Cabal => {
                text.lines().find_map(|l| l.strip_prefix("name:").map(|n| n.trim().trim_matches('"').to_string()))
            }
        }
    }
}

fn toml_name(text: &str, paths: &[&[&str]]) -> Option<String> {
    let value: toml::Value = toml::from_str(text).ok()?;
    paths.iter().find_map(|path| {
        let found = path.iter().try_fold(&value, |v, key| v.get(key))?;
        found.as_str().map(str::to_string)
    })
}

/// `name = x` in `setup.cfg`'s `[metadata]` section.
fn ini_name(text: &str) -> Option<String> {
    let mut in_metadata = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_metadata = line == "[metadata]";
        } else if let Some(value) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('=')) {
            if in_metadata {
                return Some(value.trim().to_string());
            }
        }
    }
    None
}

/// A Go module's name: the last part of its path that is not a major
/// version (`example.org/x/gin/v2` → `gin`).
fn go_module(text: &str) -> Option<String> {
    let path = text.lines().find_map(|l| l.trim().strip_prefix("module "))?.trim().trim_matches('"');
    let is_major = |p: &&str| p.len() > 1 && p.starts_with('v') && p[1..].bytes().all(|b| b.is_ascii_digit());
    path.rsplit('/').find(|p| !is_major(p)).map(str::to_string)
}

/// A Maven project's own `artifactId`, not its parent's.
fn pom_artifact(text: &str) -> Option<String> {
    let own = match (text.find("<parent>"), text.find("</parent>")) {
        (Some(start), Some(end)) if start < end => format!("{}{}", &text[..start], &text[end..]),
        _ => text.to_string(),
    };
    let start = own.find("<artifactId>")? + "<artifactId>".len();
    let end = own[start..].find("</artifactId>")? + start;
    Some(own[start..end].trim().to_string())
}

/// The quoted string after `key` and an `=` (`spec.name = "rake"`).
fn quoted_after(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.split_once(key)?.1.trim_start().strip_prefix('=')?.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        Some(rest[1..].split(quote).next()?.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::WalkedFile;

    fn walked(dir: &tempfile::TempDir, files: &[(&str, &str)]) -> Vec<WalkedFile> {
        files
            .iter()
            .map(|(rel, text)| {
                let abs = dir.path().join(rel);
                std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
                std::fs::write(&abs, text).unwrap();
                WalkedFile { rel: rel.to_string(), abs, size: text.len() as u64, mtime_ns: 0, ctime_ns: 0 }
            })
            .collect()
    }

    #[test]
    fn each_file_belongs_to_its_nearest_manifest_that_names_a_package() {
        let dir = tempfile::tempdir().unwrap();
        let files = walked(
            &dir,
            &[
                ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
                ("crates/core/Cargo.toml", "[package]\nname = \"acme-core\"\nversion = \"0.1.0\"\n"),
                ("crates/core/src/lib.rs", "pub fn f() {}\n"),
                ("web/package.json", "{\"name\": \"@acme/web\", \"version\": \"1.0.0\"}\n"),
                ("web/src/app/main.ts", "export const x = 1;\n"),
                ("tools/main.py", "print(1)\n"),
            ],
        );
        let index = PackageIndex::build(dir.path(), files.iter().map(|f| f.rel.as_str()));
        assert_eq!(index.package_of("crates/core/src/lib.rs"), Some("acme-core"));
        assert_eq!(index.package_of("web/src/app/main.ts"), Some("@acme/web"));
        assert_eq!(index.package_of("tools/main.py"), None, "a workspace root names no package");
        assert_eq!(index.names(), ["@acme/web", "acme-core"]);
    }

    #[test]
    fn every_manifest_kind_gives_its_name() {
        let cases: [(&str, &str, Option<&str>); 13] = [
            ("pyproject.toml", "[project]\nname = \"requests\"\n", Some("requests")),
            ("pyproject.toml", "[tool.poetry]\nname = \"poetry-app\"\n", Some("poetry-app")),
            ("setup.cfg", "[options]\nname = no\n[metadata]\nname = attrs\nversion = 1\n", Some("attrs")),
            ("go.mod", "module example.org/gin-gonic/gin/v2\n\ngo 1.21\n", Some("gin")),
            ("composer.json", "{\"name\": \"laravel/framework\"}", Some("laravel/framework")),
            (
                "pom.xml",
                "<project><parent><artifactId>parent</artifactId></parent><artifactId>core</artifactId></project>",
                Some("core"),
            ),
            ("rake.gemspec", "Gem::Specification.new do |s|\n  s.name = \"rake\"\nend\n", Some("rake")),
            ("mix.exs", "def project do\n  [app: :phoenix, version: \"1.0\"]\nend\n", Some("phoenix")),
            ("pubspec.yaml", "name: flutter_app\nversion: 1.0.0\n", Some("flutter_app")),
            ("pandoc.cabal", "cabal-version: 2.4\nname:          pandoc\n", Some("pandoc")),
            ("package.json", "{\"private\": true}", None),
            ("package.json", "not json", None),
            ("Cargo.toml", "[package]\nname = \"has space\"\n", None),
        ];
        for (file, text, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            let files = walked(&dir, &[(file, text), ("src/x", "")]);
            let index = PackageIndex::build(dir.path(), files.iter().map(|f| f.rel.as_str()));
            assert_eq!(index.package_of("src/x"), want, "{file}: {text}");
        }
    }
}
