"""Approval: a pipeline run proposes a setting, a person moves ``@recommended`` (``textsift promote``).

The alias moves on the classifier registered for the setting and, when the setting is served, on its
privatizer (``tracking.registered_privatizer``, :mod:`textsift.serving`): ``models:/textsift-privatizer@recommended``
is the privatizer a team ships. Promoting a setting that has no privatizer removes the privatizer's alias, so
the two never name different settings.

``evaluate`` registers every corpus's model version and tags the one its rule proposes
(:mod:`textsift.evaluation.recommend`) — it never moves the alias, so a scheduled run cannot change what
consumers of ``models:/<name>@recommended`` load. Promoting names the setting and the pipeline run (the
MLflow parent run id ``make run`` prints), and needs a reason; a setting that failed the rule is refused
unless the promoter says they accept it. What is promoted is what was judged: a setting whose served form fails
the rule (``textsift.served_passes``: the service's answers leak more than the ceiling, as a ``spans: both``
setting's do, since a request carries no gold spans) has its privatizer refused on the same terms. Every move
is recorded with who, when, why and what it replaced: on the version promoted (``textsift.promoted_*``) and in
the registered model's history (``textsift.promotion.<UTC time>``). The registered model's ``textsift.promoted_version``
names the version the last promotion put ``@recommended`` on, so an alias moved any other way (the MLflow UI's
pencil: no verdict, reason or history) is told apart: ``textsift serve`` refuses it (:func:`check_promoted`).
"""

from __future__ import annotations

import getpass
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from textsift.errors import ConfigError
from textsift.tracking import PRIVATIZER_TAG, Tracker

ALIAS = "recommended"
PROMOTED = "textsift.promoted_version"  # registered-model tag: where the last `textsift promote` put @recommended


@dataclass(frozen=True)
class Promotion:
    """What a promotion did: the version now ``@recommended`` and the one it replaced (None: first)."""

    name: str
    setting: str
    version: str
    previous: str | None
    by: str
    at: str
    privatizer_version: str | None = None


def promote(tracker: Tracker, name: str, setting: str, run_id: str, reason: str,
            accept_failing: bool = False, by: str | None = None, privatizer: str | None = None) -> Promotion:
    """Point ``name@recommended`` at the version ``setting`` got in pipeline run ``run_id``; record the move.

    Raises:
        ConfigError: no reason; no such version; the setting, or the privatizer that would ship it, failed the
            recommendation rule and ``accept_failing`` is False.
    """
    if not reason.strip():
        raise ConfigError("promote: say why (--reason): every move of @recommended is recorded with its reason")
    chosen = tracker.latest_version(name, setting, run_id)
    if chosen is None:
        raise ConfigError(f"promote: no version of {name} for setting {setting!r} from run {run_id} "
                          "(the pipeline's parent run id, printed by `make run`)")
    verdict = tracker.run_tags(chosen["run_id"])
    if verdict.get("textsift.passes") != "true" and not accept_failing:
        raise ConfigError(f"promote: {setting} did not pass the recommendation rule in run {run_id} "
                          f"({verdict.get('mlflow.note.content', 'no verdict recorded')}); pass --accept-failing "
                          "to promote it anyway (the reason is recorded)")
    served = _judged_privatizer(tracker, privatizer, setting, run_id, chosen) if privatizer else None
    if served is not None and verdict.get("textsift.served_passes") != "true" and not accept_failing:
        raise ConfigError(f"promote: {setting}'s served form did not pass the recommendation rule in run {run_id} "
                          f"({verdict.get('mlflow.note.content', 'no verdict recorded')}): what would ship is not what "
                          "was judged; pass --accept-failing to promote it anyway (the reason is recorded)")
    previous = tracker.alias_version(name, ALIAS)
    who, when = by or getpass.getuser(), datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # keys the history
    tracker.set_model_alias(name, ALIAS, chosen["version"])
    tracker.tag_model(name, {PROMOTED: chosen["version"]})
    tracker.tag_model(name, {"textsift.promoted_by": who, "textsift.promoted_at": when,
                             "textsift.promotion_reason": reason, "textsift.replaced_version": previous or "none",
                             "textsift.accepted_failing": str(verdict.get("textsift.passes") != "true").lower()},
                      version=chosen["version"])
    record = {"setting": setting, "version": chosen["version"], "run": run_id, "by": who, "reason": reason,
              "replaced": previous}
    if served is not None:
        tracker.set_model_alias(privatizer, ALIAS, served["version"])
        tracker.tag_model(privatizer, {PROMOTED: served["version"]})
        tracker.tag_model(privatizer, {"textsift.promoted_by": who, "textsift.promoted_at": when,
                                       "textsift.promotion_reason": reason}, version=served["version"])
    elif privatizer:  # the setting is not served (or its run shipped none): no privatizer may stay on another one
        tracker.delete_alias(privatizer, ALIAS)
        if tracker.model_tags(privatizer):  # the registered model exists: record that no version is promoted
            tracker.tag_model(privatizer, {PROMOTED: "none"})
    record["privatizer_version"] = served["version"] if served else None
    tracker.tag_model(name, {f"textsift.promotion.{when}": json.dumps(record)})
    return Promotion(name, setting, chosen["version"], previous, who, when, served["version"] if served else None)


