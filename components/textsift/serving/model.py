"""The MLflow pyfunc privatizer (``textsift-privatizer``): texts in, privatized texts out, the key from the env.

Its draws come from the setting's *served* release key and a fresh name per row (:mod:`textsift.releases`): the
service cannot be asked to repeat the draws of a published corpus (a re-identification oracle) nor any earlier answer.

This module imports mlflow (a pyfunc model subclasses ``mlflow.pyfunc.PythonModel``); the rest of the
library reaches MLflow only through :mod:`textsift.tracking`, which saves and registers it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mlflow.pyfunc
import pandas as pd

from textsift import secret_key
from textsift.config import parse_params
from textsift.corpus import Span
from textsift.detection.types import (
    ENTITY_TYPES,
    IDENTIFIER_GROUPS,
    expand_label_groups,
    unknown_detected_types,
)
from textsift.errors import ConfigError, InputError
from textsift.mechanisms.base import Documents
from textsift.mechanisms.registry import mechanism
from textsift.serving.packing import SPEC
from textsift.serving.resources import ServedResources
from textsift.serving.service import servable, served_key, served_privatize
from textsift.shutdown import sigterm_exits

TEXT, ID, EPSILON = "text", "id", "epsilon"
REPLACED = "replaced"  # an output column: per row, {start, end, type} of each stand-in in the answered text
ENTITIES = "entities"  # an optional input column: a request's entity types, comma-joined (the same for its rows)
THRESHOLD = "threshold"  # an optional input column: a request's detection threshold ceiling (the same for its rows)
OPERATORS = "operators"  # an optional input column: a request's operator per entity type, a JSON object
# A request's threshold is taken down to one of these: a coarse grid, so requests cannot bisect a span's confidence
# (the detector trains on the corpus's gold spans, so a fine score would say which names it saw), with a floor (at
# zero every cell of every window is a span: a request could make the service decode millions).
REQUEST_THRESHOLDS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
EXAMPLE = pd.DataFrame({ID: ["example-1"], TEXT: ["Call Maria Lopez at 555-0100 about the invoice."]})  # synthetic


def row_ids(frame: pd.DataFrame) -> list[str]:
    """The request's ids, or a digest of each text: what the response names each row by (no draw is keyed by it)."""
    if ID in frame:
        return [str(i) for i in frame[ID]]
    return ["text#" + hashlib.blake2b(str(t).encode(), digest_size=8).hexdigest() for t in frame[TEXT]]


