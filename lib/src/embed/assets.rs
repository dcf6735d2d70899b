//! Finding the embedding model and ONNX Runtime on disk.
//!
//! Nothing is downloaded at run time: `scripts/fetch-assets.sh` installs the
//! pinned files into a data directory, and this module looks for them there
//! (next to the installed binaries first, then the XDG data directory), with
//! `VECGREP_MODEL_DIR` and `ORT_DYLIB_PATH` as explicit overrides.

use std::path::{Path, PathBuf};

/// The command a user runs to install what is missing.
pub(super) const FIX_COMMAND: &str = "scripts/fetch-assets.sh (from the vecgrep source tree)";

/// File name of the ONNX Runtime shared library the fetch script installs.
pub(super) const ORT_LIBRARY_NAME: &str = "libonnxruntime.so.1.31.1";

/// The models the local embedder runs, each installed by
/// `scripts/fetch-assets.sh` in a directory of its name: MiniLM as
/// published, and MiniLM fine-tuned on code by `train/transformer/` (the
/// same tokenizer and dimensions, so the static table serves both).
pub const LOCAL_MODELS: [&str; 2] = [crate::project::DEFAULT_EMBEDDER_MODEL, CODE_MODEL];

/// vecgrep's own model: MiniLM fine-tuned on documentation -> code pairs.
pub const CODE_MODEL: &str = "vecgrep-code-minilm-l6";

/// Files a local model directory must hold.
pub(super) const MODEL_FILES: [&str; 5] =
    ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];

/// Where the model and runtime were found.
#[derive(Clone, Debug)]
pub struct Assets {
    pub model_dir: PathBuf,
    pub ort_library: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("the embedding model '{model}' is not installed (looked in {looked}); run {FIX_COMMAND} or set VECGREP_MODEL_DIR")]
    ModelMissing { model: String, looked: String },
    #[error("VECGREP_MODEL_DIR={dir} lacks {file}; point it at a directory holding {files}", files = MODEL_FILES.join(", "))]
    ModelDirIncomplete { dir: PathBuf, file: &'static str },
    #[error("VECGREP_MODEL_DIR={dir} is named as the model '{holds}', but '{model}' is asked for (embedder_model); an index would store one model's vectors as the other's. Point it at {model}'s files, or unset it")]
    ModelDirOfAnother { dir: PathBuf, holds: &'static str, model: String },
    #[error("ONNX Runtime ({ORT_LIBRARY_NAME}) is not installed (looked in {looked}); run {FIX_COMMAND} or set ORT_DYLIB_PATH")]
    RuntimeMissing { looked: String },
    #[error("ORT_DYLIB_PATH={0} does not exist")]
    RuntimeOverrideMissing(PathBuf),
    #[error("ONNX Runtime at {path} {why}; {fix}", fix = fix_for(path))]
    RuntimeDamaged { path: PathBuf, why: String },
    #[error("embedder_model '{0}' is not available locally; the local embedder runs {models}", models = LOCAL_MODELS.join(" or "))]
    UnknownModel(String),
}

/// Data directories searched, in order: `<exe dir>/../share/vecgrep` (an
/// installed prefix), then `$XDG_DATA_HOME/vecgrep` (default
/// `~/.local/share/vecgrep`).
pub(super) fn data_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        dirs.push(exe_dir.join("../share/vecgrep"));
    }
    dirs.extend(crate::project::BaseDir::Data.path().map(|data| data.join("vecgrep")));
    dirs
}

