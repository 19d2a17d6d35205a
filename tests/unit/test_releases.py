"""Two releases never share noise (textsift.releases): per-setting keys, per-content draw names, composed ledgers."""

from __future__ import annotations

import numpy as np
import pytest

from textsift.budgets.allocation import laplace_noise
from textsift.evaluation.ledger import composed_epsilon
from textsift.mechanisms.base import Documents
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.redact.mechanism import Redaction
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import redact
from textsift.releases import SERVED, draw_name, fresh_draw_name, release_key, setting_digest
from textsift.secret_key import SecretKey

SECRET = SecretKey(bytes(range(32)))
EPS10 = MetricDPSetting(kind="metric_dp", index="w2v", epsilon=10)
EPS50 = MetricDPSetting(kind="metric_dp", index="w2v", epsilon=50)


def test_each_setting_name_parameters_and_scope_has_its_own_key() -> None:
    keys = [release_key(SECRET, "metric_dp", "a", EPS10), release_key(SECRET, "metric_dp", "b", EPS10),
            release_key(SECRET, "metric_dp", "a", EPS50), release_key(SECRET, "metric_dp", "a", EPS10, scope=SERVED),
            release_key(SecretKey(bytes(range(1, 33))), "metric_dp", "a", EPS10)]
    assert len({k.material for k in keys}) == len(keys)
    assert release_key(SECRET, "metric_dp", "a", EPS10).material == keys[0].material  # its holder reproduces it


class _Index:
    """Resources holding one index whose manifest names its β."""

    def __init__(self, beta: float) -> None:
        self.manifest = {"source": "w2v", "beta": beta, "items_sha256": "same vocabulary"}

    def index(self, name: str) -> _Index:
        return self


def test_a_metric_dp_release_over_a_rebuilt_index_draws_afresh() -> None:
    """Noise magnitudes are Gamma(m, (1 + β)/ε): under one key, another β rescales every draw by exactly the same
    factor (two releases, one draw). The index's manifest is part of the release key, so they are independent."""
    from textsift import rng
    from textsift.mechanisms.metric_dp.mechanism import MetricDP

    def magnitudes(beta: float, bound: bool = True) -> np.ndarray:
        context = MetricDP().release_context(EPS10, _Index(beta)) if bound else None  # type: ignore[arg-type]
        key = release_key(SECRET, "metric_dp", "a", EPS10, context=context)
        return rng.generator(key, "privatize.noise", "doc").gamma(8, (1 + beta) / 10, size=200)

    assert np.allclose(magnitudes(0.8, bound=False) / magnitudes(0.7, bound=False), 1.8 / 1.7)  # keyed by setting
    ratio = magnitudes(0.8) / magnitudes(0.7)
    assert ratio.std() > 0.2  # independent draws
    assert Redaction().release_context(RedactSetting(kind="redact"), None) == {}  # type: ignore[arg-type]
    assert release_key(SECRET, "redact", "r", EPS10, context={}).material == release_key(
        SECRET, "redact", "r", EPS10).material  # nothing to bind: existing keys unchanged


def test_another_text_under_the_same_id_draws_afresh_and_served_names_are_never_repeated() -> None:
    docs = Documents(["Ann called.", "Ann called!"], ["row-1", "row-2"], [[], []])
    assert docs.draw_names == [draw_name("row-1", "Ann called."), draw_name("row-2", "Ann called!")]
    assert draw_name("row-1", "Ann called.") != draw_name("row-1", "Bob called.")
    assert len({fresh_draw_name() for _ in range(1000)}) == 1000
    with pytest.raises(ValueError, match="draw names"):
        Documents(["a"], ["1"], [[]], ["x", "y"])


