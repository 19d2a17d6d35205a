"""Switch off the analytics of Prefect, MLflow, DVC and Great Expectations.

Called at every entry point (CLI, flows, tests) before those libraries are imported;
values already set by the user win.
"""

from __future__ import annotations

import os

TELEMETRY_OFF = {
    "DO_NOT_TRACK": "true",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DVC_NO_ANALYTICS": "1",
    "DVC_SITE_CACHE_DIR": os.path.join(os.path.expanduser("~"), ".cache", "textsift", "dvc-site"),
    "GX_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def disable_telemetry() -> None:
    for key, value in TELEMETRY_OFF.items():
        os.environ.setdefault(key, value)