/// Locate the model files for `model` and the ONNX Runtime library.
pub fn locate(model: &str) -> Result<Assets, AssetError> {
    let model_dir = locate_model(model)?;
    let ort_library = match std::env::var_os("ORT_DYLIB_PATH").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if !p.is_file() {
                if std::fs::symlink_metadata(&p).is_ok() {
                    let why = "is not a regular file (ORT_DYLIB_PATH)".to_string();
                    return Err(AssetError::RuntimeDamaged { path: p, why });
                }
                return Err(AssetError::RuntimeOverrideMissing(p));
            }
            p
        }
        None => {
            let candidates: Vec<PathBuf> =
                data_dirs().iter().map(|d| d.join("onnxruntime").join(ORT_LIBRARY_NAME)).collect();
            candidates
                .iter()
                .find(|p| p.is_file())
                .cloned()
                .ok_or_else(|| AssetError::RuntimeMissing { looked: display_list(&candidates) })?
        }
    };
    whole_library(&ort_library).map_err(|why| AssetError::RuntimeDamaged { path: ort_library.clone(), why })?;
    Ok(Assets { model_dir, ort_library })
}

/// Whether the shared library at `path` is all there, by its ELF header:
/// one cut short (a copy or a download interrupted) is mapped past its end,
/// and the first call into it kills the process with SIGBUS.
fn whole_library(path: &Path) -> Result<(), String> {
    use std::io::{Read, Seek};
    let mut header = [0u8; 64];
    let file = crate::project::small_file::open_regular(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut file = file.ok_or("is not a regular file")?;
    let len = file.metadata().map_err(|e| format!("cannot be read: {e}"))?.len();
    file.read_exact(&mut header).map_err(|_| "is too short to be a shared library")?;
    // 64-bit little-endian ELF, as every ONNX Runtime this vecgrep runs.
    if header[..6] != [0x7f, b'E', b'L', b'F', 2, 1] {
        return Err("is not a 64-bit shared library".into());
    }
    // The section headers, and every segment the loader maps: a file that
    // ends before one of them was cut short (the section headers usually
    // come last, but a patched library may have a segment after them).
    let mut ends = vec![le(&header[0x28..]).saturating_add(le(&header[0x3A..0x3C]) * le(&header[0x3C..0x3E]))];
    let (table, size, count) = (le(&header[0x20..0x28]), le(&header[0x36..0x38]), le(&header[0x38..0x3A]));
    if size >= 56 && table.saturating_add(size * count) <= len {
        let mut headers = vec![0u8; (size * count) as usize];
        file.seek(std::io::SeekFrom::Start(table))
            .and_then(|_| file.read_exact(&mut headers))
            .map_err(|e| format!("cannot be read: {e}"))?;
        let loaded = headers.chunks(size as usize).filter(|h| le(&h[0..4]) == PT_LOAD);
        ends.extend(loaded.map(|h| le(&h[8..16]).saturating_add(le(&h[32..40]))));
    } else if count > 0 {
        ends.push(table.saturating_add(size * count));
    }
    match ends.into_iter().max().filter(|&end| end > len) {
        Some(end) => Err(format!("ends at byte {len}, before its last part (byte {end}): it was cut short")),
        None => Ok(()),
    }
}

/// A segment the loader maps into memory (ELF's `PT_LOAD`).
const PT_LOAD: u64 = 1;

/// A little-endian unsigned number of `bytes.len()` bytes (at most 8).
fn le(bytes: &[u8]) -> u64 {
    bytes.iter().take(8).rev().fold(0u64, |v, &b| (v << 8) | u64::from(b))
}

/// Locate the directory of `model`'s files alone: what the static tier
/// needs (the tokenizer and the static table), which runs no model.
pub fn locate_model(model: &str) -> Result<PathBuf, AssetError> {
    if !LOCAL_MODELS.contains(&model) {
        return Err(AssetError::UnknownModel(model.to_string()));
    }
    match std::env::var_os("VECGREP_MODEL_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            // Both models share tokenizer, dimensions and static table:
            // nothing else would tell an index it holds the other's vectors.
            let named = dir.file_name().and_then(|n| n.to_str());
            if let Some(holds) = LOCAL_MODELS.into_iter().find(|m| named == Some(*m) && *m != model) {
                return Err(AssetError::ModelDirOfAnother { dir, holds, model: model.to_string() });
            }
            if let Some(file) = MODEL_FILES.iter().find(|f| !dir.join(f).is_file()) {
                return Err(AssetError::ModelDirIncomplete { dir, file });
            }
            Ok(dir)
        }
        None => {
            let candidates: Vec<PathBuf> = data_dirs().iter().map(|d| d.join("models").join(model)).collect();
            candidates
                .iter()
                .find(|d| MODEL_FILES.iter().all(|f| d.join(f).is_file()))
                .cloned()
                .ok_or_else(|| AssetError::ModelMissing { model: model.to_string(), looked: display_list(&candidates) })
        }
    }
}

