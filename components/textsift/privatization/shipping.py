"""outsider stage, shipping part: the setting as an MLflow pyfunc privatizer, registered (:mod:`textsift.serving`).

Packs the detector when the setting uses it and its index when it has one (a public vocabulary's), with the params
serving reads and the key's fingerprint, logs the model under the stage's MLflow run and registers it as a version of
``tracking.registered_privatizer`` tagged with its setting, pipeline run and the digest of the corpus it released
(``tracking.RELEASE_TAG``); ``textsift promote`` moves its ``recommended`` alias. Which settings ship:
:func:`textsift.serving.service.servable`.
"""

from __future__ import annotations

import logging

from textsift.catalog import needed_keys
from textsift.config import Setting
from textsift.detection.recognizers.spacy_ner import pipeline_packages
from textsift.serving.packing import DETECTOR, INDEX, served_modules, spec
from textsift.stage_cache import content_digest
from textsift.stage_context import StageContext
from textsift.tracking import RELEASE_TAG

log = logging.getLogger("textsift")


def ship_privatizer(ctx: StageContext, key: str, setting: Setting) -> str:
    """Log and register the setting's privatizer; its registered version."""
    folder = ctx.model(DETECTOR) if (DETECTOR, None) in setting.needs() else None
    spacy = folder is not None and "spacy" in ctx.params.detection.recognizers  # loaded by name: no import shows it
    packed = {DETECTOR: folder} if folder is not None else {}
    for index in needed_keys(setting.needs(), INDEX):  # served: a public vocabulary's
        packed[INDEX] = ctx.input(INDEX, index)
    ctx.tracker.log_privatizer(ctx.run_id, spec(key, ctx.params, ctx.secret_key.fingerprint), packed,
                               served_modules(setting, ctx.params), ("spacy", *pipeline_packages()) if spacy else ())
    name = ctx.tracker.params.registered_privatizer
    version = ctx.tracker.register_model(name, ctx.run_id, "privatizer", {
        "textsift.setting": key, "textsift.pipeline_run": ctx.parent_run_id or ctx.run_id,
        RELEASE_TAG: content_digest(ctx.input("privatized", key))})  # the release evaluate judges
    log.info("outsider@%s: privatizer registered as %s version %s", key, name, version)
    return version
