"""One way to call a privacy mechanism: what it is given, what it may load, what it returns.

Every mechanism (DataSifterText §1, metric-DP §2, redaction) is called the same way by the
privatize stage and by ``textsift privatize``: :meth:`Mechanism.privatize` takes the documents,
the setting, a :class:`Resources` that loads what the setting needs on demand (the artifacts
``setting.needs()`` names in :mod:`textsift.catalog`) and the release key its draws derive from
(:func:`textsift.releases.release_key`; per document, ``Documents.draw_names``), and
returns the privatized texts in input order with the mechanism's aggregate metrics (numbers,
never text). The mechanisms are listed by kind in ``textsift.mechanisms.registry.MECHANISMS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from textsift.corpus import Span
from textsift.releases import draw_name


@dataclass(frozen=True)
class Documents:
    """The texts to privatize, their ids, their gold spans (empty when unknown) and the names their draws are keyed by.

    ``draw_names`` defaults to each document's id and text digest (:func:`textsift.releases.draw_name`): another text
    under the same id never shares a draw. A served request passes fresh names instead (the client chooses none).
    """

    texts: list[str]
    ids: list[str]
    gold: list[list[Span]]
    draw_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not len(self.texts) == len(self.ids) == len(self.gold):
            raise ValueError(f"{len(self.texts)} texts, {len(self.ids)} ids and {len(self.gold)} span lists")
        if not self.draw_names:
            object.__setattr__(self, "draw_names", [draw_name(i, t) for i, t in zip(self.ids, self.texts, strict=True)])
        elif len(self.draw_names) != len(self.texts):
            raise ValueError(f"{len(self.texts)} texts and {len(self.draw_names)} draw names")


class Resources(Protocol):
    """What a mechanism may load from the project, on demand (a stage context or a served model provides it)."""

    params: Any  # textsift.config.Params
    device: str

    def detected(self, docs: Documents, labels: Sequence[str] | None) -> list[list[Span]]:
        """The recognizer set's spans of ``docs`` (by id and text), of ``labels`` only when given."""
        ...

    def fill_in(self) -> Any:
        """The corpus-trained masked LM (``fill_in``)."""
        ...

    def index(self, name: str) -> Any:
        """The loaded embedding index ``index@name``."""
        ...

    def model_folder(self, name: str, key: str) -> Path:
        """The folder of a named model (minilm, fill_in or a path); ``key`` names the params key in errors."""
        ...

    def read_text(self, relative: str, key: str) -> str:
        """A project file (word lists); ``key`` names the params key in errors."""
        ...


class Mechanism(Protocol):
    """A privacy mechanism: what a setting needs, and privatizing documents with it.

    ``per_document``: whether a document's output depends only on the document, its id and the key
    (then batches and row order never change it); DataSifterText calibrates its masking rate and swaps
    keyphrases over the whole corpus, by design (METHODS.md §1).

    Optional members: a differentially private mechanism defines ``spent(docs, setting, resources) -> list[float]``,
    the ε each document spends (the privacy ledger, ``data/ledger/<setting>.parquet``; without it a setting is
    "not DP"); a mechanism whose stand-ins can be traced back defines ``vault_entries`` (the pseudonym vault);
    ``additive_metrics`` names the metrics that are totals over documents, which a chunked run
    (:mod:`textsift.chunked`) sums — it averages every other metric over the chunks, weighted by documents or by
    the metric ``metric_weight`` names;
    ``servable(setting)`` says whether a setting ships as a model (:mod:`textsift.serving`; absent: never);
    ``document_wise(setting)`` says whether a mechanism that is not ``per_document`` is so under one setting;
    ``fills_from_corpus`` False says its replacements come from no corpus-trained model or index (redaction's public
    Faker lists), so evaluate does not count another document's name in its output as disclosed (absent: True).
    """

    per_document: bool

    def needs(self, setting: Any) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) the setting needs."""
        ...

    def privatize(self, docs: Documents, setting: Any, resources: Resources, key: Any
                  ) -> tuple[list[str], dict[str, float]]:
        """Privatized texts in input order and aggregate metrics (numbers only)."""
        ...
