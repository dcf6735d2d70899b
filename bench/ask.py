#!/usr/bin/env python3
"""Time POST /v1/ask on a running vg-serve: questions that the hits answer
(no chat model asked) and questions that ask to be explained (the chat model
answers from the top hits, when the server has an llm_url).

usage: bench/ask.py URL [--rounds N]

Prints, per kind of question: requests, p50 and max latency in ms, how many
were answered by the chat model, and the server's own stats (plan, search
and answer ms, p50). Start the server with --rate-limit 0. bench/ask.sh
starts one, with the small local chat model, on a tree you name.
"""
import argparse, http.client, json, statistics, sys, time, urllib.parse

# Questions a person asks of a Python web framework (flask, by default).
PLAIN = [
    "where are url routes registered", "python files that render templates",
    "how are request contexts pushed", "where is the session cookie signed",
    "config loaded from environment variables", "blueprints registering error handlers",
    "json responses from views", "where is the development server started",
    "test client that sends requests", "static files served from a folder",
]
EXPLAIN = [
    "explain how url routes are registered", "explain how the session cookie is signed",
    "explain how request contexts are pushed", "explain how blueprints register error handlers",
    "explain how configuration is loaded from files",
]


def ask(conn, query):
    body = json.dumps({"query": query}).encode()
    started = time.perf_counter()
    conn.request("POST", "/v1/ask", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    ms = (time.perf_counter() - started) * 1000
    if r.status != 200:
        sys.exit(f"ask.py: HTTP {r.status} for {query!r}: {text[:300].decode(errors='replace')}")
    return ms, json.loads(text)


def report(kind, runs):
    took = [ms for ms, _ in runs]
    answered = sum(1 for _, r in runs if r["answer_summary"])
    stat = lambda key: statistics.median(r["stats"][key] for _, r in runs)
    print(
        f"{kind:<8} n={len(runs):<3} p50 {statistics.median(took):8.1f} ms  max {max(took):8.1f} ms  "
        f"answered {answered}/{len(runs)}  (server p50: plan {stat('plan_ms'):.1f}, "
        f"search {stat('search_ms'):.1f}, answer {stat('answer_ms'):.1f} ms)"
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    u = urllib.parse.urlparse(a.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    ask(conn, "warm up")
    for kind, questions in (("plain", PLAIN), ("explain", EXPLAIN)):
        report(kind, [ask(conn, q) for _ in range(a.rounds) for q in questions])


if __name__ == "__main__":
    main()
