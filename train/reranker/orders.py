"""What the reranker's measurement decides with, apart from torch so that
the project's tests (system Python, no numpy) can check it: how a question
and a candidate become one sequence, the orders measured, and how a
docstring question is scored."""

# The orders measured for each variant besides vecgrep's own: the
# reranker's over the first 10 or 30, and the two fused by weighted
# reciprocal rank (FUSE_K damps the ranks, as RRF's constant does).
FUSE_WEIGHTS = (0.3, 0.5, 0.7)
FUSE_K = 10


def joined(q_ids, c_ids, tokens):
    """[CLS] question [SEP] text [SEP] from the two tokenized with their own
    [CLS] and [SEP]: cut to `tokens` with [SEP] kept last, type 0 for the
    question and 1 for the text. Returns (ids, types)."""
    seq = (q_ids + c_ids[1:])[:tokens]
    if len(seq) == tokens:
        seq[-1] = c_ids[-1]
    return seq, [0] * min(len(q_ids), len(seq)) + [1] * max(0, len(seq) - len(q_ids))


def orders_of(scores):
    """name -> each question's order of its candidates (indices into vecgrep's
    order), from the reranker's `scores` of each question's candidates."""
    out = {"vecgrep": [list(range(len(s))) for s in scores]}
    widest = max((len(s) for s in scores), default=0)
    for k in (10, 30):
        # Past what was scored (`--cpu` scores 10) rerank@30 is rerank@10 again.
        if k > 10 and widest <= 10:
            continue
        out[f"rerank@{k}"] = [sorted(range(min(k, len(s))), key=lambda i: -s[i]) + list(range(min(k, len(s)), len(s)))
                              for s in scores]
    for w in FUSE_WEIGHTS:
        fused = []
        for s in scores:
            by_model = {i: r for r, i in enumerate(sorted(range(len(s)), key=lambda i: -s[i]))}
            fused.append(sorted(range(len(s)), key=lambda i: -(w / (FUSE_K + by_model[i]) + (1 - w) / (FUSE_K + i))))
        out[f"fused{w}"] = fused
    return out


def reciprocal_rank(hits, targets):
    """As run_eval.py scores a docstring question: 1/rank of the first hit in
    the right file whose lines overlap the function's, else 0."""
    for rank, h in enumerate(hits, 1):
        if any(h["file"] == t["file"] and h["start_line"] <= t["end_line"] and h["end_line"] >= t["start_line"]
               for t in targets):
            return 1 / rank
    return 0.0
