"""Run an expectation list with Great Expectations and reduce the result to a QualityReport.

This is the only module that imports Great Expectations, and it does so lazily inside
functions: the import takes seconds, and most textsift commands never validate anything.
One ephemeral context with one whole-dataframe batch definition serves the whole process.

Privacy: GX results quote offending values (``partial_unexpected_list``). Reports and
QualityError messages end up in logs and MLflow, so they are built from the expectation
type, its column and the numbers GX counted — never from the values it quotes.
"""

from __future__ import annotations

import functools
import logging
import numbers
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from textsift.errors import QualityError

# An expectation as (type, kwargs): ("expect_column_values_to_be_unique", {"column": "doc_id"}).
Expectation = tuple[str, dict[str, Any]]

_LOCK = threading.Lock()  # one shared GX context; Prefect may call from several threads


@dataclass(frozen=True)
class QualityReport:
    """The outcome of one suite, safe to log.

    Attributes:
        name: The suite name (also the middle part of the metric keys).
        success: True when every expectation held.
        evaluated: How many expectations were evaluated.
        failed: Failing expectations as ``"<type>(<column>)"``, ``"(table)"`` for table-level ones.
        details: For each failing expectation, what GX counted: ``"unexpected_count=N"``,
            ``"observed=X"`` for aggregates (a number, never a data value), or ``"not evaluated"``.
    """

    name: str
    success: bool
    evaluated: int
    failed: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)

    def to_metrics(self) -> dict[str, int]:
        """MLflow metrics: ``quality.<name>.evaluated`` and ``quality.<name>.failed``."""
        prefix = f"quality.{self.name}"
        return {f"{prefix}.evaluated": self.evaluated, f"{prefix}.failed": len(self.failed)}

    def raise_if_failed(self) -> None:
        """Raise QualityError naming the suite and each failing expectation with its count.

        Raises:
            QualityError: When the suite did not succeed.
        """
        if self.success:
            return
        listed = "; ".join(f"{desc}: {self.details.get(desc, 'failed')}" for desc in self.failed)
        count = f"{len(self.failed)} of {self.evaluated}"
        raise QualityError(f"quality suite '{self.name}' failed {count} expectations: {listed}")


@functools.cache
def _batch_definition() -> Any:
    """The whole-dataframe batch definition of a process-wide ephemeral GX context."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")  # GX 1.x switch; a user setting wins
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    # this module sets its own logger to INFO on import, under any level given to its parents
    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)  # no tqdm noise in logs
    asset = context.data_sources.add_pandas("textsift").add_dataframe_asset("frame")
    return asset.add_batch_definition_whole_dataframe("whole")


def _class_name(kind: str) -> str:
    """``expect_column_values_to_be_unique`` -> ``ExpectColumnValuesToBeUnique``."""
    return "".join(part.capitalize() for part in kind.split("_"))


def _describe(config: Any) -> str:
    return f"{config.type}({config.kwargs.get('column') or 'table'})"


def _detail(result: Any) -> str:
    """What GX counted for a failed expectation: numbers only, never the values it quotes."""
    count = result.result.get("unexpected_count")
    if isinstance(count, numbers.Integral) and not isinstance(count, bool):
        return f"unexpected_count={int(count)}"
    observed = result.result.get("observed_value")
    if isinstance(observed, numbers.Real) and not isinstance(observed, bool):
        return f"observed={float(observed):.4g}"
    return "not evaluated"


def run_suite(name: str, frame: pd.DataFrame, expectations: list[Expectation]) -> QualityReport:
    """Validate ``frame`` against ``expectations`` as the suite ``name``.

    Args:
        name: Suite name for the report, metrics and messages.
        frame: A derived frame that holds no private text (GX quotes values it rejects).
        expectations: ``(type, kwargs)`` pairs; the type names a ``gx.expectations`` class.

    Returns:
        The QualityReport of the run; it never contains values from ``frame``.
    """
    batch_definition = _batch_definition()
    import great_expectations as gx

    with _LOCK:
        suite = gx.ExpectationSuite(name=name)
        for kind, kwargs in expectations:
            suite.add_expectation(getattr(gx.expectations, _class_name(kind))(**kwargs))
        batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
        result = batch.validate(suite, result_format="BASIC")
    details = {_describe(r.expectation_config): _detail(r) for r in result.results if not r.success}
    return QualityReport(
        name=name,
        success=bool(result.success),
        evaluated=len(result.results),
        failed=sorted(details),
        details=dict(sorted(details.items())),
    )
