"""The corpus's own checks: nothing named in decontaminate.txt is in the
manifest, the mirror of that list is current, and the pair miner finds the
documented definitions of each language (and nothing else) in small files."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))

import decontam  # noqa: E402
import docs  # noqa: E402
import fetch  # noqa: E402
import languages  # noqa: E402

MANIFEST = os.path.join(HERE, "..", "manifest.json")
MODULE_EVALS = os.path.join(HERE, "..", "..", "bench", "modules", "packages.tsv")
CHECK_EVALS = os.path.join(HERE, "..", "..", "bench", "modules", "check-packages.tsv")


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Decontamination(unittest.TestCase):
    def test_the_mirror_is_the_shared_list(self):
        if not os.path.exists(decontam.SHARED):
            self.skipTest("no ../shared/eval beside this checkout")
        self.assertEqual(read_text(decontam.MIRROR), read_text(decontam.SHARED),
                         "train/decontaminate.txt differs from ../shared/eval/decontaminate.txt: copy it over")

    def test_no_listed_name_is_in_the_manifest(self):
        manifest = json.loads(read_text(MANIFEST))
        dec = decontam.Decontaminator()
        self.assertGreater(len(manifest["packages"]), 50)
        for pkg in manifest["packages"]:
            self.assertIsNone(dec.matching(pkg["name"]), pkg["name"])
            for path in pkg["pair_files"]:
                self.assertIsNone(dec.path_matching(path), f"{pkg['name']}: {path}")
        for key, paths in manifest["teacher_files"].items():
            self.assertIsNone(dec.matching(key.split("/", 1)[1]), key)
            for path in paths:
                self.assertIsNone(dec.path_matching(path), f"{key}: {path}")

    def test_no_listed_name_is_in_the_package_list(self):
        dec = decontam.Decontaminator()
        for pkg in fetch.read_packages():
            self.assertIsNone(dec.matching(pkg.name), pkg.name)

    def test_the_manifest_lists_exactly_the_package_list(self):
        manifest = json.loads(read_text(MANIFEST))
        listed = [(p.source, p.name, p.version, p.sha256) for p in fetch.read_packages()]
        self.assertEqual([(p["source"], p["name"], p["version"], p["sha256"]) for p in manifest["packages"]], listed)
        self.assertTrue(all(len(p[3]) == 64 for p in listed), "every package is pinned by sha256")

    def test_the_projects_own_evals_are_kept_out_too(self):
        dec = decontam.Decontaminator()
        for name in decontam.heldout_names():
            self.assertTrue(dec.matching(name), name)

    def test_the_module_evals_packages_are_kept_out(self):
        dec = decontam.Decontaminator(decontam.heldout_names())
        for path in (MODULE_EVALS, CHECK_EVALS):
            packages = fetch.read_packages(path)
            self.assertGreater(len(packages), 5)
            for pkg in packages:
                self.assertTrue(dec.matching(pkg.name), f"{pkg.name} ({os.path.basename(path)}) is not in train/heldout.txt")
                self.assertEqual(len(pkg.sha256), 64, f"{pkg.name} ({os.path.basename(path)}) is pinned")

    def test_names_match_by_whole_tokens(self):
        dec = decontam.Decontaminator(["rack", "regex-automata", "crossbeam-*", "symfony/console", "lazy.nvim"])
        self.assertEqual(dec.matching("ruby-rack-protection"), "rack")
        self.assertIsNone(dec.matching("ruby-racket"))
        self.assertTrue(dec.matching("regex_automata"))
        self.assertIsNone(dec.matching("regex"))
        self.assertTrue(dec.matching("crossbeam-channel"))
        self.assertTrue(dec.matching("php-symfony-console"))
        self.assertIsNone(dec.matching("php-symfony-yaml"))
        self.assertTrue(dec.path_matching("plugins/lazy.nvim/init.lua"))
        self.assertTrue(dec.path_matching("src/rack/utils.rb"))
        self.assertIsNone(dec.path_matching("src/track/utils.rb"))
        # An owner/name spans two components (audit 217: no one of them matched).
        self.assertTrue(dec.path_matching("vendor/symfony/console/Application.php"))
        self.assertIsNone(dec.path_matching("vendor/symfony/yaml/Yaml.php"))

    def test_the_list_is_read_with_its_descriptions(self):
        names = decontam.listed_names(decontam.MIRROR)
        for name in ["tokio", "axum", "regex-syntax", "markupsafe", "email", "hashicorp/raft", "@eslint/*", "client_golang"]:
            self.assertTrue(any(n.lower() == name.lower() or n.endswith(name) for n in names), name)


def pairs(language, text, path="x"):
    return [(line, docs.question(doc), code) for line, doc, code in languages.extract(language, text, path)]


class PairMiner(unittest.TestCase):
    def assert_one(self, language, text, question, first_code_line, path="x"):
        found = [(q, c) for _, q, c in pairs(language, text, path) if q]
        self.assertEqual(len(found), 1, found)
        self.assertEqual(found[0][0], question)
        self.assertEqual(found[0][1].split("\n")[0].strip(), first_code_line)
        self.assertNotIn(question, found[0][1], "the doc is not on the code side")

    def test_python(self):
        self.assert_one("python", 'def f(x):\n    """Double the value of x.\n\n    Args: x\n    """\n    y = x\n    return y * 2\n'
                        'def g():\n    return 1\n', "Double the value of x.", "def f(x):")

    def test_python_code_side_has_no_docstring(self):
        (_, q, code), = pairs("python", 'class A:\n    """Holds the pending retries."""\n    x = 1\n    y = 2\n')
        self.assertNotIn("pending", code)

    def test_rust(self):
        self.assert_one("rust", "/// Parse a [`Url`] from text.\n#[inline]\npub fn parse(s: &str) -> Url {\n    let u = Url::new();\n    u\n}\n"
                        "// a plain comment\nfn other() {\n    1;\n}\n", "Parse a Url from text.", "pub fn parse(s: &str) -> Url {")

    def test_go_ignores_comments_inside_bodies(self):
        text = ("// Retry calls f until it succeeds or the attempts run out.\nfunc Retry(f func() error) error {\n"
                "\t// Call it once first.\n\tx := f()\n\treturn x\n}\n")
        self.assert_one("go", text, "Retry calls f until it succeeds or the attempts run out.", "func Retry(f func() error) error {")

    def test_java_javadoc_and_tags(self):
        text = ("/**\n * Returns the {@link Map} of pending uploads.\n * @param q the queue\n */\n@Override\n"
                "public Map<String, Upload> pending(Queue q) {\n    Map m = q.map();\n    return m;\n}\n")
        self.assert_one("java", text, "Returns the Map of pending uploads.", "public Map<String, Upload> pending(Queue q) {")

    def test_typescript_method(self):
        text = ("class A {\n  /**\n   * Merge two sorted arrays into one.\n   */\n  merge(a: number[], b: number[]): number[] {\n"
                "    const out = [];\n    return out;\n  }\n}\n")
        self.assert_one("typescript", text, "Merge two sorted arrays into one.", "merge(a: number[], b: number[]): number[] {")

    def test_ruby_until_its_end(self):
        text = "class A\n  # Send the mail to every recipient.\n  def deliver(mail)\n    x = 1\n    mail.send\n  end\n\n  def b\n  end\nend\n"
        (_, q, code), = [p for p in pairs("ruby", text) if p[1]]
        self.assertEqual(q, "Send the mail to every recipient.")
        self.assertEqual(code.split("\n")[-1].strip(), "end")
        self.assertNotIn("def b", code)

    def test_lua(self):
        text = "--- Split a string by a separator.\nfunction M.split(s, sep)\n  local t = {}\n  return t\nend\n"
        self.assert_one("lua", text, "Split a string by a separator.", "function M.split(s, sep)")

    def test_haskell_from_haddock_html(self):
        page = ('<html><pre><span class="hs-comment">-- | Split a list into chunks of the given size.</span>\n'
                '<span>chunksOf</span> :: Int -&gt; [e] -&gt; [[e]]\nchunksOf i ls = map (take i) (build (splitter ls))\n'
                '  where x = 1\n\nother :: Int\nother = 2\n</pre></html>')
        (_, q, code), = pairs("haskell", page, "src/Data.List.Split.html")
        self.assertEqual(q, "Split a list into chunks of the given size.")
        self.assertTrue(code.startswith("chunksOf :: Int -> [e] -> [[e]]"))
        self.assertNotIn("other", code)

    def test_c_block_comment(self):
        text = ("/* Copy at most N bytes of SRC to DEST, always ending with a NUL. */\nsize_t\n"
                "strlcpy_x (char *dest, const char *src, size_t n)\n{\n  size_t i = 0;\n  return i;\n}\n")
        found = [q for _, q, _ in pairs("c", text) if q]
        self.assertEqual(found, [])  # the head spans two lines: no definition line under the comment
        text = text.replace("size_t\nstrlcpy_x", "size_t strlcpy_x")
        self.assert_one("c", text, "Copy at most N bytes of SRC to DEST, always ending with a NUL.",
                        "size_t strlcpy_x (char *dest, const char *src, size_t n)")

    def test_bash(self):
        text = "#!/bin/sh\n\n# Print the usage of the script and exit.\nusage() {\n  echo usage\n  exit 2\n}\n"
        self.assert_one("bash", text, "Print the usage of the script and exit.", "usage() {")

    def test_undocumented_and_boilerplate_are_not_pairs(self):
        self.assertEqual([p for p in pairs("rust", "fn a() {\n 1;\n 2;\n}\n") if p[1]], [])
        self.assertEqual([p for p in pairs("java", "/** Constructor. */\npublic A() {\n a();\n b();\n}\n") if p[1]], [])
        self.assertIsNone(docs.question("// TODO: make this faster please"))
        self.assertIsNone(docs.question("/// x"))


class TeacherDraw(unittest.TestCase):
    def test_a_file_kept_out_leaves_the_others_draw_as_it_was(self):
        import mine
        files = [(f"pkg{i % 7}", f"src/f{i:03}.go", "x" * 5_000) for i in range(400)]
        before = mine.choose_teacher_files({"go": files})["go"]
        self.assertGreater(len(before), 50, "the budget draws many, not all")
        self.assertLess(len(before), len(files))
        drawn = [files[i][:2] for i in before]
        # The first drawn is kept out now (a name added to heldout.txt):
        # the rest come in the same order, one more at the end.
        kept = [f for f in files if f[:2] != drawn[0]]
        after = [kept[i][:2] for i in mine.choose_teacher_files({"go": kept})["go"]]
        self.assertEqual(after[:len(drawn) - 1], drawn[1:])
        self.assertEqual(mine.choose_teacher_files({"go": files})["go"], before, "the same files, the same draw")

    def test_the_teachers_index_outlives_a_new_tree(self):
        """rebuild.sh's stamp says the teacher's index is current: a mine that
        removed it failed every second rebuild (audit 217)."""
        import tempfile
        import mine
        with tempfile.TemporaryDirectory() as dest:
            os.makedirs(os.path.join(dest, ".vecgrep"))
            with open(os.path.join(dest, ".vecgrep", "index.db"), "w") as f:
                f.write("index")
            os.makedirs(os.path.join(dest, "old"))
            with open(os.path.join(dest, "old", "gone.go"), "w") as f:
                f.write("package old\n")
            mine.write_teacher_tree(dest, {"go": [("p", "a.go", "package a\n")]})
            self.assertTrue(os.path.isfile(os.path.join(dest, ".vecgrep", "index.db")))
            self.assertFalse(os.path.exists(os.path.join(dest, "old")))
            self.assertTrue(os.path.isfile(os.path.join(dest, "go", "p", "a.go")))

    def test_missing_benchmark_trees_stop_the_mine(self):
        import mine
        with self.assertRaises(SystemExit) as stopped:
            mine.benchmark_hashes("/nonexistent/trees.tar.gz")
        self.assertIn("the benchmark's trees are not at", str(stopped.exception))


class ModelCard(unittest.TestCase):
    def test_the_cards_figures_are_the_shipped_tables_and_manifests(self):
        """Audit 217: the card kept an older table's calibration line and
        teacher sample after a repack."""
        import re
        import struct
        root = os.path.join(HERE, "..", "..")
        with open(os.path.join(root, "train", "MODEL_CARD.md"), encoding="utf-8") as f:
            card = f.read()
        with open(os.path.join(root, "models", "static-code.bin"), "rb") as f:
            slope, intercept = struct.unpack("<ff", f.read(56)[48:56])
        said = re.search(r"model ≈ ([0-9.]+) × static − ([0-9.]+)", card)
        self.assertIsNotNone(said)
        self.assertEqual((said.group(1), said.group(2)), (f"{slope:.3f}", f"{-intercept:.3f}"))
        with open(os.path.join(root, "train", "manifest.json"), encoding="utf-8") as f:
            files = sum(len(v) for v in json.load(f)["teacher_files"].values())
        self.assertIn(f"{files:,} files of the corpus", card)


if __name__ == "__main__":
    unittest.main()