def test_two_files_with_the_same_row_ids_share_no_embedding_noise() -> None:
    """The difference of two published rows under one id must not be the difference of their clean embeddings
    (with noise keyed by id alone it was, to 1e-7)."""
    generator = np.random.default_rng(0)
    first, second = generator.normal(size=(50, 16)), generator.normal(size=(50, 16))
    ids = [f"row-{i}" for i in range(50)]
    scale_args = (np.ones(16), np.full(16, 2.0))  # sensitivity 1, ε_d 2: Lap(0.5)
    noisy_first, noisy_second = (laplace_noise(x, ids, *scale_args, SECRET) for x in (first, second))
    residual = (noisy_first - noisy_second) - (first - second)
    assert np.abs(residual).mean() == pytest.approx(0.75, rel=0.1)  # E|L1 - L2| for independent Lap(0.5): 0.75
    again = laplace_noise(first, ids, *scale_args, SECRET)
    np.testing.assert_array_equal(again, noisy_first)  # the same rows under the same key: the same release


def test_the_same_name_in_two_probe_texts_under_a_published_id_gets_other_stand_ins() -> None:
    """The oracle: a probe "My name is X." under a published document's id must not get that document's stand-in."""
    from textsift.corpus import Span

    setting = RedactSetting(kind="redact")
    published_text, probe = "Ann Lee met us.", "My name is Ann Lee."
    key = release_key(SECRET, "redact", "red", setting)
    published = Documents([published_text], ["doc-7"], [[Span(0, 7, "PERSON")]])
    probed = Documents([probe], ["doc-7"], [[Span(11, 18, "PERSON")]])
    stand_in = redact(published.texts, published.ids, published.gold, setting, key, owners=published.draw_names)[0]
    answer = redact(probed.texts, probed.ids, probed.gold, setting, key, owners=probed.draw_names)[0]
    assert answer[0].removeprefix("My name is ").removesuffix(".") not in stand_in[0]
    # keyed by the id alone (the vulnerable design), the probe's answer names the published stand-in
    published_by_id = redact(published.texts, published.ids, published.gold, setting, key)[0]
    by_id = redact(probed.texts, probed.ids, probed.gold, setting, key)[0]
    assert by_id[0].removeprefix("My name is ").removesuffix(".") in published_by_id[0]


def test_the_composed_ledger_adds_every_dp_release_of_a_document() -> None:
    text_settings = [[10.0, 30.0, 0.0], [None, None, None], [5.0, 5.0, 50.0]]  # metric-DP, redaction, metric-DP
    np.testing.assert_allclose(composed_epsilon(text_settings, [100.0, 300.0]), [415.0, 435.0, 450.0])
    with pytest.raises(ValueError, match="different lengths"):
        composed_epsilon([[1.0], [1.0, 2.0]], [])


class _NamesDetected:
    """Resources whose detector finds the PERSON names it is told about (a test's stand-in for the project's)."""

    params, device = None, "cpu"

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def detected(self, docs: Documents, labels: object) -> list[list[object]]:
        from textsift.corpus import Span

        return [[Span(t.index(n), t.index(n) + len(n), "PERSON") for n in self.names if n in t] for t in docs.texts]


