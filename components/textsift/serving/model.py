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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mlflow.pyfunc
import pandas as pd

from textsift import secret_key
from textsift.config import parse_params
from textsift.corpus import Span
from textsift.errors import ConfigError, InputError
from textsift.mechanisms.base import Documents
from textsift.mechanisms.registry import mechanism
from textsift.serving.resources import ServedResources
from textsift.serving.service import servable, served_key, served_privatize
from textsift.shutdown import sigterm_exits

SPEC = "spec"  # the packed artifact holding the setting's name and the validated params (no text, no key)
TEXT, ID, EPSILON = "text", "id", "epsilon"
EXAMPLE = pd.DataFrame({ID: ["example-1"], TEXT: ["Call Maria Lopez at 555-0100 about the invoice."]})  # synthetic


def spec(setting_name: str, params: Any, fingerprint: str) -> str:
    """The spec artifact's text: the setting served, the params serving reads (device, detection, ingest's
    normalization) and the public fingerprint of the key its outputs were drawn with (never the key)."""
    return json.dumps({"setting": setting_name, "key_fingerprint": fingerprint, "params": {
        "seed": params.seed, "device": params.device, "detection": params.detection.model_dump(mode="json"),
        "ingest": {"normalize": params.ingest.normalize.model_dump(mode="json")},
        "privatize": {"settings": {setting_name: params.privatize.settings[setting_name].model_dump(mode="json")}},
    }}, sort_keys=True)


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
        if not servable(self.mechanism, self.setting):
            raise ConfigError(f"{self.setting_name} ({self.setting.kind}) is not served (textsift.serving)")
        if not os.environ.get(secret_key.ENV):
            raise ConfigError(f"no secret key: set ${secret_key.ENV} to the project's key (`textsift key show` "
                              "names its fingerprint) before loading the privatizer")
        secret = secret_key.load(Path("."))
        if secret is None or secret.fingerprint != packed["key_fingerprint"]:
            raise ConfigError(f"${secret_key.ENV} is not the key this privatizer was built with (fingerprint "
                              f"{packed['key_fingerprint']})")
        self.key = served_key(secret, self.setting_name, self.setting)  # no published output was drawn with it
        self.resources = ServedResources(self.params, {k: Path(v) for k, v in context.artifacts.items() if k != SPEC})

    def analyze(self, texts: list[str]) -> list[list[Span]]:
        """The entities the served setting protects in each text, as its recognizer set finds them: offsets into the
        text as sent and a type, no score (a detector's scores on names it trained on would say which names those
        were; which spans it finds, /privatize shows anyway)."""
        docs = Documents(list(texts), [str(i) for i in range(len(texts))], [[] for _ in texts])
        return self.resources.detected(docs, getattr(self.setting, "labels", None))

    def predict(self, context: Any, model_input: pd.DataFrame, params: dict[str, Any] | None = None
                ) -> pd.DataFrame:
        """Privatize every row's ``text`` as sent (detection reads its normalized view and maps spans back, so a
        response differs from its request only inside replaced spans); rows keep their order and ids.

        Each row draws from a fresh name (:func:`textsift.releases.fresh_draw_name`): an id a client sends never keys a
        draw, so no request reproduces a published stand-in or noise vector, and the same text sent twice is two
        releases (its ε, returned per row, composes)."""
        if TEXT not in model_input:
            raise InputError(f"the input needs a {TEXT!r} column (and optionally {ID!r})")
        ids = row_ids(model_input)
        texts = [str(t) for t in model_input[TEXT]]
        result = served_privatize(self.mechanism, self.setting, self.resources, self.key, texts, ids)
        frame = pd.DataFrame({ID: ids, TEXT: result.texts})
        if result.spent is not None:
            frame[EPSILON] = result.spent
        return frame


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