/// Where the files that belong with the model may be, in order: its own
/// directory, then the model's directory in each data directory (a
/// `VECGREP_MODEL_DIR` of the model alone need not hold the static table).
pub(super) fn model_dirs(model_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![model_dir.to_path_buf()];
    let installed = data_dirs().into_iter().map(|d| d.join("models").join(crate::project::DEFAULT_EMBEDDER_MODEL));
    dirs.extend(installed.filter(|d| d != model_dir));
    dirs
}

/// How to mend the installed file at `path`, found damaged: fetch the
/// assets again into the data directory that holds it (the first looked
/// in may be an installed prefix, where a fetch into the default one
/// changes nothing), or, when a variable names it, that the variable is at
/// fault (audit 183).
pub(super) fn fix_for(path: &Path) -> String {
    let named_by = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from);
    if named_by("ORT_DYLIB_PATH").is_some_and(|p| path == p) {
        return "ORT_DYLIB_PATH names it; point it at a whole library, or unset it".into();
    }
    if named_by("VECGREP_MODEL_DIR").is_some_and(|d| path.starts_with(d)) {
        return "VECGREP_MODEL_DIR names its directory; point it at whole files, or unset it".into();
    }
    let default = crate::project::BaseDir::Data.path().map(|d| d.join("vecgrep"));
    match data_dirs().into_iter().find(|d| path.starts_with(d)) {
        Some(dir) if Some(&dir) != default.as_ref() => {
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            format!("run scripts/fetch-assets.sh --data-dir {} (from the vecgrep source tree)", dir.display())
        }
        _ => format!("run {FIX_COMMAND}"),
    }
}

/// Where assets were looked for, as an error names them; and, where there
/// is no data directory, that it was not looked in and why: with HOME
/// unset (cron, a service) an installed model read as "not installed".
pub(super) fn display_list(paths: &[PathBuf]) -> String {
    let list = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
    match crate::project::BaseDir::Data.path() {
        Some(_) => list,
        None => format!(
            "{list}; not in ~/.local/share/vecgrep: neither an absolute HOME nor an absolute XDG_DATA_HOME is set"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ELF file of `len` bytes whose one loaded segment ends at `segment_end`
    /// and whose section headers (none) end at 64.
    fn elf(len: usize, segment_end: u64) -> Vec<u8> {
        let mut bytes = vec![0u8; len];
        bytes[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
        bytes[0x20..0x28].copy_from_slice(&64u64.to_le_bytes()); // program headers at 64
        bytes[0x28..0x30].copy_from_slice(&64u64.to_le_bytes()); // section headers at 64, none
        bytes[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        bytes[0x38..0x3A].copy_from_slice(&1u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        bytes[64 + 32..64 + 40].copy_from_slice(&segment_end.to_le_bytes()); // offset 0, this many bytes
        bytes
    }

    #[test]
    fn a_library_cut_inside_a_loaded_segment_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.so");
        std::fs::write(&path, elf(4096, 4096)).unwrap();
        assert_eq!(whole_library(&path), Ok(()));
        // Its section headers end in the file; the segment mapped past its end does not.
        std::fs::write(&path, elf(4000, 4096)).unwrap();
        assert_eq!(
            whole_library(&path),
            Err("ends at byte 4000, before its last part (byte 4096): it was cut short".into())
        );
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        assert_eq!(whole_library(&path), Err("is too short to be a shared library".into()));
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        assert_eq!(whole_library(&path), Err("is not a 64-bit shared library".into()));
    }
}
