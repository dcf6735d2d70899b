"""The reranker's measurement (train/reranker/orders.py): a question and a
candidate become one sequence within the window, each order measured keeps
every candidate once, and a docstring question is scored as run_eval.py
scores it. The CPU run's negatives (negatives.py) come from the pair's
package and never answer its question."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reranker"))
import negatives  # noqa: E402
import orders  # noqa: E402

CLS, SEP = 101, 102


class Joined(unittest.TestCase):
    def test_question_then_text_with_their_types(self):
        ids, types = orders.joined([CLS, 7, 8, SEP], [CLS, 20, 21, SEP], 16)
        self.assertEqual(ids, [CLS, 7, 8, SEP, 20, 21, SEP])
        self.assertEqual(types, [0, 0, 0, 0, 1, 1, 1])

    def test_a_long_text_is_cut_to_the_window_with_sep_last(self):
        ids, types = orders.joined([CLS, 7, SEP], [CLS] + list(range(200, 260)) + [SEP], 10)
        self.assertEqual(len(ids), 10)
        self.assertEqual(ids[:3], [CLS, 7, SEP])
        self.assertEqual(ids[-1], SEP)
        self.assertEqual(types, [0, 0, 0] + [1] * 7)


class Orders(unittest.TestCase):
    def test_every_order_keeps_each_candidate_once(self):
        scores = [[0.1, 0.9, 0.5] + [0.0] * 27, [], [2.0]]
        for name, per_question in orders.orders_of(scores).items():
            for s, order in zip(scores, per_question):
                self.assertEqual(sorted(order), list(range(len(s))), name)

    def test_the_reranker_orders_its_first_k_and_leaves_the_rest(self):
        scores = [[0.0] * 10 + [9.0] + [0.0] * 19]
        o = orders.orders_of(scores)
        self.assertEqual(o["vecgrep"][0], list(range(30)))
        self.assertEqual(o["rerank@10"][0][10], 10, "the 11th stays 11th when only 10 are reordered")
        self.assertEqual(o["rerank@30"][0][0], 10)

    def test_an_order_past_what_was_scored_is_not_reported_again(self):
        o = orders.orders_of([[0.5] * 10, [1.0, 2.0]])
        self.assertIn("rerank@10", o)
        self.assertNotIn("rerank@30", o, "with 10 scored, rerank@30 would be rerank@10 under another name")

    def test_fusion_weighs_both_orders(self):
        # The model's first is vecgrep's tenth, vecgrep's first the model's last.
        scores = [[-1.0] + [0.0] * 8 + [1.0] + [0.0] * 20]
        o = orders.orders_of(scores)
        self.assertEqual(o["rerank@10"][0][0], 9)
        place = {w: o[f"fused{w}"][0].index(9) for w in orders.FUSE_WEIGHTS}
        self.assertTrue(place[0.7] < place[0.5] < place[0.3] < 9, place)
        self.assertGreater(o["fused0.7"][0].index(0), o["fused0.3"][0].index(0))


class ReciprocalRank(unittest.TestCase):
    def test_the_first_overlapping_hit_in_the_right_file_counts(self):
        targets = [{"file": "a.py", "start_line": 10, "end_line": 20}]
        hits = [{"file": "b.py", "start_line": 10, "end_line": 20},
                {"file": "a.py", "start_line": 1, "end_line": 9},
                {"file": "a.py", "start_line": 20, "end_line": 30}]
        self.assertEqual(orders.reciprocal_rank(hits, targets), 1 / 3)
        self.assertEqual(orders.reciprocal_rank(hits[:2], targets), 0.0)


if __name__ == "__main__":
    unittest.main()


class PackageNegatives(unittest.TestCase):
    def pairs(self):
        out = []
        for pkg, lang, n in (("a", "py", 12), ("b", "py", 12), ("c", "go", 20)):
            out += [{"query": f"{pkg} q{i}", "code": f"{pkg} code {i}", "package": pkg, "lang": lang} for i in range(n)]
        # A copy of a's first code, and a second question asking what a's first asks.
        out.append({"query": "a q0", "code": "a other", "package": "a", "lang": "py"})
        out.append({"query": "a copy", "code": "a code 0", "package": "a", "lang": "py"})
        return out

    def test_each_pair_gets_its_packages_codes_and_never_its_answer(self):
        pairs = self.pairs()
        got = negatives.package_negatives(pairs)
        self.assertEqual(len(got), len(pairs))
        for i, (p, negs) in enumerate(zip(pairs, got)):
            self.assertEqual(len(negs), negatives.GROUP - 1)
            self.assertEqual(len(set(negs)), len(negs), "a negative twice")
            for j in negs:
                self.assertNotEqual(pairs[j]["code"], p["code"], f"pair {i}: its own code")
                self.assertNotEqual(pairs[j]["query"], p["query"], f"pair {i}: a pair asking the same")
            same = sum(pairs[j]["package"] == p["package"] for j in negs)
            self.assertGreaterEqual(same, negatives.HARD, f"pair {i}: too few of its package")
            self.assertTrue(all(pairs[j]["lang"] == p["lang"] for j in negs), f"pair {i}: another language")

    def test_the_same_pairs_give_the_same_negatives(self):
        self.assertEqual(negatives.package_negatives(self.pairs()), negatives.package_negatives(self.pairs()))

    def test_a_small_package_is_filled_from_its_language(self):
        pairs = self.pairs() + [{"query": "lone", "code": "lone code", "package": "z", "lang": "go"}]
        negs = negatives.package_negatives(pairs)[-1]
        self.assertEqual(len(negs), negatives.GROUP - 1)
        self.assertTrue(all(pairs[j]["lang"] == "go" and pairs[j]["package"] == "c" for j in negs))
