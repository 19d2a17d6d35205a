"""Batched metric-DP privatizer: identity at large ε, monotone in ε, batch/shard/worker
independence, OOV policies, casing and readable output (METHODS.md §2)."""

from __future__ import annotations

import math
import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from textsift import rng
from textsift.errors import ConfigError
from textsift.evaluation.outsider import replay_agreement
from textsift.indexes.annoy_index import AnnoySearcher, build_annoy
from textsift.indexes.exact_index import ExactSearcher
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, ShardResult, privatize_shard
from textsift.secret_key import SecretKey

WORDS = [f"word{i}" for i in range(80)]
SECRET = "Zebulon"


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return (3 * rng.generator(2, "test", "vocab").standard_normal((len(WORDS), 12))).astype(np.float32)


@pytest.fixture(scope="module")
def annoy_path(tmp_path_factory: pytest.TempPathFactory, vectors: np.ndarray) -> Path:
    path = tmp_path_factory.mktemp("annoy") / "index.ann"
    build_annoy(vectors, 20, 1, path)
    return path


@pytest.fixture(scope="module")
def docs() -> tuple[list[str], list[str]]:
    generator = rng.generator(2, "test", "docs")
    texts = []
    for i in range(120):
        words = [WORDS[j] for j in generator.integers(0, len(WORDS), 12)]
        words[0] = words[0].capitalize()
        texts.append(f'{" ".join(words[:5])}, "{words[5]}" {SECRET} {" ".join(words[6:])}! ({i})')
    return texts, [f"d{i}" for i in range(len(texts))]


def make(vectors: np.ndarray, annoy_path: Path, epsilon: float, **kwargs: object) -> MetricDPPrivatizer:
    lowercase = bool(kwargs.pop("lowercase", True))
    searcher = kwargs.pop("searcher", None) or AnnoySearcher(annoy_path, vectors.shape[1], search_k=2000)
    return MetricDPPrivatizer(StaticEmbedder(WORDS, vectors, lowercase), searcher, WORDS, epsilon=epsilon, beta=0.7,
                              **kwargs)


def test_huge_epsilon_is_the_identity_on_known_words(vectors, annoy_path, docs) -> None:
    out = privatize_shard(make(vectors, annoy_path, 1e7, oov_policy="keep"), *docs, key=1)
    assert out.texts == [t.replace(t.split()[0], t.split()[0].lower(), 1) for t in docs[0]]
    assert out.changed == 0 and out.oov == 2 * len(docs[0]) and out.tokens == 14 * len(docs[0])


def test_smaller_epsilon_changes_more_tokens(vectors, annoy_path, docs) -> None:
    changed = [privatize_shard(make(vectors, annoy_path, eps, oov_policy="keep"), *docs, key=1).changed
               for eps in (0.3, 1, 2, 3, 5, 1e6)]
    assert changed == sorted(changed, reverse=True) and changed[0] > 2 * changed[3] > changed[-1] == 0


def test_output_does_not_depend_on_batch_size_shards_or_workers(vectors, annoy_path, docs) -> None:
    texts, ids = docs
    whole = privatize_shard(make(vectors, annoy_path, 3.0, batch_size=64), texts, ids, key=5)
    assert privatize_shard(make(vectors, annoy_path, 3.0, batch_size=1), texts, ids, key=5) == whole
    shards = [privatize_shard(make(vectors, annoy_path, 3.0), texts[a:b], ids[a:b], key=5)
              for a, b in ((0, 37), (37, len(texts)))]
    assert ShardResult.merge(shards) == whole
    p = make(vectors, annoy_path, 3.0)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        parts = list(pool.map(privatize_shard, [p, p], [texts[:60], texts[60:]], [ids[:60], ids[60:]], [5, 5]))
    assert ShardResult.merge(parts) == whole
    assert privatize_shard(p, texts, ids, key=6).texts != whole.texts


def test_exact_search_gives_the_same_words_as_annoy_at_high_search_k(vectors, annoy_path, docs) -> None:
    annoy = privatize_shard(make(vectors, annoy_path, 3.0), *docs, key=2).texts
    exact = privatize_shard(make(vectors, annoy_path, 3.0, searcher=ExactSearcher(vectors)), *docs, key=2).texts
    assert np.mean([a == b for a, b in zip(annoy, exact, strict=True)]) > 0.9


@pytest.mark.parametrize(("policy", "expected"), [("keep", SECRET), ("mask", "[OOV]"), ("drop", None)])
def test_oov_policies(vectors, annoy_path, docs, policy: str, expected: str | None) -> None:
    out = privatize_shard(make(vectors, annoy_path, 1e7, oov_policy=policy), *docs, key=1)
    assert out.oov == 2 * len(docs[0])
    first = out.texts[0]
    if expected is None:  # the unknown words go, and only they: every other byte is the input's
        assert first == docs[0][0].replace(SECRET, "").replace("(0)", "()").lower()  # known words come back lower
    else:
        assert f'" {expected} ' in first
    assert out.changed == (0 if policy == "keep" else out.oov)


def test_cased_lookup_treats_capitalized_words_as_unknown(vectors, annoy_path, docs) -> None:
    cased = privatize_shard(make(vectors, annoy_path, 1e7, lowercase=False, oov_policy="keep"), *docs, key=1)
    assert cased.oov == 3 * len(docs[0]) and cased.texts == docs[0]


