"""What a served privatizer may load: :class:`textsift.mechanisms.base.Resources` over the folders packed with
the model (no project folder, no tracking store); each model is loaded on first use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from textsift.config import Params
from textsift.corpus import Span
from textsift.detection.recognizers.build import build_recognizers, run_recognizers
from textsift.device import resolve_device
from textsift.errors import ConfigError
from textsift.indexes.store import load_index
from textsift.mechanisms.base import Documents
from textsift.models.detector_io import load_detector
from textsift.models.fill_in import load_fill_in


def packed_name(artifact: str, key: str | None) -> str:
    """The name a catalog artifact (``index`` at ``w2v``) has among a served model's packed folders."""
    return f"{artifact}-{key}" if key else artifact


class ServedResources:
    """The resources of a served setting: ``folders`` maps :func:`packed_name` to a local folder."""

    def __init__(self, params: Params, folders: Mapping[str, Path]) -> None:
        self.params = params
        self.device = resolve_device(params.device)
        self._folders = dict(folders)
        self.index = cache(self._index)
        self._recognizers = cache(self._build_recognizers)

    def _folder(self, name: str) -> Path:
        if name not in self._folders:
            raise ConfigError(f"the served privatizer was packed without {name!r}")
        return self._folders[name]

    def _build_recognizers(self) -> Any:
        detection = self.params.detection
        detector = load_detector(self._folder("detector"), self.device) if "model" in detection.recognizers else None
        return build_recognizers(detection, detector)

    def detected(self, docs: Documents, labels: Sequence[str] | None) -> list[list[Span]]:
        """The recognizer set's spans of ``docs`` (as the detect stage finds them), of ``labels`` only when given."""
        found = run_recognizers(self._recognizers(), docs.texts, self.params.detection)
        keep = set(labels) if labels is not None else None
        return [[d.span for d in doc if keep is None or d.label in keep] for doc in found]

    def fill_in(self) -> Any:
        """The packed fill-in masked LM."""
        return load_fill_in(self._folder("fill_in"), self.device)

    def _index(self, name: str) -> Any:
        return load_index(self._folder(packed_name("index", name)))

    def model_folder(self, name: str, key: str) -> Path:
        """A packed model folder (``fill_in``); ``key`` names the params key in errors."""
        return self._folder(name)

    def read_text(self, relative: str, key: str) -> str:
        """Project files (word lists) are not packed: a setting that reads one is not served."""
        raise ConfigError(f"{key}: {relative} is a project file; a served privatizer cannot read it")