def test_the_oracle_figure_confirms_names_only_through_a_service_that_repeats_published_draws(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from textsift.corpus import Span
    from textsift.mechanisms.redact.mechanism import Redaction
    from textsift.privatization import attacks as privatize_attacks
    from textsift.serving.service import served_privatize

    names = ["Ann Lee", "Bo Chan", "Cy Diaz", "Di Eno"]
    texts = [f"{n} called about the bill." for n in names]
    setting = RedactSetting(kind="redact")
    docs = Documents(texts, [f"d{i}" for i in range(4)], [[Span(0, len(n), "PERSON")] for n in names])
    resources = _NamesDetected(names)
    published = Redaction().privatize(docs, setting, resources, release_key(SECRET, "redact", "red", setting)).texts
    test = np.ones(4, dtype=bool)
    figures = privatize_attacks.oracle_metrics(docs, published, test, "red", setting, resources, SECRET)
    assert figures["attack.oracle.probes"] == 16 and figures["attack.oracle.confirmed"] == 0.0

    def repeating(implementation, setting_, resources_, key, texts_, ids, names=None):  # keyed like the published
        probe = Documents(list(texts_), list(ids), [[] for _ in texts_], list(ids))  # corpus
        published_key = release_key(SECRET, "redact", "red", setting_)
        return implementation.privatize(probe, setting_, resources_, published_key)

    monkeypatch.setattr(privatize_attacks, "served_privatize", repeating)  # the design before releases:
    by_id = Documents(docs.texts, docs.ids, docs.gold, docs.ids)  # draws keyed by the id alone, published and served
    published = Redaction().privatize(by_id, setting, resources, release_key(SECRET, "redact", "red", setting)).texts
    leaky = privatize_attacks.oracle_metrics(docs, published, test, "red", setting, resources, SECRET)
    assert leaky["attack.oracle.confirmed"] == 1.0 and leaky["attack.oracle.false"] == 0.0
    assert served_privatize is not repeating


def test_a_parameter_added_later_re_keys_no_release_until_it_is_used() -> None:
    """``operators`` joined redaction's parameters after releases existed: a setting without them keeps the key (and
    so the pseudonyms) it had, one that uses them is another release."""
    import hashlib
    import json

    plain = RedactSetting(kind="redact", labels=["PERSON"])
    before = {k: v for k, v in plain.model_dump(mode="json").items() if k != "operators"}  # the schema before
    digest = hashlib.blake2b(json.dumps(before, sort_keys=True).encode(), digest_size=8).hexdigest()
    assert setting_digest(plain) == digest
    tagged = RedactSetting(kind="redact", labels=["PERSON"], operators={"PERSON": "placeholder"})
    assert setting_digest(tagged) != digest
    assert release_key(SECRET, "redact", "r", tagged).material != release_key(SECRET, "redact", "r", plain).material


def test_the_stage_measures_the_service_under_fixed_draws_while_the_service_draws_afresh(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Served figures (oracle, served leak) were drawn fresh on every run, so a key holder's `dvc repro` rewrote a
    served metric-DP setting's metrics with other numbers each time; the service itself must keep drawing afresh."""
    from textsift.corpus import Span
    from textsift.privatization import attacks as privatize_attacks
    from textsift.serving.service import served_privatize

    names = ["Ann Lee", "Bo Chan", "Cy Diaz", "Di Eno"]
    texts = [f"{n} called about the bill." for n in names]
    setting = RedactSetting(kind="redact")
    resources = _NamesDetected(names)
    docs = Documents(texts, [f"d{i}" for i in range(4)], [[Span(0, len(n), "PERSON")] for n in names])
    served = release_key(SECRET, "redact", "red", setting, scope=SERVED)
    fresh = [served_privatize(Redaction(), setting, resources, served, texts, docs.ids).texts for _ in range(2)]
    assert fresh[0] != fresh[1]  # a new pseudonym for every request
    fixed = [served_privatize(Redaction(), setting, resources, served, texts, docs.ids, ["m0", "m1", "m2", "m3"]).texts
             for _ in range(2)]
    assert fixed[0] == fixed[1]
    seen: list[list[str] | None] = []

    def recording(implementation, setting_, resources_, key, texts_, ids, names=None):
        seen.append(None if names is None else list(names))
        return served_privatize(implementation, setting_, resources_, key, texts_, ids, names)

    monkeypatch.setattr(privatize_attacks, "served_privatize", recording)
    test = np.ones(4, dtype=bool)
    published = Redaction().privatize(docs, setting, resources, release_key(SECRET, "redact", "red", setting)).texts
    runs = [(privatize_attacks.oracle_metrics(docs, published, test, "red", setting, resources, SECRET),
             privatize_attacks.served_leak_metrics(docs, test, "red", setting, resources, SECRET)) for _ in range(2)]
    assert runs[0] == runs[1] and len(seen) == 4 and seen[0] == seen[2] and seen[1] == seen[3]
    assert all(drawn is not None and len(set(drawn)) == len(drawn) for drawn in seen)
    assert not set(seen[0]) & set(seen[1])  # the two measurements draw apart
