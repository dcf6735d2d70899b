#!/usr/bin/env python3
"""Fetch the corpus's packages (packages.tsv) through their registries' own
clients, check each file against its pinned sha256, and unpack it once.

Everything lands in a cache (default ~/.cache/vecgrep/train, or
$VECGREP_TRAIN_CACHE): downloads under dl/<source>/, sources under
src/<source>/<name>-<version>/. A package already unpacked is not fetched
again, so a second run does no network I/O.

usage: fetch.py [--pin] [--only NAME ...]
  --pin   write the sha256 of each fetched file into packages.tsv where it
          says '-' (done once, when a package is added); without it a
          package whose file differs from its pin is an error.
"""
import argparse
import fnmatch
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = os.path.join(HERE, "packages.tsv")


def cache_dir():
    return os.environ.get("VECGREP_TRAIN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vecgrep", "train")


class Package:
    """One line of packages.tsv."""

    def __init__(self, line_no, fields):
        if len(fields) != 6:
            raise ValueError(f"packages.tsv:{line_no}: expected 6 tab-separated fields, got {len(fields)}")
        self.line_no = line_no
        self.source, self.name, self.version, self.sha256, langs, include = fields
        self.languages = langs.split(",")
        self.include = [] if include == "-" else include.split(";")

    @property
    def key(self):
        return f"{self.name.replace('/', '+')}-{self.version}"

    def includes(self, rel):
        """Whether the file at `rel` (relative to the unpacked package) is one the corpus may take."""
        return not self.include or any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch("/" + rel, "*/" + g)
                                       for g in self.include)

    def src_dir(self):
        return os.path.join(cache_dir(), "src", self.source, self.key)


def read_packages(path=PACKAGES):
    packages = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            packages.append(Package(no, line.split("\t")))
    return packages


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(cmd, cwd=None):
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout


def download(pkg, into):
    """The package's file in `into`, fetched by its registry's client."""
    os.makedirs(into, exist_ok=True)
    if pkg.source == "debian":
        # apt writes an epoch's colon as %3a in the file name.
        stored = glob.escape(pkg.version.replace(":", "%3a"))
        found = glob.glob(os.path.join(into, f"{pkg.name}_{stored}_*.deb"))
        if not found:
            run(["apt-get", "download", "-q", f"{pkg.name}={pkg.version}"], cwd=into)
            found = glob.glob(os.path.join(into, f"{pkg.name}_{stored}_*.deb"))
    elif pkg.source in ("pypi", "pypi-sdist"):
        # Wheels hold a library's Python sources and need no build; an sdist
        # (pypi-sdist) is taken where the wheel holds only compiled code.
        stem = re.sub(r"[-_.]+", "_", pkg.name).lower()
        pattern = lambda: [p for p in glob.glob(os.path.join(into, "*"))
                           if re.sub(r"[-_.]+", "_", os.path.basename(p)).lower().startswith(
                               f"{stem}_{re.sub(r'[-_.]+', '_', pkg.version)}_")
                           and p.endswith(".whl" if pkg.source == "pypi" else (".tar.gz", ".zip"))]
        found = pattern()
        if not found:
            kind = (["--only-binary", ":all:", "--platform", "manylinux2014_x86_64", "--python-version", "3.11",
                     "--implementation", "cp", "--abi", "cp311"] if pkg.source == "pypi" else ["--no-binary", ":all:"])
            run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *kind, f"{pkg.name}=={pkg.version}", "-d", into])
            found = pattern()
    elif pkg.source == "npm":
        stem = pkg.name.lstrip("@").replace("/", "-")
        found = glob.glob(os.path.join(into, f"{stem}-{pkg.version}.tgz"))
        if not found:
            # Errors only: --silent left a failure nothing to say (audit 217).
            run(["npm", "pack", "--loglevel=error", f"{pkg.name}@{pkg.version}", "--pack-destination", into])
            found = glob.glob(os.path.join(into, f"{stem}-{pkg.version}.tgz"))
    elif pkg.source == "crates":
        found = glob.glob(os.path.expanduser(f"~/.cargo/registry/cache/*/{pkg.name}-{pkg.version}.crate"))
        if not found:
            fetch_crate(pkg)
            found = glob.glob(os.path.expanduser(f"~/.cargo/registry/cache/*/{pkg.name}-{pkg.version}.crate"))
    else:
        raise ValueError(f"packages.tsv:{pkg.line_no}: unknown source '{pkg.source}'")
    if len(found) != 1:
        raise RuntimeError(f"{pkg.source} {pkg.name} {pkg.version}: expected one file, found {found}")
    return found[0]


