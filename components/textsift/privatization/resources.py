"""What a privacy mechanism may load, for a stage (or ``textsift privatize``) run: :class:`Resources`
of :mod:`textsift.mechanisms.base` over the project's catalog artifacts, each loaded on first use.

The code that loads each resource is imported by module name (:mod:`textsift.privatization.loaders`), when
first asked for, so a setting's instance depends on the loaders of what its ``needs()`` names only (read by
:mod:`textsift.registry`): editing the detector's code does not re-run a setting that detects nothing, nor the
privatize stage, which reads every document's spans from the detect stage's file (``detects_unseen=False``).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from textsift.corpus import Span
from textsift.device import resolve_device
from textsift.errors import ConfigError, StageError
from textsift.mechanisms.base import Documents
from textsift.privatization.loaders import loader_modules
from textsift.stage_context import StageContext


class StageResources:
    """The resources of the stage instance of ``ctx`` (a privatize setting, in a stage or ``textsift privatize``).

    Raises:
        StageError: the setting's mechanism asked for a resource its ``needs()`` does not name (its code would run
            unhashed by the instance's deps).
    """

    def __init__(self, ctx: StageContext, detects_unseen: bool = True) -> None:
        self.ctx = ctx
        self.params = ctx.params
        self.device = resolve_device(ctx.params.device)
        self.detects_unseen = detects_unseen  # else a document the detect stage's file lacks is an error
        setting = ctx.params.privatize.settings[ctx.instance.key or ""]
        self._loaders = set(loader_modules(setting.needs(), detects_unseen))
        # each loaded on first use, once: a stage (its outsider replays, the vault) or a streamed file asks many times
        self.index = cache(self._index)
        self.fill_in = cache(self._fill_in)
        self._stored = cache(self._read_detected)

    def detected(self, docs: Documents, labels: Sequence[str] | None) -> list[list[Span]]:
        """The spans the detect stage wrote for ``docs``, of ``labels``; texts it never saw are detected anew, or a
        StageError naming their ids when this stage only reads its file (``detects_unseen=False``)."""
        spans = self._loader("detector", "textsift.detection.corpus_spans")
        return spans.detected_spans(self._stored(), docs.ids, docs.texts, labels,
                                    self._recognize if self.detects_unseen else None)

    def _read_detected(self) -> dict:
        path = self.ctx.input("detected")
        return self._loader("detector", "textsift.detection.spans_file").read_detected(path) if path.exists() else {}

    @cached_property
    def _recognizers(self) -> list[Any]:
        detection = self.params.detection
        folder = self.ctx.model("detector") if "model" in detection.recognizers else None
        return self._loader("detector", "textsift.detection.recognizers.build").recognizer_set(detection, folder,
                                                                                          self.device)

    def _recognize(self, texts: Sequence[str]) -> list[list[Any]]:
        build = self._loader("detector", "textsift.detection.recognizers.build")
        return build.recognizer_candidates(self._recognizers, texts, self.params.detection,
                                           view=self.params.ingest.normalize)

    def _fill_in(self) -> Any:
        """The project's fill-in masked LM, fetched through its pointer and loaded on the stage's device."""
        return self._loader("fill_in", "textsift.models.fill_in").load_fill_in(self.ctx.model("fill_in"), self.device)

    def _index(self, name: str) -> Any:
        return self._loader("index", "textsift.indexes.store").load_index(self.ctx.input("index", name))

    def _loader(self, need: str, module: str) -> Any:
        """``module`` imported, a loader of ``need``: when a need the setting declares has it among its loaders."""
        if module not in self._loaders:
            raise StageError(f"{self.ctx.instance.name}: its mechanism loads the {need} (through {module}), "
                             "which its setting's needs() does not name, or detects texts this stage must not")
        return importlib.import_module(module)

    def model_folder(self, name: str, key: str) -> Path:
        """The local folder of model ``name`` (minilm, fill_in or a path); ``key`` names it in errors."""
        locate = self._loader("index", "textsift.embeddings.locate")
        return Path(locate.model_folder(name, self.ctx.root, self.ctx.tracker, key))

    def read_text(self, relative: str, key: str) -> str:
        """A project file's text (a word list); a ConfigError names the setting's ``key`` when it is missing."""
        path = self.ctx.path(relative)
        if not path.is_file():
            raise ConfigError(f"privatize.settings.{self.ctx.instance.key}.{key}: {relative} is not a file")
        return path.read_text(encoding="utf-8")
