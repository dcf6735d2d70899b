#!/usr/bin/env python3
"""A catalog of SB's repositories searched at once, against each searched alone.

usage: bench/catalog-sb.py SB_EVALS_DIR [--bin DIR] [--work DIR] [--limit N]

Makes a catalog of every SB eval tree (each project named after its eval),
indexes it (the default, static run), and asks each repository's questions
of the whole catalog, one-shot (vg-query --catalog) and served (vg-serve
--catalog). A hit from another repository holds its place in the ranking
but can never match that question's targets. Then the same questions of
each tree's own index, one-shot. Prints NDCG@10 (SB's chunk regime, macro
over repositories, with its categories) and p50/p90 latency of each route.

Each tree's own index is built first when it has none (vg-index in it).
--limit keeps the first N queries per repository, for a quick look.
"""
import argparse, http.client, json, os, statistics, subprocess, sys, tempfile, time, urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


def load_evals(evals_dir):
    out = {}
    for name in sorted(os.listdir(evals_dir)):
        d = os.path.join(evals_dir, name)
        if os.path.isfile(os.path.join(d, "meta.json")):
            meta = json.load(open(os.path.join(d, "meta.json")))
            qrels = [json.loads(l) for l in open(os.path.join(d, "qrels.jsonl"), encoding="utf-8") if l.strip()]
            out[meta["name"]] = dict(dir=d, tree=os.path.realpath(os.path.join(d, "tree")), qrels=qrels)
    return out


def place(hit, repo_tree):
    """A hit as the scorer reads it: its absolute path when it is of the
    question's repository, else a path no target matches."""
    path = os.path.join(hit["root"], hit["file"])
    if os.path.realpath(hit["root"]) != repo_tree:
        path = "::another-repository::"
    return {"file": path, "start_line": hit["start_line"], "end_line": hit["end_line"]}


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t) * 1000


def one_shot(tool, args, env, cwd):
    out = subprocess.run([tool, *args], capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode not in (0, 1):
        sys.exit(f"{tool} {args}: {out.stderr.strip()}")
    return [json.loads(l) for l in out.stdout.splitlines() if l.strip()]


def serve(bin_dir, catalog, env):
    proc = subprocess.Popen([os.path.join(bin_dir, "vg-serve"), "--catalog", catalog, "--rate-limit", "0", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    url = json.loads(proc.stdout.readline())["listening"]
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    while True:
        conn.request("GET", "/status")
        if json.loads(conn.getresponse().read())["status"] == "ready":
            return proc, conn
        time.sleep(0.5)


def ask_served(conn, query, k):
    conn.request("GET", "/search?" + urllib.parse.urlencode({"q": query, "k": k, "threshold": 0}))
    r = conn.getresponse()
    body = r.read().decode()
    return [json.loads(l) for l in body.splitlines() if l.strip()]


def score(evals_dir, results, label, work):
    path = os.path.join(work, f"{label}.jsonl")
    with open(path, "w") as f:
        for rec in results:
            f.write(json.dumps(rec) + "\n")
    out = os.path.join(work, f"{label}.json")
    trees = [os.path.join(evals_dir, n) + "/" for n in sorted(os.listdir(evals_dir))]
    subprocess.run([sys.executable, os.path.join(os.environ.get("SB_SRC", os.path.join(HERE, "../../shared/eval/sb")), "score.py"), *trees, "--results", path,
                    "--regime", "chunk", "--json", out], capture_output=True, check=True)
    d = json.load(open(out))
    c = d["category_macro"]
    return d["overall_macro"], c.get("architecture"), c.get("semantic"), c.get("symbol"), d


def row(label, figures, lat):
    all_, a, s, y, _ = figures
    p50, p90 = statistics.median(lat), statistics.quantiles(lat, n=10)[-1]
    print(f"{label:28s} {all_:7.3f} {a:6.3f} {s:8.3f} {y:6.3f} {p50:8.0f} {p90:8.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("evals")
    ap.add_argument("--bin", default=os.path.join(HERE, "../target/release"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    bin_dir = os.path.abspath(args.bin)
    work = args.work or tempfile.mkdtemp(prefix="vg-catalog-sb.")
    env = dict(os.environ, VECGREP_CATALOG_DIR=os.path.join(work, "catalogs"), PATH=bin_dir + ":" + os.environ["PATH"])
    evals = load_evals(args.evals)
    links = os.path.join(work, "projects")
    os.makedirs(links, exist_ok=True)
    for name, ev in evals.items():
        if not os.path.islink(os.path.join(links, name)):
            os.symlink(ev["tree"], os.path.join(links, name))
        if args.limit:
            ev["qrels"] = ev["qrels"][: args.limit]
    vg = lambda tool: os.path.join(bin_dir, tool)
    subprocess.run([vg("vg-catalog"), "add", "sb", *[os.path.join(links, n) for n in evals]], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    _, index_ms = timed(lambda: subprocess.run([vg("vg-index"), "--catalog", "sb", "-q"], env=env, check=True,
                                               stdout=subprocess.DEVNULL))
    stats = subprocess.run([vg("vg-index"), "--catalog", "sb", "--stats", "--json"], env=env, capture_output=True,
                           text=True).stdout
    print(f"catalog of {len(evals)} repositories: {json.loads(stats)['chunks']} chunks, indexed in {index_ms / 1000:.0f} s",
          file=sys.stderr)
    search = ["--no-index", "--mode", "hybrid", "-k", "30", "--threshold", "0"]
    routes = {"per root, one-shot": [], "catalog, one-shot": [], "catalog, served": []}
    lat = {k: [] for k in routes}
    for name, ev in evals.items():
        if not os.path.isdir(os.path.join(ev["tree"], ".vecgrep")):
            subprocess.run([vg("vg-index"), "-q"], cwd=ev["tree"], env=env, check=True, stdout=subprocess.DEVNULL)
        for q in ev["qrels"]:
            hits, ms = timed(lambda: one_shot(vg("vg-query"), [*search, q["query"], "."], env, ev["tree"]))
            routes["per root, one-shot"].append({"repo": name, "query": q["query"], "results": [place(h, ev["tree"]) for h in hits]})
            lat["per root, one-shot"].append(ms)
            hits, ms = timed(lambda: one_shot(vg("vg-query"), ["--catalog", "sb", *search, q["query"]], env, work))
            routes["catalog, one-shot"].append({"repo": name, "query": q["query"], "results": [place(h, ev["tree"]) for h in hits]})
            lat["catalog, one-shot"].append(ms)
    proc, conn = serve(bin_dir, "sb", env)
    try:
        for name, ev in evals.items():
            for q in ev["qrels"]:
                hits, ms = timed(lambda: ask_served(conn, q["query"], 30))
                routes["catalog, served"].append({"repo": name, "query": q["query"], "results": [place(h, ev["tree"]) for h in hits]})
                lat["catalog, served"].append(ms)
    finally:
        proc.terminate()
        proc.wait()
    print(f"{'SB dev, static index, k=30':28s} {'NDCG@10':>7s} {'arch':>6s} {'semantic':>8s} {'symbol':>6s} {'p50 ms':>8s} {'p90 ms':>8s}")
    for label, results in routes.items():
        row(label, score(args.evals, results, label.replace(", ", "-").replace(" ", "_"), work), lat[label])
    print(f"(results and scores in {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
