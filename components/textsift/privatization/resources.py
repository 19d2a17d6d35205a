"""What a privacy mechanism may load, for a stage (or ``textsift privatize``) run: :class:`Resources`
of :mod:`textsift.mechanisms.base` over the project's catalog artifacts, each loaded on first use."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from textsift.corpus import Span
from textsift.detection.corpus_spans import detected_spans, read_detected
from textsift.detection.recognizers.build import recognizer_set, run_recognizers
from textsift.device import resolve_device
from textsift.embeddings.locate import model_folder
from textsift.errors import ConfigError
from textsift.indexes.store import load_index
from textsift.mechanisms.base import Documents
from textsift.models.fill_in import load_fill_in
from textsift.stage_context import StageContext


class StageResources:
    """The resources of the stage instance of ``ctx`` (a privatize setting, in a stage or ``textsift privatize``)."""

    def __init__(self, ctx: StageContext) -> None:
        self.ctx = ctx
        self.params = ctx.params
        self.device = resolve_device(ctx.params.device)
        # each loaded on first use, once: a stage (its outsider replays, the vault) or a streamed file asks many times
        self.index = cache(self._index)
        self.fill_in = cache(self._fill_in)
        self._stored = cache(self._read_detected)

    def detected(self, docs: Documents, labels: Sequence[str] | None) -> list[list[Span]]:
        """The spans the detect stage wrote for ``docs`` (detected anew for unknown texts), of ``labels``."""
        return detected_spans(self.ctx, pd.DataFrame({"doc_id": docs.ids, "text": docs.texts}), labels,
                              self._stored(), self._recognize)

    def _read_detected(self) -> dict:
        path = self.ctx.input("detected")
        return read_detected(path) if path.exists() else {}

    @cached_property
    def _recognizers(self) -> list[Any]:
        detection = self.params.detection
        folder = self.ctx.model("detector") if "model" in detection.recognizers else None
        return recognizer_set(detection, folder, self.device)

    def _recognize(self, texts: Sequence[str]) -> list[list[Any]]:
        return run_recognizers(self._recognizers, texts, self.params.detection, view=self.params.ingest.normalize)

    def _fill_in(self) -> Any:
        """The project's fill-in masked LM, fetched through its pointer and loaded on the stage's device."""
        return load_fill_in(self.ctx.model("fill_in"), self.device)

    def _index(self, name: str) -> Any:
        return load_index(self.ctx.input("index", name))

    def model_folder(self, name: str, key: str) -> Path:
        """The local folder of model ``name`` (minilm, fill_in or a path); ``key`` names it in errors."""
        return model_folder(name, self.ctx.root, self.ctx.tracker, key)

    def read_text(self, relative: str, key: str) -> str:
        """A project file's text (a word list); a ConfigError names the setting's ``key`` when it is missing."""
        path = self.ctx.path(relative)
        if not path.is_file():
            raise ConfigError(f"privatize.settings.{self.ctx.instance.key}.{key}: {relative} is not a file")
        return path.read_text(encoding="utf-8")
