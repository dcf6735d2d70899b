"""SB (the semble benchmark's dev split) with a static table alone: each
question's static vector against every chunk's, as vecgrep chunked and
indexed the tree, the first 10 chunks scored by SB's own scorer (chunk
regime). It measures a table in seconds, without building vecgrep; the
figures that count are bench/eval.sh's, through the real binaries.

usage: sb_eval.py TABLE [--sb DIR]     (TABLE: a static table file)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import data

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_EVAL = os.environ.get("VG_EVAL_TOOLS") or os.path.join(HERE, "..", "..", "..", "shared", "eval")


def sb_dir():
    return os.environ.get("SB_DIR") or os.path.join(os.environ.get("TMPDIR", "/tmp"), "sb")


class SB:
    """The dev split's trees, their chunks as bags and their questions."""

    def __init__(self, bags, root=None, only=None):
        self.root = root or sb_dir()
        self.repos = []
        evals = os.path.join(self.root, "evals")
        for name in sorted(os.listdir(evals)):
            if only and name not in only:
                continue
            tree = os.path.join(evals, name, "tree")
            chunks = data.index_chunks(tree)
            texts = [f"{c['around']}\n{c['text']}" for c in chunks]
            queries = [json.loads(l) for l in open(os.path.join(evals, name, "qrels.jsonl"), encoding="utf-8")]
            self.repos.append({
                "name": name, "dir": os.path.join(evals, name), "chunks": chunks,
                "bags": bags.matrix(bags.ids(texts)),
                "queries": [q["query"] for q in queries],
                "query_bags": bags.matrix(bags.ids([q["query"] for q in queries])),
            })

    def rank(self, table, k=10):
        """One results line per question: the k chunks nearest in meaning."""
        lines = []
        for repo in self.repos:
            c = data.embed(table, repo["bags"])
            q = data.embed(table, repo["query_bags"])
            scores = q @ c.T
            top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
            for qi, row in enumerate(top):
                results = [{"file": repo["chunks"][i]["file"], "start_line": repo["chunks"][i]["start"],
                            "end_line": repo["chunks"][i]["end"]} for i in row]
                lines.append({"repo": repo["name"], "query": repo["queries"][qi], "results": results})
        return lines

    def score(self, table):
        """SB's figures: overall and per category (macro over repositories), per repository."""
        return score_results(self.rank(table), [r["dir"] for r in self.repos])


def score_results(lines, dirs, score_py=None):
    """Results lines (repo, query, results) scored by SB's own scorer in the
    chunk regime over the eval `dirs`: its JSON (overall_macro, category_macro, ...)."""
    score_py = score_py or os.path.join(SHARED_EVAL, "sb", "score.py")
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results.jsonl")
        out = os.path.join(tmp, "score.json")
        with open(results, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        cmd = [sys.executable, score_py, *dirs, "--results", results, "--regime", "chunk", "--json", out]
        subprocess.run(cmd, check=True, capture_output=True)
        return json.load(open(out))


def summary(score):
    c = score["category_macro"]
    return (f"all {score['overall_macro']:.4f} arch {c.get('architecture', 0):.4f} "
            f"sem {c.get('semantic', 0):.4f} sym {c.get('symbol', 0):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--sb")
    args = ap.parse_args()
    bags = data.Bags()
    sb = SB(bags, args.sb)
    table = data.read_table(args.table)[0] if args.table else data.distilled_table()
    print(summary(sb.score(table)))


if __name__ == "__main__":
    main()
