"""What the trainer reads: vecgrep's own indexes (chunks as vecgrep embeds
them, with the teacher's vectors when built with --full), the mined pairs,
the tokenizer, and a static table; texts become bags of token ids."""
import glob
import json
import os
import sqlite3
import struct

import numpy as np
import scipy.sparse as sp
from tokenizers import Tokenizer

DIMS = 384
MAGIC = b"VGSTATIC"
HEADER_BYTES = 16 + 32


def model_dir():
    """The embedding model's files, where scripts/fetch-assets.sh installs them."""
    if os.environ.get("VECGREP_MODEL_DIR"):
        return os.environ["VECGREP_MODEL_DIR"]
    data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(data, "vecgrep", "models", "all-MiniLM-L6-v2")


class Bags:
    """Texts as token-id bags, the way embed::StaticModel tokenizes and
    weighs them: a token that occurs n times weighs `1 + ln n` ("log", what
    the shipped table does) or n ("count", what the trainer learns from)."""

    def __init__(self, tokenizer_path=None, weighting="log"):
        if weighting not in ("log", "count"):
            raise ValueError(f"weighting {weighting!r} is neither log nor count")
        self.tok = Tokenizer.from_file(tokenizer_path or os.path.join(model_dir(), "tokenizer.json"))
        self.vocab = self.tok.get_vocab_size(with_added_tokens=True)
        self.weighting = weighting

    def ids(self, texts):
        out = []
        for start in range(0, len(texts), 4096):
            enc = self.tok.encode_batch_fast(texts[start:start + 4096], add_special_tokens=False)
            out.extend(e.ids for e in enc)
        return out

    def matrix(self, id_lists):
        """A sparse bag-of-tokens matrix, one row per text, each token's
        weight in it."""
        rows = np.repeat(np.arange(len(id_lists)), [len(x) for x in id_lists])
        cols = np.fromiter((i for x in id_lists for i in x), dtype=np.int64, count=len(rows))
        m = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(len(id_lists), self.vocab))
        m.sum_duplicates()
        if self.weighting == "log":
            m.data = 1 + np.log(m.data)
        return m


def read_table(path):
    """A table in vecgrep's cache format: (rows V×DIMS float32, header)."""
    raw = open(path, "rb").read()
    if raw[:8] != MAGIC:
        raise ValueError(f"{path}: not a static table")
    vocab, dims = struct.unpack("<II", raw[8:16])
    rows = np.frombuffer(raw[HEADER_BYTES:], dtype="<f4").reshape(vocab, dims).copy()
    return rows, raw[:HEADER_BYTES]


def distilled_table():
    """The table vecgrep distilled from MiniLM at first use (in its cache)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    found = sorted(glob.glob(os.path.join(cache, "vecgrep", "static-*.bin")), key=os.path.getmtime)
    if not found:
        raise FileNotFoundError("no distilled static table in the cache: run a vecgrep search once")
    return read_table(found[-1])[0]


def index_chunks(root, with_vectors=False):
    """The chunks of the vecgrep index under `root`: dicts of file, lines,
    embedded text parts (around, text) and, if asked, the model's vector."""
    db = sqlite3.connect(f"file:{os.path.join(root, '.vecgrep', 'index.db')}?mode=ro", uri=True)
    cols = "f.path, c.start_line, c.end_line, c.around, c.text" + (", c.embedding" if with_vectors else "")
    out = []
    for row in db.execute(f"SELECT {cols} FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"):
        chunk = {"file": row[0], "start": row[1], "end": row[2], "around": row[3], "text": row[4]}
        if with_vectors:
            if row[5] is None:
                continue
            chunk["vector"] = np.frombuffer(row[5], dtype="<f4")
        out.append(chunk)
    db.close()
    return out


def read_pairs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def embed(table, bag_matrix):
    """Static vectors: rows summed, unit length (zeros stay zeros)."""
    u = bag_matrix @ table
    n = np.linalg.norm(u, axis=1, keepdims=True)
    return u / np.maximum(n, 1e-12)
