"""What a registered privatizer packs, known when it is shipped: the spec artifact (the setting and the params serving
reads), the name of the packed detector folder, and the modules its code runs from.

Kept apart from :mod:`textsift.serving.model` (the model itself, with the detector and MLflow) so the ``outsider``
stage, which ships settings, depends on the served model's code only for the settings that ship.
"""

from __future__ import annotations

import json
from typing import Any

from textsift.catalog import needed_keys
from textsift.mechanisms.registry import setting_modules

SPEC = "spec"  # the packed artifact holding the setting's name and the validated params (no text, no key)
DETECTOR = "detector"  # the packed detector folder's name
INDEX = "index"  # the packed index folder's name (a metric-DP setting over a public vocabulary)
MODEL_MODULE = "textsift.serving.model"  # the pyfunc model's module


def served_modules(setting: Any, params: Any) -> tuple[str, ...]:
    """The modules a served privatizer of ``setting`` runs from, the model's and its setting's
    (:func:`~textsift.mechanisms.registry.setting_modules`): its requirements are what their code imports
    (:func:`textsift.tracking.pinned_requirements`)."""
    return (MODEL_MODULE, *setting_modules(setting, params))


def spec(setting_name: str, params: Any, fingerprint: str) -> str:
    """The spec artifact's text: the setting served, the params serving reads (device, detection, ingest's
    normalization, the setting's index source) and the public fingerprint of the key its outputs were drawn with
    (never the key)."""
    setting = params.privatize.settings[setting_name]
    sources = {key: params.indexes.sources[key].model_dump(mode="json") for key in needed_keys(setting.needs(), INDEX)}
    return json.dumps({"setting": setting_name, "key_fingerprint": fingerprint, "params": {
        "seed": params.seed, "device": params.device, "detection": params.detection.model_dump(mode="json"),
        "ingest": {"normalize": params.ingest.normalize.model_dump(mode="json")},
        "indexes": {"sources": sources},
        "privatize": {"settings": {setting_name: setting.model_dump(mode="json")}},
    }}, sort_keys=True)
