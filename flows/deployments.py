"""Serve the deployment that ``prefect.yaml`` declares, from this process: ``python -m flows.deployments``.

``prefect.yaml`` (project root) is the one deployment recipe: ``prefect deploy --all`` registers it for a
process work pool; this module serves the same deployment — its name, cron schedule and parameters read
from that file — without a work pool, so the two never carry different schedules or limits. One run at a time:
a scheduled run that starts while another runs is enqueued (``concurrency_limit``: 1, ``ENQUEUE``) and starts
when it ends, instead of failing on the project's run lock. With a Prefect server
(``PREFECT_API_URL``) it shows in the UI.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml
from prefect.client.schemas.objects import ConcurrencyLimitConfig

from flows.pipeline import pipeline
from flows.temporary_api import start_temporary_api

RECIPE = Path(__file__).resolve().parents[1] / "prefect.yaml"


def declared(recipe: Path = RECIPE) -> dict[str, Any]:
    """Name, cron, timezone, parameters and concurrency limit of the pipeline's scheduled deployment in
    ``prefect.yaml`` (the others run on demand: on Dask, or on a worker on another host)."""
    document = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    (deployment,) = [d for d in document["deployments"] if d["entrypoint"].endswith(":pipeline") and d.get("schedules")]
    (schedule,) = deployment["schedules"]
    return {"name": deployment["name"], "cron": schedule["cron"], "timezone": schedule.get("timezone", "UTC"),
            "parameters": dict(deployment.get("parameters") or {}),
            "concurrency": ConcurrencyLimitConfig(**deployment["concurrency_limit"])}


def main(argv: list[str] | None = None) -> None:
    """Serve ``prefect.yaml``'s deployment from this process, with a temporary API when no server is configured."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=None, help="project folder the runs work in (default: prefect.yaml's)")
    args = parser.parse_args(argv)
    spec = declared()
    parameters = spec["parameters"]
    parameters["root"] = str(Path(args.root or parameters.get("root", ".")).resolve())
    start_temporary_api()
    pipeline.serve(name=spec["name"], cron=spec["cron"], parameters=parameters, global_limit=spec["concurrency"])


if __name__ == "__main__":
    main()
