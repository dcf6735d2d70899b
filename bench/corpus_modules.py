#!/usr/bin/env python3
"""Build a file-level code-search eval from a package's module docs.

The shared generators (../shared/eval/corpus_python.py, corpus_rust.py) ask
for one function by its docstring's first sentence. Questions about what a
file or a package is for ("where do we parse tar archives?") are another
kind: SB's architecture questions and the conceptual questions of issue 47
ask them, and a ranking tuned on function questions can fail them. This
makes them from real code: a module's own documentation (a Python module
docstring, a Rust file's leading `//!` lines, a Go package comment) is
blanked out, line numbers kept, and its first sentence becomes the query;
the answer is the whole file (for Go, every non-test file of the package's
directory). Any hit in an answer file counts, so run_eval.py's mrr@10 is
the file's rank.

`--lang prose` asks the same of documentation pages (reStructuredText or
Markdown): a page's first paragraph under its title is the question, the
page the answer, and the code named by `--code` (python, rust, go) shares
the tree, as docs and code share a repository. The code a page describes
answers such a question too but is not counted, so these figures say how
far prose sinks below code, not what a reader is best served by.

Writes OUT/tree/... (the language's source files, tests and examples left
out) and OUT/qrels.jsonl in run_eval.py's format.

usage: corpus_modules.py SRC OUT --lang python|rust|go|prose [--code LANG] [--max N] [--seed S]
"""
import argparse
import ast
import json
import os
import random
import re
import shutil
import sys

EXTENSIONS = {"python": (".py",), "rust": (".rs",), "go": (".go",), "prose": (".rst", ".md")}
# Pages that record or govern rather than explain.
NOT_A_PAGE = re.compile(r"(^|/)(news|changelog|changes|history|release[-_]?notes|licen[cs]e|authors|contributing|"
                        r"code_of_conduct|security|index)\.\w+$", re.I)
UNDERLINE = re.compile(r"^([=\-~^*#+])\1{2,}$")
SKIPPED_DIRS = {"__pycache__", "test", "tests", "testing", "testdata", "examples", "example", "benches",
                "fuzz", "site-packages", "vendor", "_vendor"}
# Boilerplate that opens files without saying what they are for.
NOT_A_DESCRIPTION = re.compile(r"copyright|licen[cs]e|generated|do not edit|this file is part of|coding[:=]|"
                               r"^(tests?|unit tests?|benchmarks?)\b|^todo\b", re.I)
