"""privatize, shipping part: the setting as an MLflow pyfunc privatizer, registered (:mod:`textsift.serving`).

Packs what the setting needs (``setting.needs()``: the detector, the fill-in model, the index) with the
params the stage declares, logs the model under the stage's MLflow run and registers it as a version of
``tracking.registered_privatizer`` tagged with its setting and pipeline run; ``textsift promote`` moves its
``recommended`` alias. A corpus-wide mechanism (DataSifterText) is not served per request, and metric-DP's
index holds the corpus's own input words (personal data included), so neither is shipped (:func:`servable`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from textsift.config import Setting
from textsift.serving.model import spec
from textsift.serving.resources import packed_name
from textsift.stages import StageContext

log = logging.getLogger("textsift")
PACKED_MODELS = ("detector", "fill_in")


def servable(implementation: object) -> bool:
    """Whether a mechanism is shipped as a model: per-document, and nothing it packs holds corpus text."""
    return bool(getattr(implementation, "per_document", False) and getattr(implementation, "servable", True))


def packed_folders(ctx: StageContext, setting: Setting) -> dict[str, Path]:
    """The local folders of what the setting needs, by their packed name (the corpus is never packed)."""
    folders: dict[str, Path] = {}
    for name, key in setting.needs():
        if name in PACKED_MODELS:
            folder = ctx.model(name)
            if folder is not None:
                folders[name] = folder
        elif name == "index" and key is not None:
            folders[packed_name(name, key)] = ctx.input(name, key)
    return folders


def ship_privatizer(ctx: StageContext, key: str, setting: Setting) -> str:
    """Log and register the setting's privatizer; its registered version."""
    ctx.tracker.log_privatizer(ctx.run_id, spec(key, ctx.declared), packed_folders(ctx, setting))
    tracking = ctx.params.tracking
    version = ctx.tracker.register_model(tracking.registered_privatizer, ctx.run_id, "privatizer", {
        "textsift.setting": key, "textsift.pipeline_run": ctx.parent_run_id or ctx.run_id})
    log.info("privatize@%s: privatizer registered as %s version %s", key, tracking.registered_privatizer, version)
    return version
