"""Each training pair's negatives, apart from torch so that the project's
tests (system Python) can check them: other pairs' codes like its answer
(the base model's nearest, mined on a GPU; or its package's, the CPU's
choice, since mining with MiniLM costs two cores most of an hour), the rest
at random in its language."""
import random

SEED = 7
GROUP = 8  # a question's positive and its negatives, scored together
HARD = 5  # of the negatives, those like the answer; the rest at random


class Groups:
    """The pairs that share a code, a question, a package or a language."""

    def __init__(self, pairs):
        self.pairs = pairs
        self.same_code, self.same_query, self.by_package, self.by_lang = {}, {}, {}, {}
        for i, p in enumerate(pairs):
            self.same_code.setdefault(p["code"], set()).add(i)
            self.same_query.setdefault(p["query"], set()).add(i)
            self.by_package.setdefault(p["package"], []).append(i)
            self.by_lang.setdefault(p["lang"], []).append(i)

    def negatives_of(self, i, like, rng, nearest=None):
        """GROUP - 1 other pairs' codes for pair `i`: HARD at random among
        the first `nearest` (or all) of `like` (pairs like its answer), the
        rest at random in its language; never its own code, a copy of it, or
        a pair asking the same."""
        p = self.pairs[i]
        banned = self.same_code[p["code"]] | self.same_query[p["query"]]
        hard = [j for j in like if j not in banned][:nearest]
        chosen = rng.sample(hard, min(HARD, len(hard)))
        lang = self.by_lang[p["lang"]]
        pool = lang if len(lang) > GROUP * 2 else range(len(self.pairs))
        while len(chosen) < GROUP - 1:
            j = rng.choice(pool)
            if j not in banned and j not in chosen:
                chosen.append(j)
        return chosen


def package_negatives(pairs):
    """For each pair, HARD negatives from its package, as a search within one
    repository offers them, the rest at random in its language."""
    groups, rng = Groups(pairs), random.Random(SEED)
    return [groups.negatives_of(i, groups.by_package[p["package"]], rng) for i, p in enumerate(pairs)]
