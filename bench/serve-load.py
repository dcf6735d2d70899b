#!/usr/bin/env python3
"""Load a running vg-serve with /search requests and print latency figures.

usage: bench/serve-load.py URL [--requests N] [--clients C] [--k K] [--mode MODE]

Each client keeps one HTTP/1.1 connection open and sends its share of the
requests one after another, cycling through a fixed list of queries. Prints
one line: requests, errors, p50/p99/max latency in ms, requests per second.
A response counts as an error unless it is 200 and every line is a JSON hit;
the first error's cause goes to stderr (a 429 means the server limits each
client's rate: start it with --rate-limit 0 to measure it).
"""
import argparse, http.client, json, statistics, sys, threading, time, urllib.parse

QUERIES = [
    "spawn a task on the runtime", "read from a tcp socket", "timeout for an async operation",
    "shut down the runtime gracefully", "wake a task when data is ready", "bounded channel send",
    "mutex lock guard", "schedule work on a thread pool", "parse a duration", "handle a closed connection",
]

def client(host, port, k, mode, count, offset, latencies, errors, lock, first_error):
    conn = http.client.HTTPConnection(host, port, timeout=60)
    mine, bad = [], 0
    for i in range(count):
        q = QUERIES[(offset + i) % len(QUERIES)]
        path = "/search?" + urllib.parse.urlencode({"q": q, "k": k, **({"mode": mode} if mode else {})})
        t = time.perf_counter()
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            ok = r.status == 200 and all(json.loads(l)["type"] == "hit" for l in body.splitlines())
            why = None if ok else f"HTTP {r.status}: {body[:200].decode(errors='replace').strip()}"
        except Exception as e:
            ok, why = False, f"{type(e).__name__}: {e}"
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=60)
        mine.append((time.perf_counter() - t) * 1000)
        bad += 0 if ok else 1
        if why:
            with lock:
                if not first_error:
                    first_error.append(why)
    with lock:
        latencies.extend(mine)
        errors[0] += bad

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--mode", choices=["hybrid", "semantic", "lexical"], help="default: the server's")
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    latencies, errors, lock, first_error = [], [0], threading.Lock(), []
    per = [a.requests // a.clients + (1 if i < a.requests % a.clients else 0) for i in range(a.clients)]
    threads = [threading.Thread(target=client, args=(u.hostname, u.port, a.k, a.mode, n, i * 3, latencies, errors, lock, first_error))
               for i, n in enumerate(per)]
    start = time.perf_counter()
    for t in threads: t.start()
    for t in threads: t.join()
    wall = time.perf_counter() - start
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    print(f"{len(latencies)} requests from {a.clients} clients: {errors[0]} errors, "
          f"p50 {statistics.median(latencies):.1f} ms, p99 {p(0.99):.1f} ms, max {latencies[-1]:.1f} ms, "
          f"{len(latencies) / wall:.0f} req/s")
    if first_error:
        hint = " (the server limits each client's rate: start it with --rate-limit 0)" if "HTTP 429" in first_error[0] else ""
        print(f"serve-load: first error: {first_error[0]}{hint}", file=sys.stderr)
    sys.exit(1 if errors[0] else 0)

main()
