#!/usr/bin/env python3
"""Fetch bench/modules/packages.tsv's packages and make a file-level eval of each.

Each package is fetched by its registry's client and checked against its
pinned sha256 (train/corpus/fetch.py's machinery, with a cache of its own:
~/.cache/vecgrep/evals or $VECGREP_EVAL_CACHE), then corpus_modules.py turns
it into DEST/<eval>/ (tree/ and qrels.jsonl), named by language and package:
rs-proptest-mod, go-x-crypto-mod, py-scrapy-mod, ...; a package whose
languages are `prose,python` gives prose-<name>-docs, its documentation
pages asked for beside its code (corpus_modules.py --lang prose). An eval
already made is kept. bench/modules.sh runs them; each is also an eval
../shared/eval/run_eval.py reads.

usage: bench/module-evals.py DEST [--pin] [--packages TSV]
  --packages  another list of the same format (bench/modules/check-packages.tsv:
              evals made to check a change on packages the usual ones are not)
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "train", "corpus"))
import fetch  # noqa: E402  (train/corpus/fetch.py)
from corpus_modules import EXTENSIONS  # noqa: E402

PACKAGES = os.path.join(HERE, "modules", "packages.tsv")
PREFIX = {"rust": "rs", "go": "go", "python": "py", "prose": "prose"}


def eval_name(pkg):
    """rs-proptest-mod for a package's modules, prose-scrapy-docs for its documentation pages."""
    name = pkg.name.removeprefix("golang-golang-").removeprefix("golang-").removesuffix("-dev")
    return f"{PREFIX[pkg.languages[0]]}-{name}-{'docs' if pkg.languages[0] == 'prose' else 'mod'}"


def source_root(pkg):
    """The deepest folder holding all of the package's files of its
    languages that its include globs take (pip's own code, not what it
    vendors)."""
    unpacked = pkg.src_dir()
    extensions = tuple(e for lang in pkg.languages for e in EXTENSIONS[lang])
    dirs = [dp for dp, _, fn in os.walk(unpacked)
            if any(f.endswith(extensions) and pkg.includes(os.path.relpath(os.path.join(dp, f), unpacked))
                   for f in fn)]
    if not dirs:
        raise RuntimeError(f"{unpacked}: no {'/'.join(pkg.languages)} files")
    return os.path.commonpath(dirs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--pin", action="store_true", help="pin the sha256 of packages that have none")
    ap.add_argument("--packages", default=PACKAGES, help="the package list (default: bench/modules/packages.tsv)")
    a = ap.parse_args()
    os.environ.setdefault("VECGREP_TRAIN_CACHE", os.environ.get("VECGREP_EVAL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vecgrep", "evals"))
    try:
        packages = fetch.read_packages(a.packages)
        for pkg in packages:
            make_eval(pkg, a.dest, a.pin)
    except (OSError, RuntimeError, ValueError, subprocess.CalledProcessError) as e:
        sys.exit(f"module-evals: {e}")
    if a.pin:
        fetch.write_pins(packages, a.packages)


def make_eval(pkg, dest, pin):
    """DEST/<eval>/ for `pkg`, fetched (or found in the cache) first; kept when made before."""
    fetch.fetch(pkg, pin)
    out = os.path.join(dest, eval_name(pkg))
    if os.path.exists(os.path.join(out, "qrels.jsonl")):
        return
    lang, *code = pkg.languages
    subprocess.run([sys.executable, os.path.join(HERE, "corpus_modules.py"), source_root(pkg), out,
                    "--lang", lang, *(["--code", code[0]] if code else [])], check=True)


if __name__ == "__main__":
    main()
