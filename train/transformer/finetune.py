"""Fine-tunes MiniLM (all-MiniLM-L6-v2) on the mined documentation -> code
pairs, on a GPU, and measures each variant as vecgrep would use it: SB dev
(chunk regime, the model's cosine alone, through SB's own scorer) and the
docstring evals (mrr@10), the kept-aside ones reported beside. The variant
with the best dev figure is exported to ONNX and quantized to int8 as the
shipped model is. Reads the folder prepare.py packs.

usage: finetune.py PACK OUT [--smoke]
"""
import argparse
import json
import lzma
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "model")]
import docstring_eval  # noqa: E402  (train/model: the static trainer's scorers)
import prepare  # noqa: E402
import sb_eval  # noqa: E402

MAX_TOKENS = 256
QUERY_TOKENS = 64
SEED = 7
# Each variant starts from MiniLM. Learning rate, epochs, batch size; the
# scale of the in-batch softmax is sentence-transformers' default (20).
VARIANTS = [
    {"name": "lr5e-5-e1", "lr": 5e-5, "epochs": 1, "batch": 256},
    {"name": "lr2e-5-e1", "lr": 2e-5, "epochs": 1, "batch": 256},
    {"name": "lr1e-4-e2", "lr": 1e-4, "epochs": 2, "batch": 512},
    {"name": "lr5e-5-e3", "lr": 5e-5, "epochs": 3, "batch": 256},
    {"name": "lr5e-5-e6", "lr": 5e-5, "epochs": 6, "batch": 256},
    {"name": "lr1e-4-e4", "lr": 1e-4, "epochs": 4, "batch": 512},
]
SCALE = 20.0
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def load_model(pack, device):
    config = BertConfig.from_json_file(os.path.join(pack, "config.json"))
    model = BertModel(config, add_pooling_layer=False)
    weights = prepare.unpacked_weights(np.load(os.path.join(pack, "weights.npz")))
    # The pooler is not part of the sentence vector.
    state = {k: torch.from_numpy(v) for k, v in weights.items() if not k.startswith("pooler.")}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith("position_ids")]
    if missing or unexpected:
        raise RuntimeError(f"weights do not fit: missing {missing[:5]}, unexpected {unexpected[:5]}")
    return model.to(device)


class Tok:
    def __init__(self, pack):
        self.tok = Tokenizer.from_file(os.path.join(pack, "tokenizer.json"))
        self.tok.no_padding()

    def ids(self, texts, limit):
        """Token ids with [CLS]/[SEP], cut to `limit` with [SEP] kept last (as vecgrep does)."""
        self.tok.no_truncation()
        out = []
        for enc in self.tok.encode_batch_fast(texts, add_special_tokens=True):
            ids = enc.ids
            if len(ids) > limit:
                ids = ids[:limit - 1] + [ids[-1]]
            out.append(ids)
        return out


def batch_tensors(id_lists, device):
    width = max(len(x) for x in id_lists)
    ids = torch.zeros((len(id_lists), width), dtype=torch.long)
    mask = torch.zeros((len(id_lists), width), dtype=torch.long)
    for i, x in enumerate(id_lists):
        ids[i, :len(x)] = torch.tensor(x)
        mask[i, :len(x)] = 1
    return ids.to(device, non_blocking=True), mask.to(device, non_blocking=True)


def encode(model, ids, mask):
    """Mean of the last hidden states over real tokens, unit length: sentence-transformers' vector."""
    hidden = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    m = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return F.normalize(pooled.float(), dim=-1)


