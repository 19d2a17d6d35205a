"""One way to call a privacy mechanism: what it is given, what it may load, what it returns.

Every mechanism (DataSifterText §1, metric-DP §2, redaction) is a :class:`Mechanism` called the same way by the
privatize stage, ``textsift privatize`` and the served model: :meth:`Mechanism.privatize` takes the documents, the
setting, a :class:`Resources` that loads what the setting needs on demand (the artifacts ``setting.needs()`` names in
:mod:`textsift.catalog`) and the release key its draws derive from (:func:`textsift.releases.release_key`; per
document, ``Documents.draw_names``), and returns one :class:`PrivatizeResult`: the privatized texts in input order,
the mechanism's aggregate metrics (numbers, never text), the ε each document spent and, when asked, the pseudonym
vault's entries — everything from one run, so a stage never runs a mechanism twice for one release. The mechanisms
are listed by kind in ``textsift.mechanisms.registry.MECHANISMS``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Protocol

from textsift.corpus import Span
from textsift.errors import InputError, StageError
from textsift.releases import draw_name
from textsift.rng import Key


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


@dataclass(frozen=True)
class PrivatizeResult:
    """What one run of a mechanism over documents gives.

    Attributes:
        texts: the privatized texts, in input order.
        metrics: the mechanism's aggregate metrics (numbers only).
        spent: per document, the ε it spent (the privacy ledger); None for a mechanism that is not DP.
        vault: per document id, ``(label, stand-in, original)`` of each replaced region, when the call asked for it
            (the pseudonym vault, sealed by the stage); empty otherwise.
        replaced: per document, where each replaced region's stand-in lies in the output text, with its type, for a
            mechanism that replaces whole regions (redaction: what a served answer lists); None otherwise.
    """

    texts: list[str]
    metrics: dict[str, float]
    spent: list[float] | None = None
    vault: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    replaced: list[list[Span]] | None = None


class Mechanism(ABC):
    """A privacy mechanism: what a setting needs, and privatizing documents with it (one :class:`PrivatizeResult`).

    Class attributes:
        per_document: whether a document's output depends only on the document, its id and the key (then batches and
            row order never change it); DataSifterText calibrates its masking rate and swaps keyphrases over the
            whole corpus, by design (METHODS.md §1).
        additive_metrics: the metrics that are totals over documents, which a chunked run (:mod:`textsift.chunked`)
            sums; it averages every other metric over the chunks, weighted by documents or by ``metric_weight``.
        metric_weight: the metric a chunked run weighs chunks by (None: documents).
        guarantee: the DP guarantee written beside the ledger ("" for a mechanism that is not DP).
    """

    per_document: ClassVar[bool]
    additive_metrics: ClassVar[tuple[str, ...]] = ()
    metric_weight: ClassVar[str | None] = None
    guarantee: ClassVar[str] = ""

    def needs(self, setting: Any) -> tuple[tuple[str, str | None], ...]:
        """The catalog artifacts (name, key) the setting needs."""
        return tuple(setting.needs())

    def modules(self, setting: Any, params: Any) -> tuple[str, ...]:
        """The library modules ``setting`` imports by name (:meth:`load`) beyond the mechanism's own module: part of
        its instances' code deps (:mod:`textsift.registry`), so a setting that never runs a module is not re-run when
        it changes. Nothing here."""
        return ()

    def load(self, module: str, setting: Any, params: Any) -> ModuleType:
        """``module`` imported, when :meth:`modules` names it for ``setting``.

        Raises:
            StageError: it does not: the setting would run code its instances' deps do not hash.
        """
        if module not in self.modules(setting, params):
            raise StageError(f"{type(self).__name__} loads {module}, which its modules() does not name for the setting")
        return importlib.import_module(module)

    def document_wise(self, setting: Any) -> bool:
        """Whether a document's output under ``setting`` depends on the document, its id and the key alone, so the
        setting may run on any subset of the documents (chunks, the test split) with the same outputs."""
        return self.per_document

    def serving_refusal(self, setting: Any, params: Any) -> str | None:
        """Why ``setting`` does not ship as a served model (:mod:`textsift.serving`), or None when it does: a setting
        ships when it protects something in a request and its packed resources hold no corpus text (``params``, the
        project's :class:`textsift.config.Params`, say what those resources are). The rule reports the reason beside
        the setting's verdict."""
        return f"{type(self).__name__} has no served form"

    def entity_types(self, setting: Any) -> list[str] | None:
        """The detected entity types ``setting`` protects by type (what a served request's ``entities`` may widen and
        /analyze lists), or None when it protects none by type."""
        return None

    def fills_from_corpus(self, setting: Any, params: Any) -> bool:
        """Whether ``setting``'s replacements come from a corpus-trained model or index, so that another document's
        name in its output may be disclosed rather than chance (the attack stage then measures the cross-document
        attacker); False where they come from public lists alone (redaction's Faker stand-ins, a public vocabulary)."""
        return True

    def release_context(self, setting: Any, resources: Resources) -> dict[str, Any]:
        """What ``setting``'s draws depend on beyond its own parameters, folded into its release key
        (:func:`textsift.releases.release_key`): a release over another version of it draws afresh. Nothing here."""
        return {}

    def setting_metrics(self, setting: Any, resources: Resources, key: Key) -> dict[str, float]:
        """Aggregate metrics of the setting itself, whatever the documents (metric-DP's plausible deniability at its
        ε): the privatize stage logs them beside :attr:`PrivatizeResult.metrics`; a served call never computes them."""
        return {}

    def recomputed_names(self, setting: Any) -> Callable[[Key, str, str], str] | None:
        """How anyone recomputes what replaces a person's name under a key: ``(key, the document's draw name, name) ->
        stand-in``, where that is a function of them alone (a dictionary attacker tries every candidate name with a
        guessed key: ``privatization.attacks``); None where nothing that replaces a name can be recomputed."""
        return None

    def with_operators(self, setting: Any, operators: Mapping[str, str]) -> Any:
        """``setting`` with a served request's operator per entity type (what replaces a span of that type), where the
        mechanism has operators and the request's reveal no more than the setting's own.

        Raises:
            InputError: the mechanism has no operators, or the request's are refused (named by type, never value).
        """
        raise InputError(f"the served setting ({setting.kind}) takes no \"operators\": it replaces no span by type")

    @abstractmethod
    def privatize(self, docs: Documents, setting: Any, resources: Resources, key: Key, *, vault: bool = False
                  ) -> PrivatizeResult:
        """Privatize ``docs`` under ``setting`` with draws derived from ``key``; the vault's entries when ``vault``."""
