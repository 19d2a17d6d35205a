"""attack: what an adversary still recovers from the original corpus and from each privatized one (METHODS.md §5).

Runs the attackers of :mod:`~textsift.evaluation.attackers` (the detector, the IPI interest model, text
re-identification, cross-document name disclosure) on the original test split and on each setting's, reading each
privatized corpus once, and counts the test split's leaked gold spans by type
(:mod:`~textsift.evaluation.leak_breakdown`). Its own stage so that evaluate, which judges, does not load the
attackers' models and re-runs no attack when only the classifiers or the report change.

Outputs ``metrics/attacks.json`` (per corpus, ``original`` included: every attack figure) and
``reports/evaluate/leaks.csv``.
"""

from __future__ import annotations

from typing import Any

from textsift.corpus import spans_to_python, split_rows
from textsift.evaluation.attackers import Attackers
from textsift.evaluation.leak_breakdown import leak_breakdown
from textsift.evaluation.privacy import leak_counts
from textsift.quality.privatized import check_privatized
from textsift.quality.suites import check_corpus
from textsift.stage_context import StageContext


def run(ctx: StageContext) -> None:
    """Attack the original test split, then each privatized corpus; write ``attack_metrics`` and ``leaks``."""
    corpus = ctx.load("corpus")
    check_corpus(corpus, name="attack_input").raise_if_failed()
    test = split_rows(corpus, "test")
    attackers = Attackers.load(ctx, test, split_rows(corpus, "train"))
    originals = test["text"].tolist()
    attacks: dict[str, dict[str, float]] = {"original": attackers.original()}
    counts: dict[str, Any] = {"original": leak_counts(originals, attackers.spans, originals)}
    everything, everything_spans = corpus["text"].tolist(), [spans_to_python(s) for s in corpus["spans"]]
    for key in sorted(ctx.params.privatize.settings):
        privatized = ctx.load("privatized", key)  # the one read of this corpus
        check_privatized(corpus, privatized, name=f"attack_input_{key}").raise_if_failed()
        texts = split_rows(privatized, "test")["text"].tolist()
        attacks[key] = attackers.privatized(key, texts)
        if ctx.load("release_manifest", key)["fills_from_corpus"]:  # else: a match is by chance
            attacks[key].update(attackers.cross_document(key, everything, everything_spans,
                                                         privatized["text"].tolist()))
        counts[key] = leak_counts(originals, attackers.spans, texts)
    attackers.summary(attacks["original"])
    for key, attack in attacks.items():
        ctx.log_metrics({f"{key}.{name}": value for name, value in attack.items()})
    ctx.save("attack_metrics", attacks)
    ctx.save("leaks", leak_breakdown(counts, ctx.params.evaluate.bootstrap, ctx.params.seed))