@torch.no_grad()
def embed_all(model, id_lists, device, tokens_per_batch=131072):
    model.eval()
    order = sorted(range(len(id_lists)), key=lambda i: len(id_lists[i]))
    out = torch.empty((len(id_lists), model.config.hidden_size), dtype=torch.float32, device=device)
    i = 0
    while i < len(order):
        width = len(id_lists[order[min(i + 1023, len(order) - 1)]])
        n = max(1, min(1024, tokens_per_batch // max(width, 1)))
        idx = order[i:i + n]
        ids, mask = batch_tensors([id_lists[j] for j in idx], device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out[torch.tensor(idx, device=device)] = encode(model, ids, mask)
        i += n
    return out


class Evals:
    """SB dev, the docstring evals and the kept-aside ones: chunks and questions, tokenized once."""

    def __init__(self, pack, tok, only=None):
        self.pack = pack
        chunks = {}
        with lzma.open(os.path.join(pack, "chunks.jsonl.xz"), "rt", encoding="utf-8") as f:
            for line in f:
                c = json.loads(line)
                if only and c["eval"] not in only:
                    continue
                chunks.setdefault(c["eval"], []).append(c)
        self.evals = []
        for name, cs in sorted(chunks.items()):
            kind, short = name.split("/", 1)
            d = os.path.join(pack, "evals", kind, short)
            qrels = [json.loads(l) for l in open(os.path.join(d, "qrels.jsonl"), encoding="utf-8") if l.strip()]
            meta = os.path.join(d, "meta.json")
            # SB matches a result by the end of its path: the tree's files named from the repository root.
            root = json.load(open(meta)).get("benchmark_root") or "" if os.path.exists(meta) else ""
            self.evals.append({"name": name, "kind": kind, "dir": d, "chunks": cs, "qrels": qrels, "root": root,
                               "chunk_ids": tok.ids([c["text"] for c in cs], MAX_TOKENS),
                               "query_ids": tok.ids([q["query"] for q in qrels], MAX_TOKENS)})

    def score(self, model, device, out_dir, tag):
        figures, sb_lines = {}, []
        for ev in self.evals:
            c = embed_all(model, ev["chunk_ids"], device)
            q = embed_all(model, ev["query_ids"], device)
            top = torch.topk(q @ c.T, k=min(10, c.shape[0]), dim=1).indices.cpu().numpy()
            if ev["kind"] == "sb":
                for qi, row in enumerate(top):
                    sb_lines.append({"repo": os.path.basename(ev["dir"]), "query": ev["qrels"][qi]["query"],
                                     "results": [{"file": os.path.normpath(os.path.join(ev["root"], ev["chunks"][i]["file"])), "start_line": ev["chunks"][i]["start"],
                                                  "end_line": ev["chunks"][i]["end"]} for i in row]})
            else:
                figures[ev["name"]] = docstring_eval.mrr(ev["chunks"], ev["qrels"], top)
        if sb_lines:
            figures.update(sb_score(self.pack, [e["dir"] for e in self.evals if e["kind"] == "sb"], sb_lines, out_dir, tag))
        return figures


def sb_score(pack, dirs, lines, out_dir, tag):
    """SB's figures by its scorer (the pack's copy), kept as sb-TAG.json."""
    s = sb_eval.score_results(lines, dirs, os.path.join(pack, "score.py"))
    json.dump(s, open(os.path.join(out_dir, f"sb-{tag}.json"), "w"))
    c = s["category_macro"]
    return {"sb": s["overall_macro"], "sb_architecture": c.get("architecture", 0.0),
            "sb_semantic": c.get("semantic", 0.0), "sb_symbol": c.get("symbol", 0.0)}


def dev_figure(fig):
    """What variants are chosen by: SB dev and the dev docstring evals, equally."""
    doc = [v for k, v in fig.items() if k.startswith("doc/")]
    return (fig.get("sb", 0.0) + (float(np.mean(doc)) if doc else 0.0)) / 2


def read_records(pack, name, limit=None):
    """The first `limit` (or all) records of the pack's NAME, a .jsonl.xz."""
    records = []
    with lzma.open(os.path.join(pack, name), "rt", encoding="utf-8") as f:
        for line in f:
            if limit and len(records) >= limit:
                break
            records.append(json.loads(line))
    return records


def load_pairs(pack, tok, limit=None):
    pairs = read_records(pack, "pairs.jsonl.xz", limit)
    q = tok.ids([p["query"] for p in pairs], QUERY_TOKENS)
    c = tok.ids([p["code"] for p in pairs], MAX_TOKENS)
    return q, c


def optimizer(model, lr, total):
    """AdamW, warm-up over the first tenth of `total` steps, then linear decay to 0."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / max(1, total - warmup)))
    return opt, sched


def optimizer_step(model, opt, sched, loss):
    """One optimizer step on `loss`, gradients clipped at norm 1."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()


def train_loop(model, variant, n, deadline, loss_of):
    """`variant["epochs"]` passes over `n` examples in shuffled batches of
    `variant["batch"]`, one optimizer step on `loss_of(batch's indices)`
    each, stopped (and said so) at `deadline`. Returns the steps taken."""
    rng = random.Random(SEED)
    torch.manual_seed(SEED)
    batch = variant["batch"]
    steps_per_epoch = max(1, n // batch)
    total = steps_per_epoch * variant["epochs"]
    opt, sched = optimizer(model, variant["lr"], total)
    model.train()
    done, losses = 0, []
    for _epoch in range(variant["epochs"]):
        order = list(range(n))
        rng.shuffle(order)
        for b in range(steps_per_epoch):
            if time.time() > deadline:
                log(f"  {variant['name']}: stopped at step {done}/{total} (time)")
                return done
            loss = loss_of(order[b * batch:(b + 1) * batch])
            optimizer_step(model, opt, sched, loss)
            losses.append(loss.item())
            done += 1
            if done % 50 == 0:
                log(f"  {variant['name']}: step {done}/{total} loss {np.mean(losses[-50:]):.4f}")
    return done


def train(model, q_ids, c_ids, variant, device, deadline):
    """In-batch negatives, both directions (MultipleNegativesRankingLoss, symmetric)."""
    def loss_of(idx):
        qi, qm = batch_tensors([q_ids[i] for i in idx], device)
        ci, cm = batch_tensors([c_ids[i] for i in idx], device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            qv, cv = encode(model, qi, qm), encode(model, ci, cm)
        logits = SCALE * qv @ cv.T
        labels = torch.arange(len(idx), device=device)
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2

    return train_loop(model, variant, len(q_ids), deadline, loss_of)


class PlainBert(torch.nn.Module):
    """BERT's encoder written out, for export: transformers' own traces its
    mask handling as constants of the example's shape; this has no branches.
    Inputs input_ids, attention_mask, token_type_ids; output last_hidden_state."""

    def __init__(self, model):
        super().__init__()
        cfg = model.config
        self.heads, self.layers, self.eps = cfg.num_attention_heads, cfg.num_hidden_layers, cfg.layer_norm_eps
        for name, tensor in model.state_dict().items():
            if not name.endswith("position_ids"):
                self.register_buffer(name.replace(".", "__"), tensor.detach().float().clone())

    def w(self, name):
        return getattr(self, name.replace(".", "__"))

    def norm(self, x, name):
        return F.layer_norm(x, x.shape[-1:], self.w(name + ".weight"), self.w(name + ".bias"), self.eps)

    def dense(self, x, name):
        return F.linear(x, self.w(name + ".weight"), self.w(name + ".bias"))

    def forward(self, input_ids, attention_mask, token_type_ids):
        batch, width = input_ids.shape
        positions = torch.arange(width, device=input_ids.device).unsqueeze(0)
        x = (F.embedding(input_ids, self.w("embeddings.word_embeddings.weight"))
             + F.embedding(positions, self.w("embeddings.position_embeddings.weight"))
             + F.embedding(token_type_ids, self.w("embeddings.token_type_embeddings.weight")))
        x = self.norm(x, "embeddings.LayerNorm")
        masked = (1.0 - attention_mask.to(x.dtype)).unsqueeze(1).unsqueeze(2) * -10000.0
        dims = x.shape[-1] // self.heads
        for i in range(self.layers):
            at = f"encoder.layer.{i}.attention"

            def heads(t):
                return t.reshape(batch, width, self.heads, dims).transpose(1, 2)

            q = heads(self.dense(x, f"{at}.self.query"))
            k = heads(self.dense(x, f"{at}.self.key"))
            v = heads(self.dense(x, f"{at}.self.value"))
            scores = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dims) + masked, dim=-1)
            context = (scores @ v).transpose(1, 2).reshape(batch, width, self.heads * dims)
            x = self.norm(x + self.dense(context, f"{at}.output.dense"), f"{at}.output.LayerNorm")
            inner = F.gelu(self.dense(x, f"encoder.layer.{i}.intermediate.dense"))
            x = self.norm(x + self.dense(inner, f"encoder.layer.{i}.output.dense"), f"encoder.layer.{i}.output.LayerNorm")
        return x


def export(model, tok, out_dir):
    """ONNX (fp32, opset 18) then weight-only int8 as the shipped MiniLM export."""
    model = model.float().cpu().eval()
    plain = PlainBert(model).eval()
    ids, mask = batch_tensors(tok.ids(["def retry(upload):\n    pass", "how are uploads retried"], MAX_TOKENS), "cpu")
    with torch.no_grad():
        ref = encode(model, ids, mask)
        hidden = plain(ids, mask, torch.zeros_like(ids))
        m = mask.unsqueeze(-1).float()
        mine = F.normalize((hidden * m).sum(1) / m.sum(1), dim=-1)
    agreement = float((ref * mine).sum(-1).min())
    log(f"plain BERT agrees with transformers' at cosine {agreement:.6f}")
    if agreement < 0.9999:
        raise RuntimeError(f"the plain BERT does not reproduce the model (cosine {agreement})")
    fp32 = os.path.join(out_dir, "model-fp32.onnx")
    args = (ids, mask, torch.zeros_like(ids))
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "token_type_ids": {0: "batch", 1: "sequence"}, "last_hidden_state": {0: "batch", 1: "sequence"}}
    names = dict(input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"])
    # torch's dynamo exporter (its TorchScript one cannot trace the shapes
    # this graph computes from its input).
    torch.onnx.export(plain, args, fp32, dynamic_axes=axes, opset_version=18, dynamo=True, **names)
    import onnx
    import onnx_int8
    int8 = os.path.join(out_dir, "model.onnx")
    onnx.save(onnx_int8.weight_only_int8(onnx.load(fp32)), int8)
    for name in os.listdir(out_dir):  # the dynamo exporter keeps weights beside the graph
        if name.startswith("model-fp32.onnx"):
            os.remove(os.path.join(out_dir, name))
    return int8


def check_export(model, tok, path, texts):
    """Mean and least cosine between torch's vectors and the int8 export's, one text at a time."""
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    model = model.float().cpu().eval()
    cos = []
    for ids in tok.ids(texts, MAX_TOKENS):
        i, m = batch_tensors([ids], "cpu")
        with torch.no_grad():
            ref = encode(model, i, m)[0].numpy()
        hidden = sess.run(["last_hidden_state"], {"input_ids": i.numpy(), "attention_mask": m.numpy(),
                                                  "token_type_ids": np.zeros_like(i.numpy())})[0][0]
        v = hidden.mean(0)
        v /= np.linalg.norm(v)
        cos.append(float(v @ ref))
    return float(np.mean(cos)), float(np.min(cos))


def save_weights(model, path):
    """The fine-tuned weights as prepare.py packs them (f16, word rows i8), in parts."""
    tensors = {k: v.float().numpy() for k, v in model.state_dict().items() if not k.endswith("position_ids")}
    np.savez(path, **prepare.packed_weights(tensors))
    split(path)


def split(path, part_bytes=15 * 1024 * 1024):
    """Files come back from the GPU machine in parts of at most 16 MiB."""
    raw = open(path, "rb").read()
    for k in range(math.ceil(len(raw) / part_bytes)):
        with open(f"{path}.part{k}", "wb") as f:
            f.write(raw[k * part_bytes:(k + 1) * part_bytes])
    os.remove(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pack")
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true", help="a few steps and two evals: checks the script")
    ap.add_argument("--variants", help="comma-separated names of VARIANTS to train (default: all)")
    ap.add_argument("--skip-base", action="store_true", help="do not measure MiniLM itself")
    ap.add_argument("--budget", type=float, default=420, help="seconds for training and evals before export")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = True
    tok = Tok(args.pack)
    only = {"sb/flask", "doc/py-logging"} if args.smoke else None
    evals = Evals(args.pack, tok, only)
    q_ids, c_ids = load_pairs(args.pack, tok, 2048 if args.smoke else None)
    log(f"{len(q_ids)} pairs, {sum(len(e['chunks']) for e in evals.evals)} eval chunks tokenized")
    report = {"variants": []}
    if os.path.exists(os.path.join(args.pack, "pack.json")):
        report["pack"] = json.load(open(os.path.join(args.pack, "pack.json")))
    base = load_model(args.pack, device)
    report["base"] = {} if args.skip_base else evals.score(base, device, args.out, "base")
    log(f"base: {json.dumps(report['base'])}")
    del base
    best, best_state = None, None
    deadline = T0 + args.budget
    chosen = [v for v in VARIANTS if not args.variants or v["name"] in args.variants.split(",")]
    for variant in chosen[:2] if args.smoke else chosen:
        if time.time() > deadline - 30:
            log(f"{variant['name']}: skipped (time)")
            continue
        model = load_model(args.pack, device)
        steps = train(model, q_ids, c_ids, variant, device, deadline - 25)
        fig = evals.score(model, device, args.out, variant["name"])
        entry = {**variant, "steps": steps, "figures": fig, "dev": dev_figure(fig)}
        report["variants"].append(entry)
        log(f"{variant['name']}: dev {entry['dev']:.4f} {json.dumps(fig)}")
        if best is None or entry["dev"] > best["dev"]:
            best, best_state = entry, {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        del model
        torch.cuda.empty_cache()
    report["base_dev"] = dev_figure(report["base"])
    report["chosen"] = best["name"] if best else None
    json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
    if best is None or (best["dev"] <= report["base_dev"] and not args.smoke):
        log("no variant beats MiniLM on the dev figure: nothing exported")
        return
    model = load_model(args.pack, "cpu")
    model.load_state_dict(best_state)
    try:
        path = export(model, tok, args.out)
    except Exception as e:
        log(f"export failed: {e!r}; the weights come back instead")
        save_weights(model, os.path.join(args.out, "weights.npz"))
        return
    sample = [c["text"] for e in evals.evals for c in e["chunks"][:6]] + \
             [q["query"] for e in evals.evals for q in e["qrels"][:2]]
    report["export_cosine_mean"], report["export_cosine_min"] = check_export(model, tok, path, sample)
    report["model_bytes"] = os.path.getsize(path)
    json.dump(report, open(os.path.join(args.out, "report.json"), "w"), indent=1)
    log(f"exported {best['name']}: {report['model_bytes']} bytes, cosine to torch mean "
        f"{report['export_cosine_mean']:.5f} min {report['export_cosine_min']:.5f}")
    split(path)


if __name__ == "__main__":
    main()
