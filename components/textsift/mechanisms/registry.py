"""Every privacy mechanism, by ``kind``: its setting schema and its implementation, in one table.

A ``privatize.settings`` entry is validated against the setting class of its ``kind`` (the union
:data:`Setting` that ``textsift.config`` uses) and privatized by the module of that kind, which
implements :class:`textsift.mechanisms.base.Mechanism`. Implementations are imported when a
setting of their kind runs, not when params are read (they load torch, Annoy, the fill-in model);
the ``privatize`` stage's computed code deps include every module named here
(``textsift.registry``), so editing a mechanism re-runs its settings.

Adding a mechanism is its package (a setting model with ``kind: Literal["<kind>"]`` and ``needs()``,
and a module with ``per_document``, ``needs`` and ``privatize``) and one line in :data:`MECHANISMS`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import Field

from textsift.errors import ConfigError
from textsift.mechanisms.base import Mechanism
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.redact.params import RedactSetting


@dataclass(frozen=True)
class Registered:
    """One mechanism: the pydantic model of its settings and the module implementing it."""

    setting: type
    module: str


MECHANISMS: dict[str, Registered] = {
    "datasifter": Registered(DataSifterSetting, "textsift.mechanisms.datasifter.mechanism"),
    "metric_dp": Registered(MetricDPSetting, "textsift.mechanisms.metric_dp.mechanism"),
    "redact": Registered(RedactSetting, "textsift.mechanisms.redact.mechanism"),
}

# a privatize.settings entry: the setting model its ``kind`` names
Setting = Annotated[Union[tuple(r.setting for r in MECHANISMS.values())], Field(discriminator="kind")]  # noqa: UP007


def mechanism(kind: str) -> Mechanism:
    """The implementation of ``kind`` (imported on first use)."""
    if kind not in MECHANISMS:
        raise ConfigError(f"no mechanism of kind {kind!r} (known: {', '.join(MECHANISMS)})")
    module: Any = importlib.import_module(MECHANISMS[kind].module)
    return module


def document_wise(implementation: Mechanism, setting: Any) -> bool:
    """Whether a document's output under ``setting`` depends on the document, its id and the key alone: a
    ``per_document`` mechanism, or one whose ``document_wise(setting)`` says so (DataSifterText without keyphrase
    swaps). Such a setting may be run on any subset of the documents (chunks, the test split) with the same outputs."""
    check = getattr(implementation, "document_wise", None)
    return bool(implementation.per_document or (check is not None and check(setting)))


def implementation_modules() -> tuple[str, ...]:
    """Every implementation module, for the privatize stage's code deps."""
    return tuple(r.module for r in MECHANISMS.values())
