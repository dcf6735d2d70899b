"""The code model's record: the shipped file is the one its lock line names,
it was trained on the manifest's pairs, the variant shipped is the one its
run chose, it beat MiniLM on the dev figure, and its int8 export agrees
with the trained weights."""
import hashlib
import json
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
REPORT = os.path.join(HERE, "..", "transformer", "report.json")
MODEL = "models/vecgrep-code-minilm-l6.onnx"


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class CodeModel(unittest.TestCase):
    def setUp(self):
        self.report = read_json(REPORT)

    def test_the_shipped_model_is_the_locked_one(self):
        with open(os.path.join(REPO, MODEL), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(REPO, "scripts", "assets.lock"), encoding="utf-8") as f:
            lines = [l.split() for l in f if f"repo:{MODEL}" in l]
        self.assertEqual(len(lines), 1, "one lock line installs the code model")
        self.assertEqual(lines[0][0], digest, "models/ and scripts/assets.lock disagree: run rebuild.sh install")
        self.assertEqual(self.report["model_bytes"], os.path.getsize(os.path.join(REPO, MODEL)))

    def test_it_was_trained_on_the_manifests_pairs(self):
        manifest = read_json(os.path.join(HERE, "..", "manifest.json"))
        self.assertEqual(self.report["pack"]["pairs_sha256"], manifest["pairs_sha256"])

    def test_the_chosen_variant_beat_minilm_and_exported_faithfully(self):
        chosen = [v for v in self.report["variants"] if v["name"] == self.report["chosen"]]
        self.assertEqual(len(chosen), 1)
        self.assertEqual(chosen[0]["dev"], max(v["dev"] for v in self.report["variants"]))
        self.assertGreater(chosen[0]["dev"], self.report["base_dev"])
        self.assertGreaterEqual(self.report["export_cosine_min"], 0.995)


if __name__ == "__main__":
    unittest.main()
