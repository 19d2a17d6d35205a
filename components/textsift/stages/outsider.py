"""outsider@<setting>: what someone without the secret key gets from one setting's release, and its service shipped.

The outsider holds the repository, the params, the published corpus and, for a served setting, an API token
(:mod:`textsift.privatization.attacks`): it replays the mechanism under the public seed, recomputes stand-ins of
candidate names and, against the service, probes names under published ids; the service's own answers on the test
documents give the served leak. A servable setting's privatizer is registered here
(:mod:`textsift.privatization.shipping`), the service these probes measured. Apart from ``privatize`` so that stage
runs its mechanism once, and only this one carries the recognizers and the served model among its code deps.

Outputs: ``metrics/outsider/<setting>.json`` (``attack.replay.*``, ``attack.dictionary.*``, ``attack.oracle.*``,
``served.leak.*``), read by evaluate beside the setting's privatize metrics.
"""

from __future__ import annotations

import logging

from textsift.errors import StageError
from textsift.mechanisms.registry import mechanism
from textsift.privatization.attacks import outsider_metrics
from textsift.privatization.corpus import documents
from textsift.privatization.resources import StageResources
from textsift.privatization.shipping import ship_privatizer
from textsift.serving.service import servable
from textsift.stage_context import StageContext

log = logging.getLogger("textsift")


def run(ctx: StageContext) -> None:
    """Attack setting ``ctx.instance.key``'s published corpus as an outsider, on the test split; write and log
    ``outsider_metrics``; register the setting's privatizer when it is servable and models are logged."""
    key = ctx.instance.key or ""
    setting, corpus, published = ctx.params.privatize.settings[key], ctx.load("corpus"), ctx.load("privatized", key)
    if published["doc_id"].tolist() != corpus["doc_id"].tolist():
        raise StageError(f"outsider@{key}: the published corpus is not the corpus's documents in its order: "
                         f"run privatize@{key} again")
    resources = StageResources(ctx)  # the service detects every request: texts the detect stage never saw
    test = (corpus["split"] == "test").to_numpy()
    metrics = outsider_metrics(documents(corpus), published["text"].tolist(), test, key, setting, resources,
                               ctx.params.seed, ctx.secret_key)
    ctx.save("outsider_metrics", metrics)
    ctx.log_metrics(metrics)
    ctx.tracker.set_tags(ctx.run_id, {"textsift.mechanism": setting.kind, "textsift.setting": key})
    if ctx.tracker.params.log_models and servable(mechanism(setting.kind), setting, ctx.params):
        ship_privatizer(ctx, key, setting)
    log.info("outsider@%s: replay gain %.3f%s", key, metrics.get("attack.replay.gain", float("nan")),
             f", served leak {metrics['served.leak.rate']:.3f}" if "served.leak.rate" in metrics else "")
