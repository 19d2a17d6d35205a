"""prefect.yaml is the one deployment recipe, and `python -m flows.deployments` serves exactly it."""

from __future__ import annotations

from pathlib import Path

import yaml

from flows.deployments import RECIPE, declared

REPO = Path(__file__).resolve().parents[2]


def test_the_recipe_lives_at_the_project_root_and_points_at_the_flow() -> None:
    assert RECIPE == REPO / "prefect.yaml"
    document = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    assert len(document["deployments"]) == 1  # one recipe, one schedule
    path, name = document["deployments"][0]["entrypoint"].split(":")
    assert (REPO / path).is_file() and f"def {name}(" in (REPO / path).read_text(encoding="utf-8")


def test_served_deployment_has_the_recipes_name_schedule_and_parameters() -> None:
    from flows.pipeline import pipeline

    spec = declared()
    assert spec["cron"] == "0 3 * * *" and spec["parameters"] == {"root": ".", "slots": 2}
    deployment = pipeline.to_deployment(name=spec["name"], cron=spec["cron"], parameters=spec["parameters"])
    assert deployment.name == "textsift-nightly"
    assert [s.schedule.cron for s in deployment.schedules] == ["0 3 * * *"]
