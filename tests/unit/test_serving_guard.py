"""The served privatizer's per-token rate limit and audit log (textsift.serving.guard), and what is never served."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.conftest import tiny_params
from textsift.errors import ConfigError
from textsift.mechanisms.redact.mechanism import Redaction
from textsift.mechanisms.redact.params import RedactSetting
from textsift.serving.guard import AuditLog, RateLimit, token_digest
from textsift.serving.service import servable, serving_refusal


def tiny_params_model(**overrides: object):  # type: ignore[no-untyped-def]
    """The tests' tiny params, validated (:class:`textsift.config.Params`)."""
    from textsift.config import parse_params

    return parse_params(tiny_params(**overrides))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_token_gets_a_minute_of_records_then_waits_for_the_refill() -> None:
    clock = Clock()
    limit = RateLimit(60, clock)  # one record per second
    assert limit.take("a", 50) == 0.0 and limit.take("a", 10) == 0.0
    assert limit.take("a", 5) == pytest.approx(5.0)  # empty: five records in five seconds
    assert limit.take("b", 60) == 0.0  # another token has its own allowance
    clock.now = 5.0
    assert limit.take("a", 5) == 0.0 and limit.take("a", 1) == pytest.approx(1.0)
    assert limit.take("a", 61) == float("inf")  # more than a minute allows, ever
    assert RateLimit(0, clock).take("a", 10**9) == 0.0  # 0: no limit


def test_the_audit_log_holds_counts_and_a_token_digest_never_the_token(tmp_path: Path) -> None:
    path = tmp_path / "serve" / "audit.jsonl"
    log = AuditLog(path)
    log.record("secret-token-0123456789", 200, 3, 0.25)
    log.record(None, 401, 0, 0.0)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(x["token"], x["status"], x["records"]) for x in lines] == [
        (token_digest("secret-token-0123456789"), 200, 3), (None, 401, 0)]
    assert "secret-token" not in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o600
    AuditLog(None).record("t", 200, 1, 0.1)  # no file: nothing recorded, nothing fails


def test_a_corpus_wide_pseudonym_mapping_is_never_served() -> None:
    """Served, a corpus-scope mapping answers "which stand-in does this name get?" for every published document."""
    params = tiny_params_model()
    assert servable(Redaction(), RedactSetting(kind="redact"), params)
    assert not servable(Redaction(), RedactSetting(kind="redact", scope="corpus"), params)
    assert not servable(Redaction(), RedactSetting(kind="redact", spans="gold"), params)


def test_metric_dp_is_served_over_a_public_vocabulary_only_and_never_passes_unknown_words_through() -> None:
    """A corpus index's words and vectors would ship inside the model; a public one holds none of the corpus. Even
    then, ``oov_policy: keep`` would answer a rare surname outside the vocabulary as it was sent."""
    from textsift.mechanisms.metric_dp.mechanism import MetricDP
    from textsift.mechanisms.metric_dp.params import MetricDPSetting

    params = tiny_params_model(indexes__sources={"w2v": {"kind": "word2vec"},
                                                 "glove": {"kind": "glove", "vocabulary": "public"}})
    over = {name: MetricDPSetting(kind="metric_dp", index=name, epsilon=10) for name in ("w2v", "glove")}
    assert serving_refusal(MetricDP(), over["w2v"], params) == (
        "its index (w2v) holds words and vectors learnt from the corpus: a served model would publish them (an index "
        "with vocabulary: public can be served)")
    assert servable(MetricDP(), over["glove"], params)
    assert "unchanged" in (serving_refusal(MetricDP(), over["glove"].model_copy(update={"oov_policy": "keep"}),
                                           params) or "")
    # what /analyze lists and a request's "entities" may widen: the words it replaces by type, if any
    assert MetricDP().entity_types(over["glove"]) is None  # no detection: "entities" would change nothing
    guarded = over["glove"].model_copy(update={"replace_detected": True})
    assert MetricDP().entity_types(guarded) == ["PERSON", "EMAIL", "PHONE", "ID", "URL"]
    assert not MetricDP().fills_from_corpus(over["glove"], params) and MetricDP().fills_from_corpus(over["w2v"], params)
    with pytest.raises(ConfigError, match="indexes.sources.w2v: .*vocabulary: public needs published vectors"):
        tiny_params_model(indexes__sources={"w2v": {"kind": "word2vec", "vocabulary": "public"}})
