"""Trains a cross-encoder reranker on the mined documentation -> code pairs,
on a GPU, and measures it as vecgrep would use it: reordering the first 30
results vecgrep gave each eval question (pack.py's candidates), alone or fused with
vecgrep's own order, through SB's scorer and the docstring evals' mrr@10,
the kept-aside evals reported beside. The best variant on the dev figure is
exported to ONNX with its weights in int8. Reads the folder rebuild.sh packs.

usage: rerank.py PACK OUT [--smoke] [--variants A,B] [--budget SECONDS]

A cross-encoder reads the question and a candidate together ([CLS] question
[SEP] path, newline, code [SEP]) and gives one score: what the issue's
top-10 oracle (0.949 against 0.8475 on SB, bench/TUNING.md) says is left,
the order of ten good candidates, needs the two read side by side.
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "transformer"), os.path.join(HERE, "..", "model")]
sys.path.insert(0, HERE)
import finetune  # noqa: E402  (train/transformer: MiniLM's loader, tokenizer, export)
import onnx_int8  # noqa: E402
from negatives import GROUP, SEED, Groups, package_negatives  # noqa: E402
from orders import joined, orders_of, reciprocal_rank  # noqa: E402

QUERY_TOKENS = 64
# Each variant starts from MiniLM, keeping its first `layers` layers.
VARIANTS = [
    {"name": "L6-256", "layers": 6, "tokens": 256, "lr": 3e-5, "epochs": 1, "batch": 32},
    {"name": "L3-192", "layers": 3, "tokens": 192, "lr": 5e-5, "epochs": 1, "batch": 32},
    {"name": "L6-256-e2", "layers": 6, "tokens": 256, "lr": 3e-5, "epochs": 2, "batch": 32},
    # The one that trains on two CPU cores (`--cpu`): about 44 sequences a
    # second against L6-256's 4, so 20,000 groups fit in an hour and a half.
    {"name": "L2-128", "layers": 2, "tokens": 128, "lr": 5e-5, "epochs": 1, "batch": 16},
]
log = finetune.log


class CrossEncoder(torch.nn.Module):
    """MiniLM's first `layers` layers; a linear score of the mean of the last hidden states."""

    def __init__(self, pack, layers, device):
        super().__init__()
        self.bert = finetune.load_model(pack, device)
        self.bert.encoder.layer = self.bert.encoder.layer[:layers]
        self.bert.config.num_hidden_layers = layers
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1).to(device)

    def forward(self, ids, mask, types):
        hidden = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        m = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.head(pooled).squeeze(-1).float()


class Pairs:
    """Questions and texts as token ids; a question with a text is one sequence."""

    def __init__(self, tok, tokens):
        self.tok, self.tokens = tok, tokens

    def join(self, q_ids, c_ids):
        return joined(q_ids, c_ids, self.tokens)

    def tensors(self, seqs, device):
        width = max(len(s) for s, _ in seqs)
        ids = torch.zeros((len(seqs), width), dtype=torch.long)
        types = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for i, (s, t) in enumerate(seqs):
            ids[i, :len(s)], types[i, :len(t)], mask[i, :len(s)] = torch.tensor(s), torch.tensor(t), 1
        return ids.to(device), mask.to(device), types.to(device)


def candidate_text(path, code):
    """What the reranker reads of a candidate, in training and in use alike."""
    return f"{path}\n{code}"


