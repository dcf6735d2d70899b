#!/usr/bin/env python3
"""Whether a project's concepts find code the words of a question miss.

Questions in bench/concepts/queries.jsonl name tokio's parts in a
vocabulary tokio does not use ("the turnstile that lets only a few holders
in", for its Semaphore); bench/concepts/kg/ holds the concepts that bridge
the two, as a team would write them. tokio 1.50.0's source is copied to a
temp dir and indexed once; every question is then asked with and without
the concepts, in hybrid and lexical mode, and ranked by file (the first
hit in a relevant file or directory).

Also printed: how often vg-query's judgement agrees with the truth
(sufficient when a relevant file is in the top 3, insufficient when not).

usage: bench/concept-eval.py [BIN_DIR]   (default: target/release)
"""
import json, os, shutil, subprocess, sys, tempfile

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bins = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "target", "release")
here = os.path.join(repo, "bench", "concepts")


def tokio_source():
    out = subprocess.run([os.path.join(repo, "bench", "tokio-source.sh")], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"concept-eval: {out.stderr.strip()}")
    return out.stdout.strip()


def run(tool, *args, cwd):
    out = subprocess.run([os.path.join(bins, tool), *args], cwd=cwd, capture_output=True, text=True)
    if out.returncode > 1:
        sys.exit(f"concept-eval: {tool} failed: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def relevant(file, wanted):
    return any(file == w or (w.endswith("/") and file.startswith(w)) for w in wanted)


def ask(tree, question, mode):
    records = run("vg-query", "--no-index", "--judge", "-k", "10", "--threshold", "0", "--mode", mode,
                  question["query"], ".", cwd=tree)
    files = [r["file"] for r in records if r.get("type") == "hit"]
    judgement = next((r for r in records if r.get("type") == "judgement"), None)
    rank = next((i + 1 for i, f in enumerate(files) if relevant(f, question["relevant"])), None)
    return rank, judgement


def main():
    questions = [json.loads(line) for line in open(os.path.join(here, "queries.jsonl"))]
    work = tempfile.mkdtemp(prefix="vg-concepts-")
    try:
        tree = os.path.join(work, "tokio")
        shutil.copytree(tokio_source(), tree)
        subprocess.run(["git", "init", "-q", tree], check=True)
        run("vg-index", "-q", ".", cwd=tree)
        kg = os.path.join(tree, ".vecgrep", "kg")
        print(f"{len(questions)} questions over tokio 1.50.0, {len(os.listdir(os.path.join(here, 'kg')))} concepts")
        print(f"{'mode':8} {'concepts':9} {'mrr@10':>7} {'hit@1':>6} {'hit@10':>7} {'judge agrees':>13}")
        for mode in ["hybrid", "lexical"]:
            for with_concepts in [False, True]:
                shutil.rmtree(kg, ignore_errors=True)
                if with_concepts:
                    shutil.copytree(os.path.join(here, "kg"), kg)
                ranks, agree = [], 0
                for q in questions:
                    rank, judgement = ask(tree, q, mode)
                    ranks.append(rank)
                    right = rank is not None and rank <= 3
                    agree += judgement is not None and (judgement["verdict"] == "sufficient") == right
                n = len(ranks)
                mrr = sum(1 / r for r in ranks if r) / n
                hit1 = sum(1 for r in ranks if r == 1) / n
                hit10 = sum(1 for r in ranks if r) / n
                label = "with" if with_concepts else "without"
                print(f"{mode:8} {label:9} {mrr:7.3f} {hit1:6.2f} {hit10:7.2f} {agree:>8} / {n}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
