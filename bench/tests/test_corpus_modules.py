"""The file-level eval generator (bench/corpus_modules.py), on small trees per language."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = "".join(f"def step_{i}(x):\n    return x + {i}\n\n" for i in range(10))
RUST_CODE = "".join(f"pub fn step_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n" for i in range(10))
GO_CODE = "".join(f"func step{i}(x int) int {{\n\treturn x + {i}\n}}\n" for i in range(10))


def make(files, lang, *flags):
    """(qrels, tree files) of the eval made from `files` ({path: text})."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w", encoding="utf-8") as f:
                f.write(text)
        subprocess.run([sys.executable, os.path.join(BENCH, "corpus_modules.py"), src, out, "--lang", lang, *flags],
                       check=True, capture_output=True)
        with open(os.path.join(out, "qrels.jsonl"), encoding="utf-8") as f:
            qrels = [json.loads(line) for line in f]
        tree = {}
        for dp, _, fn in os.walk(os.path.join(out, "tree")):
            for name in fn:
                path = os.path.join(dp, name)
                with open(path, encoding="utf-8") as f:
                    tree[os.path.relpath(path, os.path.join(out, "tree"))] = f.read()
        return qrels, tree


class Python(unittest.TestCase):
    def test_the_module_docstring_is_the_question_and_the_file_the_answer(self):
        text = '"""Retry failed uploads with exponential backoff.\n\nMore words here.\n"""\n' + CODE
        qrels, tree = make({"pkg/retry.py": text}, "python")
        self.assertEqual(qrels[0]["query"], "Retry failed uploads with exponential backoff.")
        target = qrels[0]["targets"][0]
        self.assertEqual((target["file"], target["start_line"]), ("pkg/retry.py", 1))
        self.assertEqual(target["end_line"], text.count("\n") + 1)
        self.assertNotIn("exponential", tree["pkg/retry.py"], "the docstring is blanked")
        self.assertEqual(tree["pkg/retry.py"].count("\n"), text.count("\n"), "line numbers are kept")

    def test_boilerplate_short_files_and_tests_ask_nothing(self):
        qrels, tree = make({
            "a.py": '"""Copyright 2020 the authors of this package."""\n' + CODE,
            "b.py": '"""Helpers for parsing the configuration files."""\nimport os\n',
            "tests/test_c.py": '"""Checks that uploads are retried after failures."""\n' + CODE,
        }, "python")
        self.assertEqual(qrels, [])
        self.assertNotIn("tests/test_c.py", tree)


class Rust(unittest.TestCase):
    def test_leading_inner_doc_after_attributes_with_links_cleaned(self):
        text = "#![allow(dead_code)]\n//! Strategies for generating [`Option`] values.\n//!\n//! # Examples\n" + RUST_CODE
        qrels, tree = make({"src/option.rs": text}, "rust")
        self.assertEqual(qrels[0]["query"], "Strategies for generating Option values.")
        self.assertTrue(tree["src/option.rs"].startswith("#![allow(dead_code)]\n\n\n\n"))

    def test_a_module_of_only_declarations_asks_nothing(self):
        text = "//! The parsers and the streams they read.\n" + "".join(f"pub mod m{i};\n" for i in range(20))
        self.assertEqual(make({"src/lib.rs": text}, "rust")[0], [])


class Go(unittest.TestCase):
    def test_the_package_comment_asks_for_any_file_of_its_folder(self):
        files = {
            "md4/doc.go": "// Package md4 implements the MD4 hash algorithm as defined in RFC 1320.\npackage md4\n",
            "md4/block.go": "package md4\n" + GO_CODE,
            "md4/block_test.go": "package md4\n" + GO_CODE,
            "sha3/sha3.go": "package sha3\n" + GO_CODE,
        }
        qrels, tree = make(files, "go")
        self.assertEqual(qrels[0]["query"], "implements the MD4 hash algorithm as defined in RFC 1320.")
        self.assertEqual(sorted(t["file"] for t in qrels[0]["targets"]), ["md4/block.go", "md4/doc.go"])
        self.assertNotIn("md4/block_test.go", tree)
        self.assertNotIn("MD4", tree["md4/doc.go"])


class Prose(unittest.TestCase):
    def test_a_pages_first_paragraph_under_its_title_asks_for_the_page_beside_the_code(self):
        page = ("Stats Collection\n================\n\n.. _topics-stats:\n\n"
                "Scrapy provides a facility for collecting stats (e.g. counters) as :class:`key/value <dict>` pairs.\n"
                "It is always enabled.\n\n" + "More about the stats collector and its uses.\n" * 20)
        files = {"docs/stats.rst": page, "docs/news.rst": page.replace("stats", "news"), "pkg/stats.py": CODE}
        qrels, tree = make(files, "prose", "--code", "python")
        self.assertEqual([q["query"] for q in qrels],
                         ["Scrapy provides a facility for collecting stats (eg counters) as key/value pairs."])
        self.assertEqual(qrels[0]["targets"][0]["file"], "docs/stats.rst")
        self.assertIn("pkg/stats.py", tree, "the code shares the tree")
        self.assertNotIn("facility", tree["docs/stats.rst"], "the paragraph is blanked")
        self.assertIn("Stats Collection", tree["docs/stats.rst"], "the title stays")

    def test_markdown_titles_and_no_code_without_code(self):
        page = "# Retries\n\nFailed uploads are retried with exponential backoff and jitter.\n\n" + "Details.\n" * 20
        qrels, tree = make({"docs/retries.md": page, "pkg/retry.py": CODE}, "prose")
        self.assertEqual(qrels[0]["query"], "Failed uploads are retried with exponential backoff and jitter.")
        self.assertNotIn("pkg/retry.py", tree)


class Choice(unittest.TestCase):
    def test_a_sentence_two_modules_share_is_dropped(self):
        doc = '"""Helpers for reading the configuration of a project."""\n'
        self.assertEqual(make({"a.py": doc + CODE, "b.py": doc + CODE}, "python")[0], [])


if __name__ == "__main__":
    unittest.main()
