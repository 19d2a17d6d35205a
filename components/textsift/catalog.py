"""The artifact catalog: every file or folder a stage writes, declared once with its path and producer.

Stages name what they read and write by these names (:mod:`textsift.registry`); DVC deps and
outs, the flow cache's digests, ``StageContext.input``/``output`` and the prerequisites that the
ad-hoc commands build (:mod:`textsift.prerequisites`) are all derived from here, so a path is
written in exactly one place. A ``{key}`` in a path is the fan-out key of its producer
(``privatized@<setting>``: ``data/privatized/<setting>.parquet``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from textsift.errors import StageError


@dataclass(frozen=True)
class Artifact:
    """One output: its name, its path relative to the project root, the stage that writes it.

    Attributes:
        name: what stages and commands call it (``corpus``, ``privatized``, ...).
        path: relative path, ``{key}`` standing for the producer's fan-out key.
        producer: the stage that writes it.
        metrics: a DVC metrics file (``cache: false``) rather than a cached output.
        persist: DVC keeps it while the producer runs (``persist: true``) instead of deleting it first.
        form: what is inside and how ``ctx.load``/``ctx.save`` read and write it (:mod:`textsift.dataset_forms`);
            for an artifact its own package reads and writes (a model pointer, an index folder), that package;
            by default ``metrics`` for a metrics file, ``table`` (Parquet) otherwise.
    """

    name: str
    path: str
    producer: str
    metrics: bool = False
    persist: bool = False
    form: str = ""

    @property
    def form_name(self) -> str:
        """The artifact's form: as declared, else ``metrics`` for a metrics file and ``table`` otherwise."""
        return self.form or ("metrics" if self.metrics else "table")

    @property
    def keyed(self) -> bool:
        """Whether the path holds ``{key}``: the producer writes one per fan-out key."""
        return "{key}" in self.path

    def at(self, key: str | None = None) -> str:
        """The path of this artifact for fan-out ``key``."""
        if self.keyed and not key:
            raise StageError(f"artifact {self.name} is written per {self.producer} key: name the key")
        return self.path.replace("{key}", key or "")


ARTIFACTS: tuple[Artifact, ...] = (
    # the secret key's fingerprint (textsift.secret_key): the key stage must see the last one to tell a lost key
    Artifact("key_fingerprint", ".textsift/key.fingerprint", "key", persist=True, form="textsift.secret_key"),
    Artifact("corpus", "data/ingest/corpus.parquet", "ingest", form="corpus"),
    Artifact("rejects", "data/ingest/rejects.parquet", "ingest"),
    Artifact("ingest_metrics", "metrics/ingest.json", "ingest", metrics=True),
    Artifact("detector", "models/detector.json", "train_detectors", form="textsift.artifacts"),
    Artifact("train_detectors_metrics", "metrics/train_detectors.json", "train_detectors", metrics=True),
    Artifact("interests", "models/interests.json", "train_interests", form="textsift.artifacts"),
    Artifact("train_interests_metrics", "metrics/train_interests.json", "train_interests", metrics=True),
    Artifact("detected", "data/detected/spans.parquet", "detect", form="textsift.detection.spans_file"),
    Artifact("detect_metrics", "metrics/detect.json", "detect", metrics=True),
    Artifact("fill_in", "models/fill_in.json", "train_fill_in", form="textsift.artifacts"),
    Artifact("train_fill_in_metrics", "metrics/train_fill_in.json", "train_fill_in", metrics=True),
    Artifact("index", "data/indexes/{key}", "build_indexes", form="textsift.indexes.store"),
    Artifact("index_metrics", "metrics/build_indexes/{key}.json", "build_indexes", metrics=True),
    Artifact("privatized", "data/privatized/{key}.parquet", "privatize", form="corpus"),
    Artifact("privatize_metrics", "metrics/privatize/{key}.json", "privatize", metrics=True),
    # what produced the release and whether its setting is served (why not): public, read by evaluate
    Artifact("release_manifest", "data/privatized/{key}.manifest.json", "privatize", form="json"),
    # which original each pseudonym replaced, sealed with the secret key; empty without `vault: true`; never published
    Artifact("vault", "data/vault/{key}.bin", "privatize", form="blob"),
    Artifact("ledger", "data/ledger/{key}.parquet", "privatize"),  # the ε each document spent (null: not DP)
    # what an outsider recomputes from a release and learns from its service (replay, dictionary, oracle, served leak)
    Artifact("outsider_metrics", "metrics/outsider/{key}.json", "outsider", metrics=True),
    Artifact("budgets", "data/lrp_budgets", "lrp_budgets", form="textsift.budgets.fit_store"),
    Artifact("lrp_budgets_metrics", "metrics/lrp_budgets.json", "lrp_budgets", metrics=True),
    Artifact("noisy_embeddings", "data/embeddings/{key}.parquet", "embedding_dp"),
    Artifact("embedding_manifest", "data/embeddings/{key}.manifest.json", "embedding_dp", form="json"),
    Artifact("embedding_dp_metrics", "metrics/embedding_dp/{key}.json", "embedding_dp", metrics=True),
    # per corpus (the original included) every attack figure; the leaked gold spans of the test split by type
    Artifact("attack_metrics", "metrics/attacks.json", "attack", metrics=True, form="json"),
    Artifact("leaks", "reports/evaluate/leaks.csv", "attack", form="csv"),
    Artifact("embedding_table", "reports/evaluate/embedding_dp.csv", "evaluate_embeddings", form="csv"),
    Artifact("embedding_plot", "reports/evaluate/embedding_dp.png", "evaluate_embeddings", form="blob"),
    Artifact("evaluate_embeddings_metrics", "metrics/evaluate_embeddings.json", "evaluate_embeddings", metrics=True,
             form="json"),
    Artifact("utility_table", "reports/evaluate/utility.csv", "evaluate", form="csv"),
    Artifact("frontier", "reports/evaluate/frontier.csv", "evaluate", form="csv"),
    Artifact("frontier_plot", "reports/evaluate/frontier.png", "evaluate", form="blob"),
    Artifact("report", "reports/evaluate/report.html", "evaluate", form="blob"),
    Artifact("evaluate_metrics", "metrics/evaluate.json", "evaluate", metrics=True, form="json"),
    # the proposal and each setting's verdict figures, small enough for `dvc metrics show/diff metrics/frontier.json`
    Artifact("frontier_metrics", "metrics/frontier.json", "evaluate", metrics=True, form="json"),
)
_BY_NAME = {a.name: a for a in ARTIFACTS}


def artifact(name: str) -> Artifact:
    """The catalog entry ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise StageError(f"unknown artifact {name!r}; known: {', '.join(_BY_NAME)}") from None


def path(name: str, key: str | None = None) -> str:
    """The relative path of artifact ``name`` (for fan-out ``key``)."""
    return artifact(name).at(key)


def needed_keys(needs: Iterable[tuple[str, str | None]], name: str) -> tuple[str, ...]:
    """The keys at which a setting's ``needs()`` name the keyed artifact ``name`` (a metric-DP setting's index)."""
    return tuple(key for needed, key in needs if needed == name and key is not None)


def written_by(stage: str) -> tuple[Artifact, ...]:
    """The artifacts ``stage`` writes, in catalog order."""
    return tuple(a for a in ARTIFACTS if a.producer == stage)


def stage_names() -> tuple[str, ...]:
    """Every stage that writes an artifact, in catalog order (every registered stage does: the registry checks)."""
    return tuple(dict.fromkeys(a.producer for a in ARTIFACTS))
