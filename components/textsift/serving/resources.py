"""What a served privatizer may load: :class:`textsift.mechanisms.base.Resources` over the folders packed with
the model (no project folder, no tracking store). A served setting needs the detector or a public vocabulary's index
at most (:func:`textsift.serving.service.servable`): the fill-in model, a corpus index and project files are never
packed."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from textsift.config import Params
from textsift.corpus import Span
from textsift.detection.recognizers.build import recognizer_set, run_recognizers, spans_of
from textsift.device import resolve_device
from textsift.errors import ConfigError
from textsift.mechanisms.base import Documents
from textsift.serving.packing import DETECTOR, INDEX


class _Recognizers:
    """The recognizer set, loaded by the first request that needs it; /privatize's batch and /analyze may ask at
    once from two threads, and only one loads the detector."""

    def __init__(self, params: Params, folder: Path | None) -> None:
        self._params, self._folder = params, folder
        self._loaded: list[Any] | None = None
        self._loading = threading.Lock()

    def get(self) -> list[Any]:
        with self._loading:
            if self._loaded is None:
                self._loaded = recognizer_set(self._params.detection, self._folder, resolve_device(self._params.device))
            return self._loaded


class _Index:
    """The packed index, read once by whichever thread asks first (the model's load: the served key is bound to the
    index's manifest, ``Mechanism.release_context``)."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._loaded: Any = None
        self._loading = threading.Lock()

    def get(self) -> Any:
        from textsift.indexes.store import load_index

        if self._folder is None:
            raise ConfigError("a served privatizer packs no index")
        with self._loading:
            if self._loaded is None:
                self._loaded = load_index(self._folder)
            return self._loaded


class ServedResources:
    """The resources of a served setting: ``folders`` maps a packed name (``detector``) to a local folder;
    ``ceiling`` (:meth:`at_most`) caps every type's detection threshold."""

    def __init__(self, params: Params, folders: Mapping[str, Path], ceiling: float | None = None,
                 recognizers: _Recognizers | None = None, index: _Index | None = None) -> None:
        self.params = params
        self.device = resolve_device(params.device)
        self._folders = dict(folders)
        self._ceiling = ceiling
        self._recognizers = recognizers or _Recognizers(params, self._folders.get(DETECTOR))
        self._index = index or _Index(self._folders.get(INDEX))

    def at_most(self, ceiling: float | None) -> ServedResources:
        """These resources detecting with no type's threshold above ``ceiling`` (a request's ``threshold``: it may
        ask to find more, never less); the recognizer set is shared, loaded once. ``None``: these resources."""
        if ceiling is None:
            return self
        return ServedResources(self.params, self._folders, ceiling, self._recognizers, self._index)

    def detected(self, docs: Documents, labels: Sequence[str] | None) -> list[list[Span]]:
        """The recognizer set's spans of ``docs`` (as the detect stage finds them), of ``labels`` only when given."""
        return spans_of(run_recognizers(self._recognizers.get(), docs.texts, self.params.detection, labels,
                                        view=self.params.ingest.normalize, ceiling=self._ceiling))

    def _not_packed(self, what: str) -> ConfigError:
        return ConfigError(f"a served privatizer packs no {what}")

    def fill_in(self) -> Any:
        """Never packed."""
        raise self._not_packed("fill-in model")

    def index(self, name: str) -> Any:
        """The packed index (a public vocabulary's: :meth:`~textsift.mechanisms.metric_dp.mechanism.MetricDP.
        serving_refusal`), read once."""
        return self._index.get()

    def model_folder(self, name: str, key: str) -> Path:
        """Never packed."""
        raise self._not_packed(f"model {name!r} ({key})")

    def read_text(self, relative: str, key: str) -> str:
        """Never packed."""
        raise self._not_packed(f"project file {relative} ({key})")