# A file whose code is only these says nothing a search could find.
ONLY_WIRING = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(mod|use|extern crate)\b|^\s*(from|import)\s|^\s*[#@]|^\s*[})\]]")
MIN_CODE_LINES = 15


def clean(text):
    """Doc markup turned into the words a reader sees."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[`?([^\]`]+)`?\]", r"\1", text)
    text = re.sub(r"\b[A-Z]\{([^}<]*?)\s*(<[^>]*>)?\}", r"\1", text)  # epytext: L{x}, U{x <url>}
    text = re.sub(r"[`*\\]|:[a-z]+:|\{[a-z]+\}|^>\s*", "", text)  # rST roles, MyST's {ref}
    text = re.sub(r"\b(i\.e|e\.g|etc|vs|cf)\.", lambda m: m.group(1).replace(".", ""), text)  # not a sentence's end
    return " ".join(text.split())


def first_sentence(paragraph):
    paragraph = clean(paragraph)
    m = re.match(r"(.+?[.!?])(\s|$)", paragraph)
    return (m.group(1) if m else paragraph).strip()


def first_paragraph(lines):
    para = []
    for line in lines:
        if not line.strip():
            if para:
                break
            continue
        if line.lstrip().startswith(("#", "```", "=", "-" * 3)) and not para:
            return ""  # a heading or a code block first: not a sentence about the file
        para.append(line.strip())
    return " ".join(para)


def python_doc(text):
    """(first line, last line, doc text) of the module docstring, or None."""
    try:
        mod = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if not mod.body or not isinstance(mod.body[0], ast.Expr):
        return None
    value = mod.body[0].value
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    return mod.body[0].lineno, mod.body[0].end_lineno, value.value


def rust_doc(text):
    """(first line, last line, doc text) of the file's leading `//!` block, or None."""
    lines = text.split("\n")
    start = end = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("//!"):
            start = i if start is None else start
            end = i
        elif start is None and (not s or s.startswith("#![") or (s.startswith("//") and not s.startswith("///"))):
            continue
        else:
            break
    if start is None:
        return None
    doc = "\n".join(re.sub(r"^\s*//! ?", "", l) for l in lines[start:end + 1])
    return start + 1, end + 1, doc


def go_doc(text):
    """(first line, last line, doc text) of the `// Package x ...` comment above `package`, or None."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^package \w+", line):
            j = i - 1
            while j >= 0 and lines[j].startswith("//"):
                j -= 1
            if j + 1 == i:
                return None
            doc = "\n".join(re.sub(r"^// ?", "", l) for l in lines[j + 1:i])
            if not doc.lstrip().startswith("Package "):
                return None
            return j + 2, i, doc
        if line.strip() and not line.startswith("//"):
            return None
    return None


def prose_doc(text):
    """(first line, last line, text) of a page's first paragraph under its title, or None."""
    lines = text.split("\n")
    title = next((i for i, l in enumerate(lines) if l.startswith("# ") or (
        i + 1 < len(lines) and l.strip() and UNDERLINE.match(lines[i + 1].strip()))), None)
    if title is None:
        return None
    i = title + (1 if lines[title].startswith("# ") else 2)
    start = None
    while i < len(lines):
        s = lines[i].strip()
        markup = s.startswith(("..", "#", "```", "<", "|", "* ", "- ")) or UNDERLINE.match(s) or re.match(r":[\w-]+:\s", s)
        if start is None and s and not markup:
            start = i
        elif start is not None and (not s or markup):
            break
        i += 1
    if start is None:
        return None
    paragraph = " ".join(l.strip() for l in lines[start:i])
    paragraph = re.sub(r":\w+:`~?([^`<]*?)\s*(<[^>]*>)?`", r"\1", paragraph)  # :class:`x <y>` -> x
    paragraph = re.sub(r"`([^`<]*?)\s*<[^>]*>`_*", r"\1", paragraph)  # `text <url>`_ -> text
    return start + 1, i, re.sub(r"(\w)_\b", r"\1", paragraph)


DOC_OF = {"python": python_doc, "rust": rust_doc, "go": go_doc, "prose": prose_doc}


def code_lines(lines):
    return sum(1 for l in lines if l.strip() and not l.strip().startswith(("//", "#", '"""'))
               and not ONLY_WIRING.match(l))


def read_tree(src, lang, code=None):
    """The files the eval's tree holds: `lang`'s, and `code`'s beside prose."""
    extensions = EXTENSIONS[lang] + (EXTENSIONS[code] if code else ())
    files = {}
    for dp, dn, fn in os.walk(src):
        dn[:] = sorted(d for d in dn if d not in SKIPPED_DIRS and not d.startswith("."))
        for f in sorted(fn):
            if not f.endswith(extensions) or f.endswith("_test.go") or f.startswith("test_"):
                continue
            path = os.path.join(dp, f)
            try:
                files[os.path.relpath(path, src)] = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
    return files


def candidates(files, lang):
    """(query, [answer files], file to blank, first line, last line) for each documented module."""
    found = []
    for rel, text in files.items():
        if not rel.endswith(EXTENSIONS[lang]) or (lang == "prose" and NOT_A_PAGE.search(rel)):
            continue
        doc = DOC_OF[lang](text)
        if doc is None:
            continue
        start, end, body = doc
        query = first_sentence(first_paragraph(body.split("\n")))
        if lang == "go":
            # "Package tar implements ...": the name is the folder's; a user asks for what it does.
            query = re.sub(r"^Package \S+\s+", "", query)
        if not 5 <= len(query.split()) <= 40 or NOT_A_DESCRIPTION.search(query):
            continue
        if lang == "go":
            folder = os.path.dirname(rel)
            answers = sorted(r for r in files if os.path.dirname(r) == folder)
        else:
            answers = [rel]
        lines_left = sum(code_lines(files[a].split("\n")) for a in answers) - code_lines(
            text.split("\n")[start - 1:end])
        if lines_left < MIN_CODE_LINES:
            continue
        found.append((query, answers, rel, start, end))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--lang", required=True, choices=sorted(EXTENSIONS))
    ap.add_argument("--code", choices=sorted(set(EXTENSIONS) - {"prose"}), help="code in the tree beside prose")
    ap.add_argument("--max", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    files = read_tree(a.src, a.lang, a.code)
    if not files:
        sys.exit(f"corpus_modules: no {a.lang} sources under {a.src}")
    cands = candidates(files, a.lang)
    # A sentence two modules share has two answers and says neither.
    counts = {}
    for c in cands:
        counts[c[0].lower()] = counts.get(c[0].lower(), 0) + 1
    cands = [c for c in cands if counts[c[0].lower()] == 1]
    random.Random(a.seed).shuffle(cands)
    chosen = cands[: a.max]
    blank = {rel: (s, e) for _, _, rel, s, e in chosen}
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    for rel, text in files.items():
        lines = text.split("\n")
        if rel in blank:
            s, e = blank[rel]
            lines[s - 1:e] = [""] * (e - s + 1)
        dst = os.path.join(a.out, "tree", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    with open(os.path.join(a.out, "qrels.jsonl"), "w") as f:
        for query, answers, *_ in chosen:
            targets = [{"file": r, "start_line": 1, "end_line": files[r].count("\n") + 1, "grade": 1}
                       for r in answers]
            f.write(json.dumps({"query": query, "targets": targets}) + "\n")
    print(f"{len(files)} files, {len(cands)} documented modules, {len(chosen)} queries -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
