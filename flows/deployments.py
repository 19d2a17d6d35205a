"""Scheduled runs of the pipeline: `python -m flows.deployments --cron "0 3 * * *"`.

``flow.serve`` registers a deployment with a cron schedule and runs its flow runs in this
process; with a Prefect server (``PREFECT_API_URL``) the deployment shows in its UI. For work
pools and workers, see infra/prefect.yaml.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from flows.pipeline import pipeline
from flows.temporary_api import start_temporary_api


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", default="textsift-scheduled")
    parser.add_argument("--cron", default="0 3 * * *", help="cron schedule (UTC)")
    parser.add_argument("--root", default=".", help="project folder the runs work in")
    args = parser.parse_args(argv)
    start_temporary_api()
    pipeline.serve(name=args.name, cron=args.cron, parameters={"root": str(Path(args.root).resolve())})


if __name__ == "__main__":
    main()