@torch.no_grad()
def mine_negatives(pack, tok, pairs, device):
    """For each pair, GROUP - 1 other pairs' codes: HARD of them among the 20
    that MiniLM itself puts nearest the question (not the pair's own code, nor
    a copy of it, nor a pair asking the same), the rest at random in the same
    language."""
    base = finetune.load_model(pack, device)
    q = finetune.embed_all(base, tok.ids([p["query"] for p in pairs], QUERY_TOKENS), device)
    c = finetune.embed_all(base, tok.ids([candidate_text(p["path"], p["code"]) for p in pairs], finetune.MAX_TOKENS),
                           device)
    del base
    groups, rng = Groups(pairs), random.Random(SEED)
    out = []
    for start in range(0, len(pairs), 4096):
        near = torch.topk(q[start:start + 4096] @ c.T, k=min(32, len(pairs)), dim=1).indices.cpu().numpy()
        for row, i in zip(near, range(start, start + len(near))):
            out.append(groups.negatives_of(i, [int(j) for j in row], rng, nearest=20))
    return out


def train(model, pairs, negatives, tok, variant, device, deadline):
    """Each step: `batch` questions, each with its code and GROUP - 1
    negatives; cross-entropy over the group's scores (the positive first)."""
    join = Pairs(tok, variant["tokens"])
    q_ids = tok.ids([p["query"] for p in pairs], QUERY_TOKENS)
    c_ids = tok.ids([candidate_text(p["path"], p["code"]) for p in pairs], variant["tokens"])

    def loss_of(idx):
        seqs = [join.join(q_ids[i], c_ids[j]) for i in idx for j in [i, *negatives[i]]]
        ids, mask, types = join.tensors(seqs, device)
        with torch.autocast(device if device == "cuda" else "cpu", dtype=torch.bfloat16):
            scores = model(ids, mask, types).view(-1, GROUP)
        return F.cross_entropy(scores, torch.zeros(len(scores), dtype=torch.long, device=device))

    return finetune.train_loop(model, variant, len(pairs), deadline, loss_of)


class Candidates:
    """Each eval question's first 30 results by vecgrep (pack.py's candidates.jsonl.xz), with what SB's scorer needs."""

    def __init__(self, pack, tok, only=None, per_eval=None):
        self.pack, self.tok = pack, tok
        self.questions = []
        taken = {}
        for r in finetune.read_records(pack, "candidates.jsonl.xz"):
            if (not only or r["eval"] in only) and taken.get(r["eval"], 0) < (per_eval or float("inf")):
                taken[r["eval"]] = taken.get(r["eval"], 0) + 1
                self.questions.append(r)
        self.evals = {}
        for r in self.questions:
            if r["eval"] not in self.evals:
                kind, name = r["eval"].split("/", 1)
                d = os.path.join(pack, "evals", kind, name)
                meta = os.path.join(d, "meta.json")
                qrels = [json.loads(l) for l in open(os.path.join(d, "qrels.jsonl"), encoding="utf-8") if l.strip()]
                root = (json.load(open(meta)).get("benchmark_root") or "") if os.path.exists(meta) else ""
                self.evals[r["eval"]] = {"dir": d, "root": root, "targets": {q["query"]: q["targets"] for q in qrels}}
        self.q_ids = tok.ids([r["query"] for r in self.questions], QUERY_TOKENS)
        self.c_ids = [tok.ids([candidate_text(h["file"], h["text"]) for h in r["hits"]], finetune.MAX_TOKENS)
                      if r["hits"] else [] for r in self.questions]

    @torch.no_grad()
    def scores(self, model, tokens, device, first=None):
        """The reranker's score of each question's `first` (or all) candidates."""
        model.eval()
        join = Pairs(self.tok, tokens)
        out = []
        for qi, cs in enumerate(self.c_ids):
            cs = cs[:first]
            if not cs:
                out.append(np.zeros(0))
                continue
            ids, mask, types = join.tensors([join.join(self.q_ids[qi], c) for c in cs], device)
            with torch.autocast(device if device == "cuda" else "cpu", dtype=torch.bfloat16):
                out.append(model(ids, mask, types).cpu().numpy())
        return out

    def figures(self, orders, out_dir, tag):
        """SB and mrr@10 per eval, each question's hits taken in `orders[qi]`."""
        sb_lines, rr = [], {}
        for r, order in zip(self.questions, orders):
            ev = self.evals[r["eval"]]
            hits = [r["hits"][i] for i in order][:10]
            if r["eval"].startswith("sb/"):
                sb_lines.append({"repo": os.path.basename(ev["dir"]), "query": r["query"], "results": [
                    {"file": os.path.normpath(os.path.join(ev["root"], h["file"])), "start_line": h["start_line"],
                     "end_line": h["end_line"]} for h in hits]})
            else:
                rr.setdefault(r["eval"], []).append(reciprocal_rank(hits, ev["targets"].get(r["query"], [])))
        figures = {name: float(np.mean(v)) for name, v in rr.items()}
        if sb_lines:
            dirs = sorted({self.evals[r["eval"]]["dir"] for r in self.questions if r["eval"].startswith("sb/")})
            figures.update(finetune.sb_score(self.pack, dirs, sb_lines, out_dir, tag))
        return figures


