"""Packs what the reranker's training reads into one folder small enough to
travel to a GPU machine (rebuild.sh pack): MiniLM's weights and tokenizer
(as train/transformer/prepare.py packs them), the mined pairs with each
definition's path, the evals' questions, and each question's first 30
results as vecgrep ranks them, with their text: what a reranker reorders.
So the GPU machine needs neither vecgrep nor the evals' trees.

usage: pack.py OUT --vecgrep BIN [--pairs FILE] [--sb DIR] [--docstring DIR...] [--heldout DIR...]

candidates.jsonl.xz, one line a question: {"eval": "sb/flask", "query": ...,
"hits": [{"file", "start_line", "end_line", "text"}, ...]} in vecgrep's
order. The trees' indexes decide the regime: static indexes give the first
answer's candidates, indexes built with --full the fully embedded ones'.
"""
import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "transformer"))
import prepare  # noqa: E402  (MiniLM's weights as they travel)

K = 30
# The model reads 256 tokens of a candidate; a few thousand characters cover them.
MAX_CHARS = 3000


def ranked(vecgrep, tree, query):
    """vecgrep's first K hits for `query` in `tree`, without indexing it again."""
    out = subprocess.run([vecgrep, "-q", "--no-index", "--json", "-k", str(K), "--threshold", "0", "--", query, "."],
                         cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"vecgrep failed in {tree} on {query!r}: {out.stderr.strip()}")
    hits = []
    for line in out.stdout.splitlines():
        r = json.loads(line)
        if r.get("type") == "hit":
            hits.append({"file": r["file"], "start_line": r["start_line"], "end_line": r["end_line"],
                         "text": r["text"][:MAX_CHARS]})
    return hits


def eval_candidates(vecgrep, src, kind, out, w):
    """The questions of the eval at `src` with their candidates; its meta and
    questions copied to OUT/evals/KIND/NAME, where SB's scorer reads them."""
    name = os.path.basename(os.path.normpath(src))
    tree = os.path.join(src, "tree")
    dest = os.path.join(out, "evals", kind, name)
    os.makedirs(dest, exist_ok=True)
    for f in ("meta.json", "qrels.jsonl"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dest)
    if os.path.islink(tree) and not os.path.lexists(os.path.join(dest, "tree")):
        os.symlink(os.readlink(tree), os.path.join(dest, "tree"))  # SB's scorer names files through it
    n = 0
    for line in open(os.path.join(src, "qrels.jsonl"), encoding="utf-8"):
        if not line.strip():
            continue
        query = json.loads(line)["query"]
        w.write(json.dumps({"eval": f"{kind}/{name}", "query": query, "hits": ranked(vecgrep, tree, query)}) + "\n")
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--vecgrep", required=True)
    ap.add_argument("--pairs", default=os.path.join(prepare.cache_dir(), "corpus", "pairs.jsonl"))
    ap.add_argument("--sb", help="SB's evals/ folder, each tree indexed")
    ap.add_argument("--docstring", nargs="*", default=[])
    ap.add_argument("--heldout", nargs="*", default=[])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"weights: {prepare.pack_model(args.out)} tensors")
    # What the reranker reads of each definition: its path and code.
    pairs = prepare.pack_pairs(args.pairs, args.out, "rerank-pairs.jsonl.xz",
                               ("query", "path", "code", "lang", "package"))
    prepare.record_pack(args.pairs, pairs, args.out)
    with lzma.open(os.path.join(args.out, "candidates.jsonl.xz"), "wt", encoding="utf-8") as w:
        if args.sb:
            for name in sorted(os.listdir(args.sb)):
                n = eval_candidates(args.vecgrep, os.path.join(args.sb, name), "sb", args.out, w)
                print(f"sb/{name}: {n} questions")
        for kind, dirs in (("doc", args.docstring), ("heldout", args.heldout)):
            for d in dirs:
                print(f"{kind}: {eval_candidates(args.vecgrep, d, kind, args.out, w)} questions")


if __name__ == "__main__":
    main()
