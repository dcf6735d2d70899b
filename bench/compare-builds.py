#!/usr/bin/env python3
"""Whether two builds of vecgrep give the same results, record for record.

For a change that must not move results (a refactor, a speed-up), the eval
figures agreeing is not enough: two rankings can score alike and differ.
This indexes each eval tree once per build (each build in its own copy of
the trees), then asks every query of every eval in every mode through both
search paths, one-shot `vecgrep --json` and a warm `vg-serve`, and compares
the hit records byte for byte (file, lines, score, text).

usage: bench/compare-builds.py BIN_A BIN_B [EVAL_DIR]
  BIN_A, BIN_B  directories holding the vecgrep binaries of each build
  EVAL_DIR      the dev evals (default: $TMPDIR/vg-evals, made if missing)
env: EVALS="py-logging"  MODES="hybrid"  MAX_QUERIES=N  PATHS="cli serve"
     FULL=1  to index with --full (every chunk given the model's vector), so
             that searches take the path of a fully embedded index rather
             than embedding their candidates on the way
Prints one row per eval, mode and path; exits 1 if any list differs.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.parse, urllib.request

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
evals_src = os.environ.get("VG_EVAL_TOOLS", os.path.join(repo, "..", "shared", "eval"))


def make_evals(dest):
    if not os.path.isdir(os.path.join(dest, "py-logging")):
        subprocess.run([os.path.join(evals_src, "make_dev_evals.sh"), dest], check=True, stdout=sys.stderr)


def queries(eval_dir):
    qs = [json.loads(line)["query"] for line in open(os.path.join(eval_dir, "qrels.jsonl"))]
    n = int(os.environ.get("MAX_QUERIES", "0"))
    return qs[:n] if n else qs


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cli_results(bin_dir, tree, mode, qs):
    out = []
    for q in qs:
        cmd = [os.path.join(bin_dir, "vecgrep"), "-q", "--no-index", "--json", "--mode", mode,
               "-k", "10", "--threshold", "0", "--", q, "."]
        p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
        out.append(p.stdout if p.returncode in (0, 1) else f"status {p.returncode}: {p.stderr}")
    return out


def serve_results(bin_dir, tree, mode, qs):
    port = free_port()
    serve = os.path.join(bin_dir, "vg-serve")
    # Builds that limit requests per client are asked not to: every query is one.
    unlimited = ["--rate-limit", "0"] if "--rate-limit" in subprocess.run(
        [serve, "--help"], capture_output=True, text=True).stdout else []
    server = subprocess.Popen([serve, "-q", "--port", str(port), *unlimited, "."], cwd=tree,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 300
        while time.time() < deadline:
            try:
                status = json.loads(urllib.request.urlopen(base + "/status", timeout=5).read())
                if status["status"] == "ready":
                    break
            except OSError:
                pass
            time.sleep(0.2)
        out = []
        for q in qs:
            url = f"{base}/search?q={urllib.parse.quote_plus(q)}&k=10&threshold=0&mode={mode}"
            try:
                out.append(urllib.request.urlopen(url, timeout=60).read().decode())
            except Exception as e:  # a failed request is a difference, not a crash
                out.append(f"error: {e}")
        return out
    finally:
        server.terminate()
        server.wait(30)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bins = [os.path.abspath(b) for b in sys.argv[1:3]]
    evals = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else os.path.join(tempfile.gettempdir(), "vg-evals"))
    make_evals(evals)
    names = os.environ.get("EVALS", "py-logging py-asyncio rs-regex-automata").split()
    modes = os.environ.get("MODES", "hybrid semantic lexical").split()
    paths = os.environ.get("PATHS", "cli serve").split()
    work = tempfile.mkdtemp(prefix="vg-compare-")
    differ = False
    print(f"{'eval':<20} {'mode':<9} {'path':<6} {'queries':>7} {'differ':>6}")
    try:
        for name in names:
            trees = []
            for i, b in enumerate(bins):
                tree = os.path.join(work, f"{name}-{i}")
                shutil.copytree(os.path.join(evals, name, "tree"), tree, ignore=shutil.ignore_patterns(".vecgrep"))
                os.makedirs(os.path.join(tree, ".vecgrep"), exist_ok=True)
                subprocess.run([os.path.join(b, "vecgrep"), "-q", "--index-warn-threshold", "0", "--index-only", "."]
                               + (["--full"] if os.environ.get("FULL") == "1" else []),
                               cwd=tree, check=True, stdout=subprocess.DEVNULL)
                trees.append(tree)
            qs = queries(os.path.join(evals, name))
            for mode in modes:
                for path in paths:
                    run = cli_results if path == "cli" else serve_results
                    # Each build searched its own copy: the root in each record differs by name only.
                    a, b = ([r.replace(trees[i], "TREE") for r in run(bins[i], trees[i], mode, qs)] for i in range(2))
                    diffs = [q for q, x, y in zip(qs, a, b) if x != y]
                    differ |= bool(diffs)
                    print(f"{name:<20} {mode:<9} {path:<6} {len(qs):>7} {len(diffs):>6}", flush=True)
                    for q in diffs[:3]:
                        print(f"  differs: {q!r}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
