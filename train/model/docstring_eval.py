"""The docstring evals (../shared/eval's generators: a function's doc comment
blanked out, its first sentence the question) with a static table alone:
mrr@10 at location level, as run_eval.py scores it (the first result in the
right file whose lines overlap the function's). Seconds per table, for
training runs; the figures that count come from the binaries.

usage: docstring_eval.py TABLE EVAL_DIR...   (each with tree/ indexed)
"""
import json
import os
import sys

import numpy as np

import data


class Docstring:
    def __init__(self, bags, dirs):
        self.evals = []
        for d in dirs:
            chunks = data.index_chunks(os.path.join(d, "tree"))
            qrels = [json.loads(l) for l in open(os.path.join(d, "qrels.jsonl"), encoding="utf-8")]
            self.evals.append({
                "name": os.path.basename(os.path.normpath(d)), "chunks": chunks,
                "bags": bags.matrix(bags.ids([f"{c['around']}\n{c['text']}" for c in chunks])),
                "qrels": qrels, "query_bags": bags.matrix(bags.ids([q["query"] for q in qrels])),
            })

    def score(self, table, k=10):
        """mrr@10 per eval."""
        out = {}
        for ev in self.evals:
            c, q = data.embed(table, ev["bags"]), data.embed(table, ev["query_bags"])
            top = np.argsort(-(q @ c.T), axis=1, kind="stable")[:, :k]
            out[ev["name"]] = mrr(ev["chunks"], ev["qrels"], top)
        return out


def mrr(chunks, qrels, top):
    """mrr@10 at location level, as run_eval.py scores it: each question's
    first result in the right file whose lines overlap the function's.
    `top` holds each question's ranked chunk indices."""
    rr = []
    for qi, row in enumerate(top):
        targets = qrels[qi]["targets"]
        rank = next((r + 1 for r, i in enumerate(row) if any(
            chunks[i]["file"] == t["file"] and chunks[i]["start"] <= t["end_line"]
            and chunks[i]["end"] >= t["start_line"] for t in targets)), None)
        rr.append(1 / rank if rank else 0.0)
    return float(np.mean(rr))


def main():
    bags = data.Bags()
    table = data.read_table(sys.argv[1])[0]
    print(json.dumps(Docstring(bags, sys.argv[2:]).score(table)))


if __name__ == "__main__":
    main()
