#!/usr/bin/env python3
"""Commit search quality: each sampled commit's subject as the query,
searched over the diffs alone (vg-log --diffs-only: messages are not read),
hit = that commit in the top 10. Prints mrr@10, hit@1, hit@10 and the
median latency per ranking mode; lexical is BM25 over the same diffs.

usage: bench/log-eval.py [--repo PATH] [--sample N] [--bin DIR]
  --repo    a git repository (default: this project's); it is cloned to a
            temporary directory, so its own index is never touched
  --sample  commits sampled, evenly over the history (default 60)
  --bin     vecgrep binaries (default: target/release)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def sample_commits(repo, n):
    """Non-merge commits whose subject has at least four words and whose
    diff touches text, evenly spread over the history."""
    out = git(repo, "log", "--no-merges", "--format=%H%x09%s", "--numstat")
    commits, sha, subject, text_files = [], None, None, 0
    for line in out.splitlines() + [""]:
        if "\t" in line and len(line.split("\t")[0]) == 40 and line.count("\t") == 1:
            if sha and text_files and len(subject.split()) >= 4:
                commits.append((sha, subject))
            sha, subject = line.split("\t")
            text_files = 0
        elif line and line[0].isdigit():
            text_files += 1
    if sha and text_files and len(subject.split()) >= 4:
        commits.append((sha, subject))
    step = max(1, len(commits) // n)
    return commits[::step][:n]


def vg_log(bin_dir, cwd, *args):
    started = time.perf_counter()
    p = subprocess.run([os.path.join(bin_dir, "vg-log"), *args], cwd=cwd, capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if p.returncode not in (0, 1):
        sys.exit(f"vg-log failed: {p.stderr.strip()}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()], elapsed, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=REPO)
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = os.path.join(tmp, "repo")
        subprocess.run(["git", "clone", "-q", a.repo, clone], check=True)
        total = int(git(clone, "rev-list", "--count", "HEAD"))
        started = time.perf_counter()
        _, _, note = vg_log(a.bin, clone, "--diffs-only", "--threshold", "1", "x")
        index_s = time.perf_counter() - started
        print(f"history: {total} commits; indexed with diffs in {index_s:.1f}s ({note.strip()})")
        sample = sample_commits(clone, a.sample)
        print(f"{'mode':<10} {'queries':>7} {'mrr@10':>7} {'hit@1':>6} {'hit@10':>6} {'p50_ms':>7}")
        for mode in ["hybrid", "semantic", "lexical"]:
            rr, hit1, hit10, times = [], 0, 0, []
            for sha, subject in sample:
                recs, ms, _ = vg_log(a.bin, clone, "--no-index", "--diffs-only", "--threshold", "-1",
                                     "-k", "10", "--mode", mode, "--", subject)
                times.append(ms)
                shas = [r["sha"] for r in recs if r.get("type") == "commit"]
                rank = shas.index(sha) + 1 if sha in shas else None
                rr.append(1 / rank if rank else 0.0)
                hit1 += rank == 1
                hit10 += rank is not None
            n = len(sample)
            print(f"{mode:<10} {n:>7} {sum(rr) / n:>7.3f} {hit1 / n:>6.2f} {hit10 / n:>6.2f} "
                  f"{statistics.median(times):>7.0f}")


if __name__ == "__main__":
    main()
