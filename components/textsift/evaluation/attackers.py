"""attack: what an adversary still recovers from each corpus's test split (METHODS.md §5).

Two attackers, loaded once and run on every corpus in turn (the original first, as the reference), and one count
that needs no model:
the privacy-entity detector of ``train_detectors`` (the share of gold spans it finds again,
``privacy.attacker.recall[.<LABEL>]``) and, when one was trained, the IPI interest model (METHODS.md
§4.2 as an attribute-inference attack: ``privacy.interest.*``, against the original's inference and,
where the corpus knows them, the true interests; :mod:`textsift.interests.attack`), and the cross-document name
disclosure of each whole published corpus (``privacy.cross_document.rate``: documents carrying another document's
name part, :func:`textsift.evaluation.privacy.cross_document_flags`), and the text re-identification risk (TRIR,
``privacy.trir.{rate,chance,gain}``: an attacker that knows the persons of the original train split from their
documents links each published test document to its person, :mod:`textsift.evaluation.reidentification`; the
original's figure is its ceiling). On a privatized corpus every rate gets a
percentile-bootstrap interval over documents (``..._ci_low/high``): the recommendation
judges each on its upper bound (:mod:`textsift.evaluation.recommend`). The interest model decodes in
``evaluate.inference_precision`` (bfloat16 on a CPU with native bf16: 1.6x faster, the same interest for 799 of
800 demo test texts).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from textsift.corpus import Span, spans_to_python
from textsift.detection.types import identifier_group
from textsift.device import Resolved, precision_autocast, resolve_device, resolve_precision
from textsift.evaluation.bootstrap import ratio_interval
from textsift.evaluation.params import BootstrapParams, InterestAttackParams
from textsift.evaluation.privacy import attacker_flags, attacker_recall, cross_document_flags, cross_document_rate
from textsift.evaluation.reidentification import (
    Reidentifier,
    chance_rate,
    document_persons,
    fit_reidentifier,
    gain_over_chance,
    reidentification_hits,
    trir_metrics,
)
from textsift.indexes.vocabulary import document_frequencies
from textsift.interests.attack import interest_accuracy, interest_leak, interest_leak_counts
from textsift.interests.inference import INTEREST_ONLY_TOKENS, InterestModel, generate, infer, parse
from textsift.interests.io import load_interest_model
from textsift.models.detector import detect
from textsift.models.detector_io import load_detector
from textsift.rng import generator
from textsift.stage_context import StageContext
from textsift.word_lists import stop_words

log = logging.getLogger("textsift")
PUBLIC_WORD_DOCS = 5  # a word used outside every span by this many documents is public (indexes' min_doc_freq)


def infer_interests(model: InterestModel, texts: list[str], attack: InterestAttackParams) -> list[str]:
    """The attacker's interest per text (:func:`textsift.interests.inference.infer`); with
    ``min_evidence_overlap`` 0 only the interest is decoded (2 tokens, not the evidence too)."""
    if attack.min_evidence_overlap <= 0:
        return [parse(g)[0] for g in generate(model, texts, INTEREST_ONLY_TOKENS)]
    return [interest for interest, _ in infer(model, texts, attack.min_evidence_overlap)]


def _prefixed(scores: dict[str, float]) -> dict[str, float]:
    return {f"privacy.{name}": value for name, value in scores.items()}


@dataclass
class Attackers:
    """The attackers and the original test split they are scored against; :meth:`original` runs first."""

    detector: Any
    interest_model: InterestModel | None
    attack: InterestAttackParams
    bootstrap: BootstrapParams
    seed: int
    originals: list[str]
    spans: list[list[Span]]
    truth: list[str | None]
    reidentifier: Reidentifier | None  # None when the train split names no person
    persons: list[frozenset[str]]  # who each original test document is about (its gold person names)
    original_interests: list[str] = field(default_factory=list)
    precision: Resolved = "float32"  # the interest model's decoding
    interest_seconds: float = 0.0
    corpora: int = 0
    decoded: dict[str, str] = field(default_factory=dict)  # text -> inferred interest, over every corpus
    not_names: frozenset[str] | None = None  # stop words and public words: never counted as a name part

    @classmethod
    def load(cls, ctx: StageContext, test: pd.DataFrame, train: pd.DataFrame) -> Attackers:
        """The project's detector and interest model (None when train_interests trained none), on ``test``, and the
        re-identification attacker fitted on the original ``train`` split (the outsider's background knowledge)."""
        device = resolve_device(ctx.params.device)
        folder = ctx.model("interests")
        spans = [spans_to_python(s) for s in test["spans"]]
        background = train["text"].tolist()
        about = [document_persons(text, spans_to_python(s)) for text, s in zip(background, train["spans"], strict=True)]
        return cls(detector=load_detector(ctx.model("detector"), device),
                   interest_model=None if folder is None else load_interest_model(folder, device),
                   attack=ctx.params.evaluate.interest_attack, bootstrap=ctx.params.evaluate.bootstrap,
                   seed=ctx.params.seed, originals=test["text"].tolist(), spans=spans,
                   truth=[None if pd.isna(t) else str(t) for t in test["interest"]],
                   reidentifier=fit_reidentifier(background, about),
                   persons=[document_persons(text, s) for text, s in zip(test["text"], spans, strict=True)],
                   precision=resolve_precision(ctx.params.evaluate.inference_precision, device))

    def original(self) -> dict[str, float]:
        """The attackers on the original test split: the reference every setting is compared with."""
        metrics = {**self._recall(self.originals), **self._reidentification(None, self.originals)}
        if self.interest_model is not None:
            self.original_interests = self._interests(self.originals)
            metrics.update(_prefixed(interest_accuracy(self.truth, self.original_interests)))
        return metrics

    def privatized(self, setting: str, texts: list[str]) -> dict[str, float]:
        """The attackers on one setting's privatized test split (aligned with the original's rows), with the
        bootstrap interval of the detector's recall and of the interest leak rate."""
        detected = detect(self.detector, texts)
        metrics = _prefixed(attacker_recall(self.originals, self.spans, texts, detected))
        flags = attacker_flags(self.originals, self.spans, texts, detected)
        metrics.update(self._interval("attacker.recall", setting, [sum(f for _, f in doc) for doc in flags],
                                      [len(doc) for doc in flags]))
        direct = [[f for label, f in doc if identifier_group(label) == "direct"] for doc in flags]
        if any(direct):  # the rule's attacker recall when it counts direct identifiers (recommend.leak_of)
            metrics.update(self._interval("attacker.recall.direct", setting, [sum(doc) for doc in direct],
                                          [len(doc) for doc in direct]))
        metrics.update(self._reidentification(setting, texts))
        if self.interest_model is not None:
            inferred = self._interests(texts)
            metrics.update(_prefixed({**interest_leak(self.original_interests, inferred),
                                      **interest_accuracy(self.truth, inferred)}))
            metrics.update(self._interval("interest.leak_rate", setting,
                                          *interest_leak_counts(self.original_interests, inferred)))
        return metrics

    def cross_document(self, setting: str, originals: list[str], spans: list[list[Span]], published: list[str]
                       ) -> dict[str, float]:
        """``privacy.cross_document.{rate,documents}`` of one setting's whole published corpus (every split: all
        of it is published), with its bootstrap interval; nothing when the corpus has no gold person name. A name
        part that is also a public word (used outside every span by ``PUBLIC_WORD_DOCS`` documents: "Green", "Price")
        names no one and is not counted, the rule of an index's output vocabulary and of the fill-in vocabulary."""
        if self.not_names is None:  # the same corpus for every setting: counted once
            public = {w for w, n in document_frequencies(originals, True, spans).items() if n >= PUBLIC_WORD_DOCS}
            self.not_names = frozenset(stop_words() | public)
        flags = cross_document_flags(originals, spans, published, self.not_names)
        metrics = _prefixed(cross_document_rate(flags))
        if flags:
            metrics.update(self._interval("cross_document.rate", setting, [int(f) for f in flags], [1] * len(flags)))
        return metrics

    def _reidentification(self, setting: str | None, texts: list[str]) -> dict[str, float]:
        """``privacy.trir.*`` of ``texts`` (aligned with the original test split); for a ``setting``, the bootstrap
        interval of the rate and, through the same chance, of the gain. Nothing when no test document is about a
        person of the background."""
        if self.reidentifier is None:
            return {}
        hits = reidentification_hits(self.reidentifier, texts, self.persons)
        chance = chance_rate(self.reidentifier, self.persons)
        metrics = _prefixed(trir_metrics(hits, chance))
        if setting is None or not hits:
            return metrics
        interval = self._interval("trir.rate", setting, [int(h) for h in hits], [1] * len(hits))
        gains = {f"privacy.trir.gain_ci_{side}": gain_over_chance(interval[f"privacy.trir.rate_ci_{side}"], chance)
                 for side in ("low", "high") if f"privacy.trir.rate_ci_{side}" in interval}
        return {**metrics, **interval, **{k: v for k, v in gains.items() if not np.isnan(v)}}

    def _interval(self, name: str, setting: str, numerators: list[int], denominators: list[int]) -> dict[str, float]:
        rng = generator(self.seed, "evaluate.bootstrap.attack", f"{setting}/{name}")
        low, high = ratio_interval(np.asarray(numerators), np.asarray(denominators), self.bootstrap.samples,
                                   self.bootstrap.level, rng)
        return {} if np.isnan(low) else {f"privacy.{name}_ci_low": low, f"privacy.{name}_ci_high": high}

    def summary(self, original: dict[str, float]) -> None:
        """Log what the interest attacker found on the original and how long it took over every corpus."""
        if self.interest_model is None:
            return
        log.info("attack: interest attacker on %d corpora (%d distinct texts decoded) in %.0fs; it finds one in "
                 "%.1f%% of original test documents; accuracy on known interests %s", self.corpora, len(self.decoded),
                 self.interest_seconds,
                 100 * sum(i != "none" for i in self.original_interests) / max(len(self.original_interests), 1),
                 f"{original.get('privacy.interest.accuracy', float('nan')):.3f}")

    def _recall(self, texts: list[str]) -> dict[str, float]:
        return _prefixed(attacker_recall(self.originals, self.spans, texts, detect(self.detector, texts)))

    def _interests(self, texts: list[str]) -> list[str]:
        """The attacker's interest per text; a text already decoded for another corpus (a document a setting left
        unchanged, the same privatized text in two settings) is not decoded again."""
        assert self.interest_model is not None
        started = time.perf_counter()
        new = [text for text in dict.fromkeys(texts) if text not in self.decoded]
        with precision_autocast(self.interest_model.device, self.precision):
            self.decoded.update(zip(new, infer_interests(self.interest_model, new, self.attack), strict=True))
        self.interest_seconds += time.perf_counter() - started
        self.corpora += 1
        return [self.decoded[text] for text in texts]
