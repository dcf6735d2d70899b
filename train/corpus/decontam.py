"""The names no training corpus may hold (../../../shared/eval/decontaminate.txt,
mirrored in train/decontaminate.txt), and the test of a package name or a
path against them.

A listed name is split into tokens at - _ . / and @; it matches a package
name, or a path component (directory or file stem), whose tokens hold the
listed tokens in a row: "rack" matches ruby-rack-protection, "regex-automata"
matches regex_automata-0.4, "symfony/console" matches php-symfony-console.
A trailing '*' in a listed name (crossbeam-*, @eslint/*) matches any tokens
after it. This is deliberately wider than a name's exact spelling: a corpus
loses a few innocent packages, never lets a listed one in.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MIRROR = os.path.join(HERE, "..", "decontaminate.txt")
HELDOUT = os.path.join(HERE, "..", "heldout.txt")
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "eval", "decontaminate.txt")

_SPLIT = re.compile(r"[-_./@+\s]+")


def tokens(name):
    return [t for t in _SPLIT.split(name.lower()) if t]


def listed_names(path=None):
    """Every name the list gives: its first column, the repository's name of a
    benchmark line (owner/name), and each name in the description of an
    evaluation-source line ("crates regex, regex-automata")."""
    path = path or (SHARED if os.path.exists(SHARED) else MIRROR)
    names = set()
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        names.add(cols[0].strip())
        if len(cols) >= 2:
            described = cols[1].strip()
            if len(cols) >= 3 and "/" in described:  # benchmark line: owner/name, language
                names.add(described.split("/", 1)[1])
            elif ":" in described:  # "Python standard library: email"
                names.update(n.strip() for n in described.split(":", 1)[1].split(","))
            else:  # "crates regex, regex-automata", "Go github.com/hashicorp/raft"
                first, _, rest = described.partition(" ")
                for n in rest.split(","):
                    n = n.strip()
                    if n.startswith("github.com/"):
                        n = n[len("github.com/"):]
                    if n and " " not in n:
                        names.add(n)
    return sorted(n for n in names if tokens(n))


def heldout_names(path=HELDOUT):
    """The packages the project's own evals are built from (train/heldout.txt)."""
    with open(path, encoding="utf-8") as f:
        return [line.split("\t")[0] for line in f if line.strip() and not line.startswith("#")]


class Decontaminator:
    def __init__(self, names=None):
        names = names if names is not None else listed_names() + heldout_names()
        self.patterns = [tokens(n) for n in names]

    def matching(self, name):
        """The first listed name whose tokens appear in a row in `name`'s, or None."""
        have = tokens(name)
        for pat in self.patterns:
            wild = pat[-1].endswith("*")
            pat = [p.rstrip("*") for p in pat]
            pat = [p for p in pat if p]
            n = len(pat)
            for i in range(len(have) - n + 1):
                if have[i:i + n] == pat and (not wild or i + n <= len(have)):
                    return " ".join(pat)
        return None

    def path_matching(self, relpath):
        """A listed name that a directory or the file's stem of `relpath` is,
        or whose tokens its directories and stem hold in a row: a listed
        owner/name (hashicorp/raft) spans two components, which no one of
        them matched."""
        parts = relpath.replace("\\", "/").split("/")
        parts[-1] = parts[-1].split(".")[0]
        for part in parts:
            hit = self.matching(part)
            if hit:
                return hit
        return self.matching("/".join(parts))
