#!/usr/bin/env python3
"""Train the static code model: start from the table distilled from MiniLM,
regress it on MiniLM's own vectors of code chunks (Tokenlearn), then tune it
contrastively on doc → code pairs with in-batch negatives, the regression
kept on as an anchor so the table stays in the teacher's space.

A text's vector is the sum of its tokens' rows, unit length (as
embed::StaticModel computes it); every loss is on those unit vectors, and
the gradient goes back through the normalisation to the rows the batch's
texts hold. Adam over the whole table, fixed seed.

usage: train.py --teacher DB_ROOT --pairs PAIRS --out TABLE [options]
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np

import data


def normalized(u):
    n = np.linalg.norm(u, axis=1, keepdims=True)
    n = np.maximum(n, 1e-9)
    return u / n, n


def back_through_norm(e, n, grad_e):
    """d loss / d u for e = u / |u|, given d loss / d e."""
    return (grad_e - e * np.sum(grad_e * e, axis=1, keepdims=True)) / n


class Adam:
    def __init__(self, shape, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.m = np.zeros(shape, np.float32)
        self.v = np.zeros(shape, np.float32)
        self.lr, self.b1, self.b2, self.eps, self.t = lr, b1, b2, eps, 0

    def step(self, w, g, lr=None):
        self.t += 1
        self.m *= self.b1
        self.m += (1 - self.b1) * g
        self.v *= self.b2
        self.v += (1 - self.b2) * g * g
        lr = (lr if lr is not None else self.lr) * np.sqrt(1 - self.b2 ** self.t) / (1 - self.b1 ** self.t)
        w -= lr * self.m / (np.sqrt(self.v) + self.eps)


def regression_grad(table, bags, targets):
    """Mean (1 - cos) between the static vectors of `bags` and `targets`, and its gradient."""
    u = bags @ table
    e, n = normalized(u)
    cos = np.sum(e * targets, axis=1)
    grad_e = -targets / len(cos)
    return float(np.mean(1 - cos)), bags.T @ back_through_norm(e, n, grad_e)


def contrastive_grad(table, q_bags, d_bags, scale):
    """In-batch softmax over docs for each question and over questions for each
    doc (symmetric MNRL), and its gradient."""
    uq, ud = q_bags @ table, d_bags @ table
    eq, nq = normalized(uq)
    ed, nd = normalized(ud)
    s = scale * (eq @ ed.T)
    b = len(s)

    def softmax_grad(logits):
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(np.maximum(p[np.arange(b), np.arange(b)], 1e-12)))
        p[np.arange(b), np.arange(b)] -= 1
        return loss, p / b

    l1, g1 = softmax_grad(s)
    l2, g2 = softmax_grad(s.T)
    gs = scale * (g1 + g2.T) / 2
    grad_eq, grad_ed = gs @ ed, gs.T @ eq
    grad = q_bags.T @ back_through_norm(eq, nq, grad_eq) + d_bags.T @ back_through_norm(ed, nd, grad_ed)
    return (l1 + l2) / 2, grad


def batches(n, size, rng):
    order = list(range(n))
    while True:
        rng.shuffle(order)
        for i in range(0, n - size + 1, size):
            yield order[i:i + size]


def load_teacher(bags, root):
    chunks = data.index_chunks(root, with_vectors=True)
    texts = [f"{c['around']}\n{c['text']}" for c in chunks]
    matrix = bags.matrix(bags.ids(texts))
    targets = np.stack([c["vector"] for c in chunks]).astype(np.float32)
    # The teacher's vectors share a large common direction; the table is
    # centred (distil's recipe) and only compared with itself, so the
    # regression aims at what distinguishes the chunks.
    targets -= targets.mean(axis=0, keepdims=True)
    targets /= np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-9)
    return matrix, targets


def code_side(pair):
    """A pair's code as a chunk of it would be embedded: its file's path as the context line."""
    return f"{pair['path']}\n{pair['code']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", help="a tree indexed with vecgrep --full (none: pairs alone, no anchor)")
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--base", help="starting table (default: vecgrep's distilled one)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--regress-steps", type=int, default=450)
    ap.add_argument("--regress-lr", type=float, default=5e-4)
    ap.add_argument("--pair-steps", type=int, default=450)
    ap.add_argument("--pair-lr", type=float, default=2e-4)
    ap.add_argument("--anchor", type=float, default=1.0, help="weight of the regression during pair steps")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--free-norms", choices=["none", "pairs", "all"], default="pairs",
                    help="the stages whose training may change each row's length (its token's weight); "
                         "by default only directions move")
    ap.add_argument("--eval-every", type=int, default=0, help="SB static-only every N steps (0: never)")
    ap.add_argument("--docstring-evals", nargs="*", default=[], help="docstring eval dirs to score with SB")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    np.random.seed(args.seed)
    bags = data.Bags()
    table = (data.read_table(args.base)[0] if args.base else data.distilled_table()).astype(np.float32)
    t0 = time.time()
    if args.teacher:
        t_bags, t_targets = load_teacher(bags, args.teacher)
    else:
        t_bags, t_targets, args.regress_steps, args.anchor = None, None, 0, 0.0
    pairs = data.read_pairs(args.pairs)
    q_all = bags.matrix(bags.ids([p["query"] for p in pairs]))
    d_all = bags.matrix(bags.ids([code_side(p) for p in pairs]))
    print(f"train: {0 if t_bags is None else t_bags.shape[0]} teacher chunks, {len(pairs)} pairs, loaded in {time.time() - t0:.0f}s", file=sys.stderr)
    sb = None
    if args.eval_every:
        sb = Figures(bags, args.docstring_evals)
        print(f"train: at start: {sb.summary(table)}", file=sys.stderr)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    norms = None if args.free_norms == "all" else norms
    adam = Adam(table.shape, args.regress_lr)
    teacher_batches = batches(t_bags.shape[0], min(args.batch, t_bags.shape[0]), rng) if args.teacher else None
    for step in range(1, args.regress_steps + 1):
        idx = next(teacher_batches)
        loss, grad = regression_grad(table, t_bags[idx], t_targets[idx])
        adam.step(table, grad)
        keep_norms(table, norms)
        report(step, f"regress loss {loss:.4f}", sb, table, args.eval_every)
    adam = Adam(table.shape, args.pair_lr)
    if args.free_norms == "pairs":
        norms = None
    pair_batches = batches(len(pairs), min(args.batch, len(pairs)), rng)
    for step in range(1, args.pair_steps + 1):
        idx = next(pair_batches)
        loss, grad = contrastive_grad(table, q_all[idx], d_all[idx], args.scale)
        anchor_loss = 0.0
        if args.anchor:
            tidx = next(teacher_batches)
            anchor_loss, anchor_grad = regression_grad(table, t_bags[tidx], t_targets[tidx])
            grad += args.anchor * anchor_grad
        adam.step(table, grad)
        keep_norms(table, norms)
        report(step, f"pairs loss {loss:.4f} anchor {anchor_loss:.4f}", sb, table, args.eval_every)
    write_table(args.out, table)
    print(f"train: wrote {args.out} in {time.time() - t0:.0f}s", file=sys.stderr)


def keep_norms(table, norms):
    """Each row back to its starting length: training moves what a token
    means, not how much it weighs (the distilled SIF weights, which a free
    regression flattens: SB static-only 0.670 -> 0.573, symbol questions
    0.743 -> 0.486; with the lengths kept 0.683)."""
    if norms is not None:
        table *= norms / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)


class Figures:
    """SB static-only and the docstring evals' mrr@10, for watching a run."""

    def __init__(self, bags, docstring_dirs):
        import docstring_eval
        import sb_eval
        self.sb_eval = sb_eval
        self.sb = sb_eval.SB(bags)
        self.docstring = docstring_eval.Docstring(bags, docstring_dirs) if docstring_dirs else None

    def summary(self, table):
        line = f"SB {self.sb_eval.summary(self.sb.score(table))}"
        if self.docstring:
            scores = self.docstring.score(table)
            line += " | " + " ".join(f"{k} {v:.3f}" for k, v in scores.items()) + f" mean {np.mean(list(scores.values())):.4f}"
        return line


def report(step, text, figures, table, every):
    if step % 50 == 0 or (every and step % every == 0):
        line = f"train: step {step} {text}"
        if figures and every and step % every == 0:
            line += f" | {figures.summary(table)}"
        print(line, file=sys.stderr, flush=True)


def write_table(path, table):
    header = data.MAGIC + np.array(table.shape, dtype="<u4").tobytes() + bytes(32)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        f.write(table.astype("<f4").tobytes())
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