def fetch_crate(pkg):
    """cargo fetches the crate (its own download, checked against the index)."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "Cargo.toml"), "w") as f:
            f.write(f'[package]\nname = "corpus-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
                    f'[dependencies]\n"{pkg.name}" = "={pkg.version}"\n')
        os.makedirs(os.path.join(tmp, "src"))
        open(os.path.join(tmp, "src", "lib.rs"), "w").close()
        run(["cargo", "fetch", "-q"], cwd=tmp)


def unpack(pkg, archive, dest):
    """The archive's files under `dest` (atomically: a half-unpacked package is never seen)."""
    stage = dest + ".partial"
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    if archive.endswith(".deb"):
        run(["dpkg-deb", "-x", archive, stage])
        # Source packages such as glibc-source carry their sources as tarballs.
        for inner in glob.glob(os.path.join(stage, "usr/src/*/*.tar.*")):
            dest_dir = os.path.join(os.path.dirname(inner), "unpacked")
            prefix = os.path.relpath(dest_dir, stage) + "/"
            extract_tar(inner, dest_dir, lambda name: pkg.includes(prefix + name))
            os.remove(inner)
        for inner in glob.glob(os.path.join(stage, "usr/lib/jvm/*/lib/src.zip")):
            with zipfile.ZipFile(inner) as z:
                z.extractall(os.path.join(stage, "src"), members=[n for n in z.namelist() if pkg.includes("src/" + n)])
            os.remove(inner)
    elif archive.endswith(".zip") or archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(stage)
    else:
        extract_tar(archive, stage)
    os.replace(stage, dest)


def extract_tar(archive, dest, wanted=lambda name: True):
    """The archive's regular files under `dest`, those `wanted` says of their
    names (a source tarball inside a package holds far more than the corpus
    takes), read as a stream: links are left out, since seeking back in a
    compressed stream for one decompresses it again from the start."""
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(archive, mode="r|*") as t:
        for member in t:
            if member.isfile() and wanted(member.name):
                t.extract(member, dest, filter="data")


def fetch(pkg, pin):
    """Fetch (or find in the cache) the package's file, check it against its
    pin, and unpack it if it is not yet; True when it was unpacked now."""
    archive = download(pkg, os.path.join(cache_dir(), "dl", pkg.source))
    digest = sha256_of(archive)
    if pkg.sha256 == "-":
        if not pin:
            raise RuntimeError(f"packages.tsv:{pkg.line_no}: {pkg.name} has no sha256 pin (run with --pin once)")
        pkg.sha256 = digest
    elif digest != pkg.sha256:
        raise RuntimeError(f"{pkg.source} {pkg.name} {pkg.version}: sha256 {digest} is not the pinned {pkg.sha256}")
    if os.path.isdir(pkg.src_dir()):
        return False
    unpack(pkg, archive, pkg.src_dir())
    return True


def write_pins(packages, path=PACKAGES):
    """Each package's sha256 into its line, found by source, name and version."""
    pins = {(p.source, p.name, p.version): p.sha256 for p in packages}
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        fields = line.split("\t")
        if len(fields) == 6 and not line.startswith("#") and (fields[0], fields[1], fields[2]) in pins:
            fields[3] = pins[(fields[0], fields[1], fields[2])]
            lines[i] = "\t".join(fields)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    packages = read_packages()
    failed = 0
    for pkg in packages:
        if args.only and pkg.name not in args.only:
            continue
        try:
            if fetch(pkg, args.pin):
                print(f"fetch: {pkg.source} {pkg.name} {pkg.version}", file=sys.stderr)
        except Exception as e:  # one bad package is reported; the rest still come
            failed += 1
            print(f"fetch: {e}", file=sys.stderr)
    if args.pin:
        write_pins(packages)
    if failed:
        sys.exit(f"fetch: {failed} package(s) failed")


if __name__ == "__main__":
    main()
