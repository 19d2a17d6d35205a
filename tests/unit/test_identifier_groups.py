"""Direct and quasi-identifiers (issue 33, part 3): settings protect the direct ones by default, name groups in
``labels``, leaks are counted per group, the rule's leak ceiling counts the group it is told to, and a hybrid
setting gives direct identifiers stand-ins while metric-DP perturbs every other word."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from textsift import rng
from textsift.corpus import Span
from textsift.detection.types import DIRECT_IDENTIFIERS, QUASI_IDENTIFIERS, identifier_group
from textsift.evaluation.frontier import frontier_rows
from textsift.evaluation.leaks import leak_table
from textsift.evaluation.privacy import leak_counts, leak_rates
from textsift.indexes.exact_index import ExactSearcher
from textsift.mechanisms.base import Documents
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder
from textsift.mechanisms.metric_dp.mechanism import perturbed_counts, with_stand_ins
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import redact_text

TEXT = "Ann Lee of Acme met Bob in Paris. Ann Lee wrote to ann@lee.org on 3 May 1990."
SPANS = [Span(TEXT.index(value), TEXT.index(value) + len(value), label) for value, label in (
    ("Ann Lee", "PERSON"), ("Acme", "COMPANY"), ("Bob", "PERSON"), ("Paris", "CITY"), ("ann@lee.org", "EMAIL"),
    ("3 May 1990", "DATE"))]


def test_detector_driven_settings_protect_the_direct_identifiers_unless_told() -> None:
    for setting in (RedactSetting(kind="redact"), DataSifterSetting(kind="datasifter"),
                    MetricDPSetting(kind="metric_dp", index="w2v", epsilon=10)):
        assert setting.labels == list(DIRECT_IDENTIFIERS)
    assert RedactSetting(kind="redact", labels=["direct", "LOC"]).labels == [*DIRECT_IDENTIFIERS, "LOC"]
    assert RedactSetting(kind="redact", labels=["quasi", "DATE"]).labels == list(QUASI_IDENTIFIERS)
    assert "ORG" in RedactSetting(kind="redact", labels=["all"]).labels
    with pytest.raises(ValidationError):
        RedactSetting(kind="redact", labels=["direkt"])


def test_identifier_groups_read_other_tools_names() -> None:
    assert [identifier_group(label) for label in ("PERSON", "CITY", "COMPANY", "EMAIL", "SCHOOL", "OTHER")] == [
        "direct", "quasi", "quasi", "direct", "quasi", None]


def test_leaks_are_counted_per_identifier_group() -> None:
    names_gone = TEXT.replace("Ann Lee", "Eve Ray").replace("Bob", "Tim").replace("ann@lee.org", "x@y.org")
    rates = leak_rates([TEXT], [SPANS], [names_gone])
    assert rates["leak.rate.direct"] == 0.0
    assert rates["leak.rate.quasi"] == 1.0
    assert rates["leak.rate"] == pytest.approx(3 / 6)
    table = leak_table({"names": leak_counts([TEXT], [SPANS], [names_gone])}, samples=50, level=0.9, seed=1)
    by_row = table.set_index("label")
    assert (by_row.loc["direct", "spans"], by_row.loc["direct", "leaked"]) == (3, 0)
    assert (by_row.loc["quasi", "spans"], by_row.loc["quasi", "leaked"]) == (3, 3)


def test_the_rules_leak_rate_counts_the_group_it_is_told_to() -> None:
    utility = pd.DataFrame([{"setting": s, "classifier": "c", "test_on": t, "accuracy": 0.9}
                            for s, t in (("original", "original"), ("names", "privatized"))])
    privacy = {"names": {"privacy.leak.rate": 0.5, "privacy.leak.rate.direct": 0.0, "privacy.leak.rate.quasi": 1.0,
                         "privacy.token_change_fraction": 0.2}}
    direct = frontier_rows(utility, privacy, {"names": "redact"}, "c.privatized.accuracy", leak_of="direct")
    every = frontier_rows(utility, privacy, {"names": "redact"}, "c.privatized.accuracy", leak_of="all")
    assert direct.set_index("setting").loc["names", "leak_rate"] == 0.0
    assert every.set_index("setting").loc["names", "leak_rate"] == 0.5
    assert direct.set_index("setting").loc["names", "quasi_leak"] == 1.0


def test_the_attackers_recall_is_counted_per_group_too() -> None:
    from textsift.evaluation.privacy import attacker_recall

    found = [[s for s in SPANS if identifier_group(s.label) == "quasi"]]  # the detector finds the quasi ones again
    recall = attacker_recall([TEXT], [SPANS], [TEXT], found)
    assert (recall["attacker.recall.direct"], recall["attacker.recall.quasi"]) == (0.0, 1.0)


WORDS = ["met", "in", "wrote", "to", "on", "may", "of", "acme", "paris", "bob", "ann", "lee"]


def _privatizer(epsilon: float) -> MetricDPPrivatizer:
    vectors = (3 * rng.generator(5, "test", "hybrid").standard_normal((len(WORDS), 8))).astype(np.float32)
    return MetricDPPrivatizer(StaticEmbedder(WORDS, vectors, True), ExactSearcher(vectors, "cpu"), WORDS,
                              epsilon=epsilon, beta=0.7, oov_policy="keep")


def test_a_hybrid_gives_direct_identifiers_stand_ins_and_perturbs_only_the_rest() -> None:
    docs = Documents([TEXT], ["d1"], [[]])
    direct = [s for s in SPANS if identifier_group(s.label) == "direct"]
    regions = [outermost(consistent_spans(TEXT, direct))]
    setting = MetricDPSetting(kind="metric_dp", index="w2v", epsilon=50, stand_ins=["direct"])
    texts, frozen = with_stand_ins(docs, regions, setting, 42, redact_text)
    out = texts[0]
    for name in ("Ann", "Lee", "Bob", "ann@lee.org"):
        assert name not in out
    outside = []  # the text between stand-ins, which must be the input's
    cursor_in, cursor_out = 0, 0
    for region, (start, end) in zip(regions[0], frozen[0], strict=True):
        outside.append((TEXT[cursor_in:region.start], out[cursor_out:start]))
        cursor_in, cursor_out = region.end, end
    outside.append((TEXT[cursor_in:], out[cursor_out:]))
    assert all(a == b for a, b in outside)
    # at a huge epsilon metric-DP returns every word (lower-cased), so only words outside the stand-ins change case
    result = privatize_shard(_privatizer(1e7), texts, ["d1"], key=3, frozen=frozen).texts[0]
    for start, end in frozen[0]:
        assert out[start:end] in result
    assert "paris" in result and "Paris" not in result
    # epsilon is spent on the words outside the stand-ins only
    everything = perturbed_counts(_privatizer(1.0), [TEXT])[0]
    hybrid = perturbed_counts(_privatizer(1.0), [TEXT], regions)[0]
    assert everything - hybrid == 5  # "Ann" and "Lee" twice, "Bob" (the e-mail is one word the index lacks)
    # the ledger the privatizing run itself counts (on the text with stand-ins) is the same count
    shard = privatize_shard(_privatizer(1.0), texts, ["d1"], key=3, frozen=frozen)
    assert shard.perturbed == [hybrid]
    assert privatize_shard(_privatizer(1.0), [TEXT], ["d1"], key=3).perturbed == [everything]


def test_a_labels_list_holding_a_list_is_a_validation_error_not_a_crash() -> None:
    """Found by ``make fuzz``: ``stand_ins: [[]]`` raised TypeError (unhashable) instead of a ConfigError."""
    import pydantic

    from textsift.detection.params import ProtectedLabels

    with pytest.raises(pydantic.ValidationError):
        pydantic.TypeAdapter(ProtectedLabels).validate_python([[]])
    assert pydantic.TypeAdapter(ProtectedLabels).validate_python(["direct", "PERSON", "LOC"])[-1] == "LOC"