class PrivatizerModel(mlflow.pyfunc.PythonModel):
    """One privatize setting as a pyfunc model (see :mod:`textsift.serving`)."""

    def load_context(self, context: Any) -> None:
        """Read the spec, the packed folders and the secret key (``TEXTSIFT_SECRET_KEY``, never packed)."""
        packed = json.loads(Path(context.artifacts[SPEC]).read_text(encoding="utf-8"))
        self.params = parse_params(packed["params"])
        self.setting_name = packed["setting"]
        self.setting = self.params.privatize.settings[self.setting_name]
        self.mechanism = mechanism(self.setting.kind)
        if not servable(self.mechanism, self.setting, self.params):
            raise ConfigError(f"{self.setting_name} ({self.setting.kind}) is not served (textsift.serving)")
        if not os.environ.get(secret_key.ENV):
            raise ConfigError(f"no secret key: set ${secret_key.ENV} to the project's key (`textsift key show` "
                              "names its fingerprint) before loading the privatizer")
        secret = secret_key.load(Path("."))
        if secret is None or secret.fingerprint != packed["key_fingerprint"]:
            raise ConfigError(f"${secret_key.ENV} is not the key this privatizer was built with (fingerprint "
                              f"{packed['key_fingerprint']})")
        self.resources = ServedResources(self.params, {k: Path(v) for k, v in context.artifacts.items() if k != SPEC})
        # no published output was drawn with it
        self.key = served_key(secret, self.setting_name, self.setting, self.mechanism, self.resources)

    def analyze(self, texts: list[str], entities: list[str] | None = None,
                threshold: float | None = None) -> list[list[Span]]:
        """The entities the served setting (or a request's ``entities``, :meth:`setting_for`) protects in each text,
        as its recognizer set finds them (every type's threshold at most ``threshold`` when given): offsets into the
        text as sent and a type, no score (a detector's scores on names it trained on would say which names those
        were; which spans it finds, /privatize shows anyway)."""
        types = self.mechanism.entity_types(self.setting_for(entities))
        if types is None:
            raise InputError(f"the served setting ({self.setting.kind}) protects no entity type: /analyze has "
                             "nothing to list")
        docs = Documents(list(texts), [str(i) for i in range(len(texts))], [[] for _ in texts])
        return self.resources.at_most(_ceiling(threshold)).detected(docs, types)

    def setting_for(self, entities: list[str] | None) -> Any:
        """The served setting protecting ``entities`` (types and groups, e.g. ``[direct, LOC]``) instead of its own
        ``labels``: only ever more. The setting was judged and promoted protecting its own types; a request may add
        types (that only protects more), never leave one out (what it would answer was never judged).

        Raises:
            InputError: the setting does not protect by entity type, ``entities`` names an unknown type, or it
                leaves one of the setting's types out.
        """
        if entities is None:
            return self.setting
        own = self.mechanism.entity_types(self.setting)
        if own is None:
            raise InputError(f"the served setting ({self.setting.kind}) does not protect by entity type: "
                             "send no \"entities\"")
        asked = expand_label_groups(list(entities))
        unknown = unknown_detected_types(asked)
        if unknown:
            raise InputError(f"{len(unknown)} of \"entities\" name no entity type: the types are "
                             f"{', '.join(ENTITY_TYPES)} and the groups {', '.join(IDENTIFIER_GROUPS)}")
        missing = [label for label in own if label not in asked]
        if missing:
            raise InputError(f"the served setting protects {', '.join(own)}; \"entities\" may add types, never "
                             f"leave one out (missing: {', '.join(missing)})")
        return self.setting.model_copy(update={"labels": asked})

    def predict(self, context: Any, model_input: pd.DataFrame, params: dict[str, Any] | None = None
                ) -> pd.DataFrame:
        """Privatize every row's ``text`` as sent (detection reads its normalized view and maps spans back, so a
        response differs from its request only inside replaced spans); rows keep their order and ids, and, for a
        setting that replaces whole regions, ``replaced`` lists where each stand-in lies in the answer and its type.
        Optional columns, one value per request: ``entities`` (:meth:`setting_for`), ``threshold`` (a detection
        ceiling) and ``operators`` (what replaces each type, no more revealing than the setting's own:
        ``Mechanism.with_operators``).

        Each row draws from a fresh name (:func:`textsift.releases.fresh_draw_name`): an id a client sends never keys a
        draw, so no request reproduces a published stand-in or noise vector, and the same text sent twice is two
        releases (its ε, returned per row, composes)."""
        if TEXT not in model_input:
            raise InputError(f"the input needs a {TEXT!r} column (and optionally {ID!r})")
        ids = row_ids(model_input)
        texts = [str(t) for t in model_input[TEXT]]
        asked, ceilings, operators = ([_given(v) for v in model_input[column]] if column in model_input
                                      else [None] * len(texts) for column in (ENTITIES, THRESHOLD, OPERATORS))
        groups: dict[tuple[str | None, float | None, str | None], list[int]] = {}
        for row, (value, ceiling, ops) in enumerate(zip(asked, ceilings, operators, strict=True)):  # joined requests
            # may ask for other types, thresholds or operators: one call per (types, threshold, operators)
            if not all(v is None or isinstance(v, str) for v in (value, ops)):
                raise InputError(f"\"{ENTITIES}\" and \"{OPERATORS}\" are strings: types and groups comma-joined, a "
                                 "JSON object")
            groups.setdefault((value, _ceiling(ceiling), ops), []).append(row)
        out_texts: list[str] = [""] * len(texts)
        spent: list[float] | None = None
        replaced: list[list[dict[str, Any]]] | None = None
        for (value, ceiling, ops), rows in groups.items():
            setting = self.setting_for(value.split(",") if value is not None else None)
            if ops is not None:
                setting = self.mechanism.with_operators(setting, _operators(ops))
            result = served_privatize(self.mechanism, setting, self.resources.at_most(ceiling), self.key,
                                      [texts[r] for r in rows], [ids[r] for r in rows])
            _scatter(out_texts, rows, result.texts)
            if result.replaced is not None:
                replaced = replaced or [[] for _ in texts]
                _scatter(replaced, rows, [[{"start": s.start, "end": s.end, "type": s.label} for s in doc]
                                          for doc in result.replaced])
            if result.spent is not None:
                spent = spent or [0.0] * len(texts)
                _scatter(spent, rows, [float(e) for e in result.spent])
        frame = pd.DataFrame({ID: ids, TEXT: out_texts})
        if spent is not None:
            frame[EPSILON] = spent
        if replaced is not None:
            frame[REPLACED] = replaced
        return frame


def _scatter(out: list[Any], rows: Sequence[int], values: Sequence[Any]) -> None:
    """``values`` (one per row of a group, in order) put back at the group's ``rows`` of the whole answer."""
    for row, value in zip(rows, values, strict=True):
        out[row] = value


def _given(value: Any) -> Any:
    """A cell of an optional column, None where a row has none (a missing value in a frame is NaN or NA)."""
    return None if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)) else value


def _operators(value: str) -> dict[str, str]:
    """A row's ``operators`` cell: a JSON object of entity type -> operator name.

    Raises:
        InputError: it is not such an object (the message holds none of it).
    """
    try:
        parsed = json.loads(value)
    except (TypeError, json.JSONDecodeError):
        parsed = None
    if not isinstance(parsed, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()):
        raise InputError(f"\"{OPERATORS}\" must be a JSON object of entity type -> operator")
    return parsed


def _ceiling(value: Any) -> float | None:
    """A row's ``threshold`` taken down to :data:`REQUEST_THRESHOLDS`, None when the row has none (a missing value in
    a frame is NaN or NA).

    Raises:
        InputError: a threshold outside [lowest of REQUEST_THRESHOLDS, 1].
    """
    if value is None or pd.isna(value):
        return None
    ceiling = float(value)
    if not REQUEST_THRESHOLDS[0] <= ceiling <= 1:
        raise InputError(f"\"{THRESHOLD}\" must be in [{REQUEST_THRESHOLDS[0]}, 1], got {ceiling}")
    return max(level for level in REQUEST_THRESHOLDS if level <= ceiling)


def load_privatizer(folder: Path) -> tuple[Any, str]:
    """A downloaded privatizer loaded (the key from the environment) and the name of the setting it serves."""
    model = mlflow.pyfunc.load_model(str(folder))
    return model, model.unwrap_python_model().setting_name


@contextmanager
def served_copy() -> Iterator[Path]:
    """An empty temporary folder for the served model's copy, removed with what it holds when the block ends: on
    shutdown, on a failed start (download, load or bind: an exception or ``SystemExit``) and on SIGTERM, which
    inside the block is a clean exit (:func:`textsift.shutdown.sigterm_exits`). The loaded model reads its packed
    folders lazily, so the copy must outlive the server, not only the load."""
    folder = Path(tempfile.mkdtemp(prefix="textsift-serve-"))
    try:
        with sigterm_exits():
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
