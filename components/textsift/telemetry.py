"""Switch off the analytics of Prefect, MLflow, DVC and Great Expectations, and their chatter.

Called at every entry point (:func:`textsift.entry_point.prepare_process`) before those libraries are
imported; values already set by the user win.
"""

from __future__ import annotations

import logging
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
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # also transformers' per-load "Loading weights" bars
}
# Libraries whose INFO lines are routine (GX's per-suite steps, MLflow's schema migration):
# a run's log shows textsift's progress and every library's warnings.
QUIET_LOGGERS = ("great_expectations", "alembic", "mlflow.store.db.utils", "mlflow.store.model_registry")


def disable_telemetry() -> None:
    """Analytics off, progress bars off, and routine library logs at WARNING."""
    for key, value in TELEMETRY_OFF.items():
        os.environ.setdefault(key, value)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
