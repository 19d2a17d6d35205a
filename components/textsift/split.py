"""Seeded, stratified train/validation/test split.

Within each label, documents are ordered by a keyed hash of (seed, doc id) and cut at the
configured fractions, so a document's split depends only on the seed, its id, its label and
its class size — not on input order. When the input names its own split (``split_field``),
its test documents stay test and validation is carved from its train documents.
"""

from __future__ import annotations

from collections import defaultdict

from textsift.ingest_params import SplitParams
from textsift.rng import stable_key

_STAGE = "split"
SPLITS = ("train", "validation", "test")


def _cut(ids: list[str], fractions: dict[str, float], seed: int) -> dict[str, str]:
    ordered = sorted(ids, key=lambda d: (stable_key(seed, _STAGE, d), d))
    out: dict[str, str] = {}
    start = 0
    names = list(fractions)
    for i, name in enumerate(names):
        count = len(ordered) - start if i == len(names) - 1 else round(fractions[name] * len(ordered))
        for doc_id in ordered[start : start + count]:
            out[doc_id] = name
        start += count
    return out


def assign_splits(
    doc_ids: list[str], labels: list[str], params: SplitParams, seed: int,
    given: list[str | None] | None = None,
) -> list[str]:
    """The split of each document, in input order."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, (doc_id, label) in enumerate(zip(doc_ids, labels, strict=True)):
        given_split = (given[i] or "").lower() if given else ""
        pool = "test" if given_split == "test" else ("train" if given_split else "all")
        groups[(pool, label)].append(doc_id)
    result: dict[str, str] = {}
    for (pool, _label), ids in groups.items():
        if pool == "test":
            result.update(dict.fromkeys(ids, "test"))
        elif pool == "train":
            val = params.validation / (1 - params.test)
            result.update(_cut(ids, {"validation": val, "train": 1 - val}, seed))
        else:
            fractions = {"test": params.test, "validation": params.validation}
            fractions["train"] = 1 - params.test - params.validation
            result.update(_cut(ids, fractions, seed))
    return [result[d] for d in doc_ids]
