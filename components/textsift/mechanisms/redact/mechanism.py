"""privatize@<setting> for ``kind: redact``: the spans to replace, then ``mechanisms.redact``.

``spans: detected`` reads the detector's spans over the corpus (train_detectors), ``gold`` the
corpus's own privacy spans, ``both`` their union. The common privatize stage adds leak metrics
and the quality checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textsift.corpus import Span
from textsift.detection.types import ENTITY_TYPES, canonical_type
from textsift.mechanisms.base import Documents, Mechanism, PrivatizeResult, Resources
from textsift.mechanisms.redact.operators import digest, operator_of, requested
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import pseudonym_of, redact
from textsift.rng import Key


class Redaction(Mechanism):
    """Redaction with pseudonyms (or placeholders) over gold, detected or both spans."""

    per_document = True  # a stand-in is keyed by (release key, document's draw name, original string)
    additive_metrics = ("spans_given", "regions_replaced")  # totals: a chunked run sums them

    def entity_types(self, setting: RedactSetting) -> list[str] | None:
        """Its ``labels`` (none named: every type): every detected span of those types is replaced."""
        return list(ENTITY_TYPES if setting.labels is None else setting.labels)

    def fills_from_corpus(self, setting: RedactSetting, params: Any) -> bool:
        """Never: stand-ins come from public Faker lists, so one equal to another document's name is chance."""
        return False

    def serving_refusal(self, setting: RedactSetting, params: Any) -> str | None:
        """Shipped as a model unless it redacts gold spans only (a request carries none, so it would change nothing;
        ``both`` is served as ``detected``: what ``textsift privatize`` does to a file without spans) or keeps one
        pseudonym per string across the corpus (``scope: corpus``): served, that mapping answers "which stand-in
        does this name get?" for anyone with a token, a re-identification oracle for every published document."""
        if setting.spans == "gold":
            return "it redacts gold spans only, and a request carries none"
        if setting.scope != "document":
            return ("one pseudonym per name across the corpus (scope: corpus): served, it would tell anyone with a "
                    "token which stand-in a name gets")
        return None

    def recomputed_names(self, setting: RedactSetting) -> Callable[[Key, str, str], str] | None:
        """A person's pseudonym or digest, keyed by (key, the document's draw name under ``scope: document``, the
        name); None for a placeholder or a mask, which no key changes."""
        operator = operator_of(setting, "PERSON")
        if operator not in ("pseudonym", "hash"):
            return None

        def stand_in(key: Key, draw: str, name: str) -> str:
            owner = draw if setting.scope == "document" else None
            return pseudonym_of("PERSON", key, owner, name) if operator == "pseudonym" else digest(key, owner, name)

        return stand_in

    def with_operators(self, setting: RedactSetting, operators: Mapping[str, str]) -> RedactSetting:
        """``setting`` with a request's operators, each revealing no more than the setting's own for its type
        (:func:`textsift.mechanisms.redact.operators.requested`)."""
        return requested(setting, operators)

    def privatize(self, docs: Documents, setting: RedactSetting, resources: Resources, key: Key, *,
                  vault: bool = False) -> PrivatizeResult:
        """Redacted texts in input order, the mechanism's counts and where each stand-in lies in them; per document
        id, ``(label, pseudonym, original)`` of every replaced region when ``vault`` (the pseudonym vault)."""
        entries: dict[str, list[tuple[str, str, str]]] | None = {} if vault else None
        placed: list[list[Span]] = []
        texts, metrics = redact(docs.texts, docs.ids, _spans(docs, setting, resources), setting, key, vault=entries,
                                owners=docs.draw_names, placed=placed)
        return PrivatizeResult(texts, metrics, vault={doc: found for doc, found in (entries or {}).items() if found},
                               replaced=placed)


def _spans(docs: Documents, setting: RedactSetting, resources: Resources) -> list[list[Span]]:
    keep = set(setting.labels) if setting.labels is not None else None
    gold = [[s for s in doc if keep is None or canonical_type(s.label) in keep] for doc in docs.gold]
    if setting.spans == "gold":
        spans = gold
    else:
        detected = resources.detected(docs, setting.labels)
        spans = detected if setting.spans == "detected" else [g + d for g, d in zip(gold, detected, strict=True)]
    return spans