class Scorer(torch.nn.Module):
    """The reranker written out for export (`finetune.PlainBert`), its score as one output."""

    def __init__(self, model):
        super().__init__()
        self.plain = finetune.PlainBert(model.bert)
        self.head = model.head

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.plain(input_ids, attention_mask, token_type_ids)
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)).squeeze(-1)


def export(model, tok, tokens, out_dir, sample):
    """ONNX (opset 18), then weight-only int8 as the shipped models; checked against torch."""
    import onnx
    import onnxruntime as ort
    model = model.float().cpu().eval()
    scorer = Scorer(model).eval()
    join = Pairs(tok, tokens)
    ids, mask, types = join.tensors(sample, "cpu")
    with torch.no_grad():
        ref = model(ids, mask, types).numpy()
        plain = scorer(ids, mask, types).numpy()
    if np.abs(ref - plain).max() > 1e-3:
        raise RuntimeError(f"the plain BERT does not reproduce the reranker ({np.abs(ref - plain).max()})")
    fp32 = os.path.join(out_dir, "reranker-fp32.onnx")
    axes = {n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "token_type_ids")}
    axes["score"] = {0: "batch"}
    torch.onnx.export(scorer, (ids, mask, types), fp32, dynamic_axes=axes, opset_version=18, dynamo=True,
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["score"])
    path = os.path.join(out_dir, "reranker.onnx")
    onnx.save(onnx_int8.weight_only_int8(onnx.load(fp32)), path)
    for name in os.listdir(out_dir):
        if name.startswith("reranker-fp32.onnx"):
            os.remove(os.path.join(out_dir, name))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = np.concatenate([sess.run(["score"], {"input_ids": i[None], "attention_mask": m[None],
                                               "token_type_ids": t[None]})[0]
                          for i, m, t in zip(ids.numpy(), mask.numpy(), types.numpy())])
    # One sequence at a time, as vecgrep would pad nothing: compare where the mask covers the sequence.
    return path, float(np.corrcoef(ref, got)[0, 1]), float(np.abs(ref - got).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack")
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true", help="a few steps, two evals and the CPU if no GPU: checks the script")
    ap.add_argument("--variants", help="comma-separated names of VARIANTS to train (default: all that fit the budget)")
    ap.add_argument("--budget", type=float, default=400,
                    help="seconds for mining, training and evals before export (the device allows 600 a call)")
    ap.add_argument("--cpu", action="store_true",
                    help="train on the CPU: negatives from each pair's package, not mined by MiniLM, and only each "
                         "question's first 10 candidates scored, as vecgrep would (pick a variant that fits, L2-128)")
    ap.add_argument("--pairs", type=int, help="train on a seeded sample of this many pairs, so that the schedule "
                                              "ends within the budget")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not (args.smoke or args.cpu):
        sys.exit("rerank: no GPU here; --smoke checks the script on the CPU, --cpu trains a small variant on it")
    torch.backends.cuda.matmul.allow_tf32 = True
    tok = finetune.Tok(args.pack)
    only = {"sb/flask", "doc/py-logging"} if args.smoke else None
    candidates = Candidates(args.pack, tok, only, 12 if args.smoke else None)
    pairs = finetune.read_records(args.pack, "rerank-pairs.jsonl.xz", 64 if args.smoke else None)
    if args.pairs and args.pairs < len(pairs):
        pairs = random.Random(SEED).sample(pairs, args.pairs)
    log(f"{len(pairs)} pairs, {len(candidates.questions)} eval questions")
    negatives = package_negatives(pairs) if args.cpu else mine_negatives(args.pack, tok, pairs, device)
    log("negatives mined")
    report = {"variants": [], "negatives": "package" if args.cpu else "mined", "pairs": len(pairs), "vecgrep": candidates.figures(orders_of([np.zeros(len(r["hits"])) for r in
                                                                       candidates.questions])["vecgrep"], args.out, "vecgrep")}
    if os.path.exists(os.path.join(args.pack, "pack.json")):
        report["pack"] = json.load(open(os.path.join(args.pack, "pack.json")))
    report["vecgrep_dev"] = finetune.dev_figure(report["vecgrep"])
    log(f"vecgrep's own order: {json.dumps(report['vecgrep'])}")
    deadline = finetune.T0 + args.budget
    chosen = [v for v in VARIANTS if not args.variants or v["name"] in args.variants.split(",")]
    best, best_state = None, None
    for variant in chosen[:1] if args.smoke else chosen:
        if time.time() > deadline - 60:
            log(f"{variant['name']}: skipped (time)")
            continue
        if args.smoke:
            variant = {**variant, "batch": 4, "tokens": 128}
        model = CrossEncoder(args.pack, variant["layers"], device)
        steps = train(model, pairs, negatives, tok, variant, device, deadline - 45)
        scores = candidates.scores(model, variant["tokens"], device, 10 if args.cpu else None)
        # A variant the deadline stopped never decayed its learning rate: it says so.
        total = max(1, len(pairs) // variant["batch"]) * variant["epochs"]
        entry = {**variant, "steps": steps, "steps_planned": total, "partial": steps < total, "orders": {}}
        for name, orders in orders_of(scores).items():
            fig = candidates.figures(orders, args.out, f"{variant['name']}-{name}")
            entry["orders"][name] = {"figures": fig, "dev": finetune.dev_figure(fig)}
            log(f"{variant['name']} {name}: dev {entry['orders'][name]['dev']:.4f} {json.dumps(fig)}")
        entry["best_order"] = max(entry["orders"], key=lambda k: entry["orders"][k]["dev"])
        entry["dev"] = entry["orders"][entry["best_order"]]["dev"]
        report["variants"].append(entry)
        # Kept after each variant: a run the device's time limit ends still reports what it measured.
        json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
        if best is None or entry["dev"] > best["dev"]:
            best, best_state = entry, {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
    report["chosen"] = best and {"variant": best["name"], "order": best["best_order"], "dev": best["dev"]}
    json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
    if best is None or (best["dev"] <= report["vecgrep_dev"] and not args.smoke):
        log("no variant's order beats vecgrep's own on the dev figure: nothing exported")
        return
    model = CrossEncoder(args.pack, best["layers"], "cpu")
    model.load_state_dict(best_state)
    join = Pairs(tok, best["tokens"])
    sample = [join.join(candidates.q_ids[qi], c) for qi in range(min(8, len(candidates.questions)))
              for c in candidates.c_ids[qi][:3]]
    path, corr, diff = export(model, tok, best["tokens"], args.out, sample)
    report.update({"export_correlation": corr, "export_max_difference": diff, "model_bytes": os.path.getsize(path)})
    json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
    log(f"exported {best['name']}: {report['model_bytes']} bytes, scores against torch: "
        f"correlation {corr:.5f}, most apart {diff:.4f}")
    finetune.split(path)


if __name__ == "__main__":
    main()