def _judged_privatizer(tracker: Tracker, privatizer: str, setting: str, run_id: str, classifier: dict[str, Any]
                       ) -> dict[str, Any] | None:
    """The privatizer version judged with the chosen classifier: the one ``evaluate`` named on it
    (:data:`~textsift.tracking.PRIVATIZER_TAG`, found by the digest of the corpus it released, so it may come from an
    earlier pipeline run when the outsider stage, which registers it, was taken from the cache); None when the
    setting has no served form; for a classifier registered before versions were named, the privatizer of the same
    pipeline run.

    Raises:
        ConfigError: the setting has privatizer versions, but none made the corpus judged in ``run_id`` (its
            outsider stage ran with ``tracking.log_models`` off, against another MLflow store, or before releases
            were recorded): promoting would take the alias off the privatizer and leave nothing to serve.
    """
    named = classifier["tags"].get(PRIVATIZER_TAG)
    if named is None:
        return tracker.latest_version(privatizer, setting, run_id)
    found = [v for v in tracker.model_versions(privatizer) if v["version"] == named]
    if found:
        return found[0]
    if named == "none" and tracker.latest_version(privatizer, setting) is None:
        return None  # no served form of this setting was ever registered: nothing to ship, nothing to clear
    raise ConfigError(f"promote: no version of {privatizer} for setting {setting!r} made the corpus judged in run "
                      f"{run_id}; register it again (`make run ARGS=--force`, or `dvc repro -f --single-item "
                      f"outsider@{setting}` then `dvc repro evaluate`) and promote from that run")


def check_promoted(tracker: Tracker, model_uri: str) -> None:
    """Refuse ``models:/<name>@recommended`` when the alias is not where the last ``textsift promote`` put it: it
    was moved outside promote, with no verdict, reason or history. A version named by number is the caller's choice.

    Raises:
        ConfigError: naming the version the alias points at, the one promote recorded, and what to do.
    """
    reference = model_uri.removeprefix("models:/")
    name, _, alias = reference.partition("@")
    if alias != ALIAS:
        return
    version = tracker.alias_version(name, alias)
    recorded = tracker.model_tags(name).get(PROMOTED)
    if version is not None and recorded is None:
        raise ConfigError(f"{model_uri} points at version {version}, but no `textsift promote` is recorded for "
                          f"{name} (it was set by hand, or by a textsift that did not record promotions): promote "
                          f"the setting again, or serve the version by number (models:/{name}/{version})")
    if version is not None and version != recorded:
        raise ConfigError(f"{model_uri} points at version {version}, but the last `textsift promote` put it on "
                          f"{'version ' + recorded if recorded and recorded != 'none' else 'no version'}: the alias "
                          "was moved outside promote (no verdict, reason or history). Promote a setting again, or "
                          f"serve a version by number (models:/{name}/{version})")
