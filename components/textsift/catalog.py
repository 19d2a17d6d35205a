"""The artifact catalog: every file or folder a stage writes, declared once with its path and producer.

Stages name what they read and write by these names (:mod:`textsift.registry`); DVC deps and
outs, the flow cache's digests, ``StageContext.input``/``output`` and the prerequisites that the
ad-hoc commands build (:mod:`textsift.prerequisites`) are all derived from here, so a path is
written in exactly one place. A ``{key}`` in a path is the fan-out key of its producer
(``privatized@<setting>``: ``data/privatized/<setting>.parquet``).
"""

from __future__ import annotations

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
    """

    name: str
    path: str
    producer: str
    metrics: bool = False
    persist: bool = False

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
    Artifact("key_fingerprint", ".textsift/key.fingerprint", "key", persist=True),
    Artifact("corpus", "data/ingest/corpus.parquet", "ingest"),
    Artifact("rejects", "data/ingest/rejects.parquet", "ingest"),
    Artifact("ingest_metrics", "metrics/ingest.json", "ingest", metrics=True),
    Artifact("detector", "models/detector.json", "train_detectors"),
    Artifact("train_detectors_metrics", "metrics/train_detectors.json", "train_detectors", metrics=True),
    Artifact("interests", "models/interests.json", "train_interests"),
    Artifact("train_interests_metrics", "metrics/train_interests.json", "train_interests", metrics=True),
    Artifact("detected", "data/detected/spans.parquet", "detect"),
    Artifact("detect_metrics", "metrics/detect.json", "detect", metrics=True),
    Artifact("fill_in", "models/fill_in.json", "train_fill_in"),
    Artifact("train_fill_in_metrics", "metrics/train_fill_in.json", "train_fill_in", metrics=True),
    Artifact("index", "data/indexes/{key}", "build_indexes"),
    Artifact("index_metrics", "metrics/build_indexes/{key}.json", "build_indexes", metrics=True),
    Artifact("privatized", "data/privatized/{key}.parquet", "privatize"),
    Artifact("privatize_metrics", "metrics/privatize/{key}.json", "privatize", metrics=True),
    # which original each pseudonym replaced, sealed with the secret key; empty without `vault: true`; never published
    Artifact("vault", "data/vault/{key}.bin", "privatize"),
    Artifact("ledger", "data/ledger/{key}.parquet", "privatize"),  # the ε each document spent (null: not DP)
    Artifact("budgets", "data/lrp_budgets", "lrp_budgets"),
    Artifact("lrp_budgets_metrics", "metrics/lrp_budgets.json", "lrp_budgets", metrics=True),
    Artifact("noisy_embeddings", "data/embeddings/{key}.parquet", "embedding_dp"),
    Artifact("embedding_manifest", "data/embeddings/{key}.manifest.json", "embedding_dp"),
    Artifact("embedding_dp_metrics", "metrics/embedding_dp/{key}.json", "embedding_dp", metrics=True),
    Artifact("utility_table", "reports/evaluate/utility.csv", "evaluate"),
    Artifact("frontier", "reports/evaluate/frontier.csv", "evaluate"),
    Artifact("frontier_plot", "reports/evaluate/frontier.png", "evaluate"),
    Artifact("leaks", "reports/evaluate/leaks.csv", "evaluate"),
    Artifact("embedding_table", "reports/evaluate/embedding_dp.csv", "evaluate"),
    Artifact("embedding_plot", "reports/evaluate/embedding_dp.png", "evaluate"),
    Artifact("report", "reports/evaluate/report.html", "evaluate"),
    Artifact("evaluate_metrics", "metrics/evaluate.json", "evaluate", metrics=True),
    Artifact("evaluate_embeddings_metrics", "metrics/evaluate_embeddings.json", "evaluate", metrics=True),
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


def written_by(stage: str) -> tuple[Artifact, ...]:
    """The artifacts ``stage`` writes, in catalog order."""
    return tuple(a for a in ARTIFACTS if a.producer == stage)


def stage_names() -> tuple[str, ...]:
    """Every stage that writes an artifact, in catalog order (every registered stage does: the registry checks)."""
    return tuple(dict.fromkeys(a.producer for a in ARTIFACTS))
