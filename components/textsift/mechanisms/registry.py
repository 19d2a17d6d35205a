"""Every privacy mechanism, by ``kind``: its setting schema and its implementation, in one table.

A ``privatize.settings`` entry is validated against the setting class of its ``kind`` (the union
:data:`Setting` that ``textsift.config`` uses) and privatized by that kind's
:class:`textsift.mechanisms.base.Mechanism` subclass. Implementations are imported when a
setting of their kind runs, not when params are read (they load torch, Annoy, the fill-in model);
each ``privatize`` instance's computed code deps include the module its setting's kind names here
(``textsift.registry``), so editing a mechanism re-runs its own settings and no other.

Adding a mechanism is its package (a setting model with ``kind: Literal["<kind>"]`` and ``needs()``,
and a module with a ``Mechanism`` subclass: ``per_document`` and ``privatize``) and one line in :data:`MECHANISMS`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Union

from pydantic import Field

from textsift.errors import ConfigError
from textsift.mechanisms.base import Mechanism
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.metric_dp.loaded_modules import CONTEXTUAL_ENCODER, STAND_INS
from textsift.mechanisms.metric_dp.params import MetricDPSetting
from textsift.mechanisms.redact.params import RedactSetting


@dataclass(frozen=True)
class Registered:
    """One mechanism: the pydantic model of its settings, the module implementing it and its class there, and the
    modules its settings may import by name (each setting's :meth:`~textsift.mechanisms.base.Mechanism.modules`)."""

    setting: type
    module: str
    implementation: str
    loads: tuple[str, ...] = ()


MECHANISMS: dict[str, Registered] = {
    "datasifter": Registered(DataSifterSetting, "textsift.mechanisms.datasifter.mechanism", "DataSifter"),
    "metric_dp": Registered(MetricDPSetting, "textsift.mechanisms.metric_dp.mechanism", "MetricDP",
                            (CONTEXTUAL_ENCODER, STAND_INS)),
    "redact": Registered(RedactSetting, "textsift.mechanisms.redact.mechanism", "Redaction"),
}

# a privatize.settings entry: the setting model its ``kind`` names
# (built from the table, so a new mechanism is one line: a type checker sees it as Any)
Setting = Annotated[Union[tuple(r.setting for r in MECHANISMS.values())], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007,E501


@cache
def mechanism(kind: str) -> Mechanism:
    """The implementation of ``kind`` (imported on first use, one instance per process)."""
    if kind not in MECHANISMS:
        raise ConfigError(f"no mechanism of kind {kind!r} (known: {', '.join(MECHANISMS)})")
    registered = MECHANISMS[kind]
    implementation: Mechanism = getattr(importlib.import_module(registered.module), registered.implementation)()
    return implementation


def implementation_modules() -> tuple[str, ...]:
    """Every implementation module and what its settings may import by name, for the privatize stage's code deps."""
    return tuple(dict.fromkeys(m for r in MECHANISMS.values() for m in (r.module, *r.loads)))


def setting_modules(setting: Any, params: Any) -> tuple[str, ...]:
    """The modules one setting runs: its kind's implementation and what the setting imports by name."""
    return (implementation_module(setting.kind), *mechanism(setting.kind).modules(setting, params))


def implementation_module(kind: str) -> str:
    """The module implementing ``kind``: a privatize instance's code deps name its own mechanism's only."""
    if kind not in MECHANISMS:
        raise ConfigError(f"no mechanism of kind {kind!r} (known: {', '.join(MECHANISMS)})")
    return MECHANISMS[kind].module