def test_output_stays_readable_text(vectors, annoy_path, docs) -> None:
    out = privatize_shard(make(vectors, annoy_path, 1.0), *docs, key=3).texts
    for before, after in zip(docs[0], out, strict=True):
        assert after.count(",") == before.count(",") and after.count('"') == 2 and after.endswith(")")
        assert all(w in WORDS or w.strip('",!()') in [*WORDS, "[OOV]", ""] for w in after.split())


def test_a_fully_dropped_document_becomes_the_placeholder(vectors, annoy_path) -> None:
    out = privatize_shard(make(vectors, annoy_path, 1.0, oov_policy="drop"), [f"{SECRET} Quartermaine"], ["x"], 1)
    assert out.texts == ["[OOV]"] and out.oov == 2


@pytest.mark.parametrize(("kwargs", "match"), [({"epsilon": 0.0}, "epsilon"), ({"beta": 1.0}, "beta"),
                                               ({"oov_policy": "hide"}, "oov_policy")])
def test_invalid_settings_are_config_errors(vectors, annoy_path, kwargs: dict, match: str) -> None:
    base = {"epsilon": 1.0, "beta": 0.7}
    with pytest.raises(ConfigError, match=match):
        MetricDPPrivatizer(StaticEmbedder(WORDS, vectors, True), ExactSearcher(vectors), WORDS, **{**base, **kwargs})


def test_protected_words_are_never_emitted_unchanged(vectors, annoy_path, docs) -> None:
    texts, ids = docs
    guarded = [frozenset({"word3", SECRET.casefold()})] * len(texts)
    p = make(vectors, annoy_path, 1e7, oov_policy="keep")  # at this ε every known word maps to itself
    plain = privatize_shard(p, texts, ids, key=1)
    out = privatize_shard(p, texts, ids, key=1, protected=guarded)
    kept = re.compile(rf"\b(word3|{SECRET})\b", re.IGNORECASE)
    assert all(kept.search(t) for t in plain.texts)  # the identity, and the secret kept as OOV
    assert not any(kept.search(t) for t in out.texts)
    assert out.changed > plain.changed and out.tokens == plain.tokens


@pytest.mark.parametrize("public", [True, False], ids=["public seed", "secret key"])
def test_noise_replay_reproduces_released_words_only_under_the_public_seed(vectors, annoy_path, docs,
                                                                           public: bool) -> None:
    """The outsider re-runs the privatizer on the originals with the public seed (issue 20's attack (b))."""
    texts, ids = docs
    p = make(vectors, annoy_path, 3.0)
    published = privatize_shard(p, texts, ids, key=1234 if public else SecretKey(bytes(range(32))))
    replay = privatize_shard(p, texts, ids, key=1234).texts
    baseline = privatize_shard(p, texts, ids, key=SecretKey(bytes(range(32, 64)))).texts  # no information
    agreement = replay_agreement(texts, published.texts, replay)
    chance = replay_agreement(texts, published.texts, baseline)
    if public:
        assert agreement == 1.0 and chance < 0.8  # every released word regenerated, far beyond chance
    else:
        n = published.changed
        assert n > 300 and abs(agreement - chance) <= 3 * math.sqrt(2 * chance * (1 - chance) / n) + 1 / n


def test_the_ledger_counts_perturbed_words_and_a_budget_rejects_documents_by_id(vectors, annoy_path, docs) -> None:
    from textsift.evaluation.ledger import NOT_DP, ledger_metrics, ledger_table
    from textsift.mechanisms.base import Documents
    from textsift.mechanisms.metric_dp.mechanism import check_budget, perturbed_counts
    from textsift.mechanisms.metric_dp.params import MetricDPSetting

    texts, ids = docs
    p = make(vectors, annoy_path, 2.0)
    counts = perturbed_counts(p, texts)
    assert counts == [12] * len(texts)  # 12 vocabulary words each; the name and the number are OOV: no noise
    assert privatize_shard(p, texts, ids, key=1).tokens - privatize_shard(p, texts, ids, key=1).oov == sum(counts)
    setting = MetricDPSetting(kind="metric_dp", index="w", epsilon=2.0, max_epsilon_per_document=24.0)
    check_budget(Documents(texts, ids, [[]] * len(texts)), counts, setting)  # 12 words x 2 = 24: within
    tight = setting.model_copy(update={"max_epsilon_per_document": 23.0})
    short = texts[:3] + ["word1 word2"]
    with pytest.raises(ConfigError, match=r"3 documents would spend more than max_epsilon_per_document=23.*d0, d1, d2"):
        check_budget(Documents(short, ["d0", "d1", "d2", "d3"], [[]] * 4), perturbed_counts(p, short), tight)
    table = ledger_table(ids[:2], [24.0, 4.0], "metric-DP")
    assert table.column("epsilon").to_pylist() == [24.0, 4.0]
    assert ledger_table(ids[:2], None, "x").column("guarantee").to_pylist() == [NOT_DP, NOT_DP]
    assert ledger_metrics([24.0, 4.0])["ledger.epsilon_max"] == 24.0 and ledger_metrics(None) == {"ledger.dp": 0.0}
