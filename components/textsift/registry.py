"""The stage DAG, defined once.

``dvc.yaml`` is rendered from this registry (``textsift dvc render``) and the Prefect flow
walks the same list, so the two never drift. A stage's ``code`` lists the library files
and folders it imports: editing them re-runs the stage under ``dvc repro``. A stage with
``foreach`` fans out over the named entries of that params key (``privatize@<setting>``).

Full product DAG (stages land with their issues):
ingest -> train_detectors -> detect, train_fill_in -> build_indexes -> privatize@setting -> evaluate, and
detect, train_fill_in -> lrp_budgets -> embedding_dp@setting -> evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass

from textsift.config import Params, select
from textsift.errors import StageError

LIB = "components/textsift"
# embedding_dp keys the lrp_budgets fit reads; the settings, grid and attacker only matter downstream of it
EMBEDDING_FIT_PARAMS = ("encoder", "max_length", "batch_size", "spans", "replace_labels", "filler", "sensitivity",
                        "relevance")
COMMON_CODE = (
    f"{LIB}/config.py", f"{LIB}/corpus.py", f"{LIB}/errors.py", f"{LIB}/rng.py",
    f"{LIB}/tracking.py", f"{LIB}/locks.py", f"{LIB}/quality", f"{LIB}/stages/__init__.py",
)


@dataclass(frozen=True)
class Plot:
    """A DVC plot of a stage output (``dvc plots show``/``diff``): ``y`` against ``x`` from a CSV."""

    path: str
    x: str
    y: str
    title: str
    template: str = "scatter"


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: what it reads, which params it uses, what it writes.

    Paths may contain ``{key}``, the fan-out key of a ``foreach`` stage. ``input_params``
    are dotted params keys whose (non-null) values are input files the stage depends on.
    """

    name: str
    summary: str
    upstream: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    outs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    gpu: bool = False
    foreach: str | None = None
    input_params: tuple[str, ...] = ()
    plots: tuple[Plot, ...] = ()

    @property
    def all_code(self) -> tuple[str, ...]:
        return (*COMMON_CODE, f"{LIB}/stages/{self.name}.py", *self.code)


@dataclass(frozen=True)
class StageInstance:
    """A stage bound to one fan-out key (or none): the unit DVC, Prefect and MLflow see."""

    stage: Stage
    key: str | None = None

    @property
    def name(self) -> str:
        return f"{self.stage.name}@{self.key}" if self.key else self.stage.name

    def path(self, template: str) -> str:
        return template.replace("{key}", self.key or "")

    @property
    def outs(self) -> tuple[str, ...]:
        return tuple(self.path(p) for p in self.stage.outs)

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.path(p) for p in self.stage.metrics)


STAGES: tuple[Stage, ...] = (
    Stage(
        name="ingest",
        summary="read, validate, normalize, de-duplicate and split the corpus",
        code=(f"{LIB}/readers.py", f"{LIB}/normalize.py", f"{LIB}/validation.py", f"{LIB}/split.py",
              f"{LIB}/demo.py", f"{LIB}/interests/synthetic.py", f"{LIB}/interests/lexicon.txt"),
        params=("seed", "ingest", "quality"),
        input_params=("ingest.source.path",),
        outs=("data/ingest/corpus.parquet", "data/ingest/rejects.parquet"),
        metrics=("metrics/ingest.json",),
    ),
    Stage(
        name="train_detectors",
        summary="train the DPER nested privacy-entity detector (and the flat baseline) offline",
        upstream=("ingest",),
        deps=("data/ingest/corpus.parquet",),
        code=(f"{LIB}/detection", f"{LIB}/models", f"{LIB}/interests", f"{LIB}/readers.py", f"{LIB}/artifacts.py",
              f"{LIB}/device.py"),
        params=("seed", "device", "detectors", "tracking.log_models"),
        input_params=("detectors.data.wnut17_path", "detectors.data.btc_path"),
        outs=("models/detector.json", "models/interests.json"),
        metrics=("metrics/train_detectors.json",),
        gpu=True,
    ),
    Stage(
        name="detect",
        summary="the recognizer set (model, patterns, optionally spaCy) over the corpus; its real-text figures",
        upstream=("ingest", "train_detectors"),
        deps=("data/ingest/corpus.parquet", "models/detector.json"),
        code=(f"{LIB}/detection", f"{LIB}/models", f"{LIB}/stages/detected_spans.py", f"{LIB}/readers.py",
              f"{LIB}/artifacts.py", f"{LIB}/device.py"),
        params=("device", "detection", "detectors.data.wnut17_path", "detectors.data.wnut17_labels",
                "detectors.data.btc_path"),
        input_params=("detectors.data.wnut17_path", "detectors.data.btc_path"),
        outs=("data/detected/spans.parquet",),
        metrics=("metrics/detect.json",),
        gpu=True,
    ),
    Stage(
        name="train_fill_in",
        summary="train the WordPiece tokenizer and masked LM of DataSifterText on the training split",
        upstream=("ingest",),
        deps=("data/ingest/corpus.parquet",),
        code=(f"{LIB}/models", f"{LIB}/artifacts.py", f"{LIB}/device.py"),
        params=("seed", "device", "fill_in", "tracking.log_models"),
        outs=("models/fill_in.json",),
        metrics=("metrics/train_fill_in.json",),
        gpu=True,
    ),
    Stage(
        name="build_indexes",
        summary="embeddings, seeded projection and Annoy index per embedding source; geometry experiments",
        upstream=("ingest", "train_fill_in"),
        deps=("data/ingest/corpus.parquet", "models/fill_in.json"),
        code=(f"{LIB}/embeddings", f"{LIB}/indexes", f"{LIB}/mechanisms/metric_dp", f"{LIB}/evaluation/geometry.py",
              f"{LIB}/evaluation/plots_geometry.py", f"{LIB}/tokenize.py", f"{LIB}/artifacts.py", f"{LIB}/device.py"),
        params=("seed", "device", "indexes.geometry"),
        outs=("data/indexes/{key}",),
        metrics=("metrics/build_indexes/{key}.json",),
        gpu=True,
        foreach="indexes.sources",
    ),
    Stage(
        name="privatize",
        summary="apply one named privacy setting to the corpus (DataSifterText, metric-DP or redact)",
        upstream=("ingest", "train_detectors", "detect", "train_fill_in", "build_indexes"),
        deps=("data/ingest/corpus.parquet", "data/detected/spans.parquet", "models/fill_in.json"),
        code=(f"{LIB}/mechanisms", f"{LIB}/models", f"{LIB}/detection", f"{LIB}/indexes", f"{LIB}/embeddings",
              f"{LIB}/tokenize.py",
              f"{LIB}/evaluation/privacy.py", f"{LIB}/stages/privatize_datasifter.py",
              f"{LIB}/stages/privatize_metric_dp.py", f"{LIB}/stages/privatize_redact.py",
              f"{LIB}/stages/detected_spans.py", f"{LIB}/artifacts.py", f"{LIB}/device.py"),
        params=("seed", "device", "privatize.production", "detection"),
        outs=("data/privatized/{key}.parquet",),
        metrics=("metrics/privatize/{key}.json",),
        gpu=True,
        foreach="privatize.settings",
    ),
    Stage(
        name="lrp_budgets",
        summary="embed the corpus (task-irrelevant sensitive words filled); per-dimension sensitivity, LRP relevance",
        upstream=("ingest", "train_detectors", "detect", "train_fill_in"),
        deps=("data/ingest/corpus.parquet", "data/detected/spans.parquet", "models/fill_in.json"),
        code=(f"{LIB}/budgets", f"{LIB}/detection", f"{LIB}/models", f"{LIB}/stages/detected_spans.py",
              f"{LIB}/evaluation/utility.py",
              f"{LIB}/embeddings/locate.py", f"{LIB}/mechanisms/protected_spans.py", f"{LIB}/tokenize.py",
              f"{LIB}/artifacts.py", f"{LIB}/device.py"),
        params=("seed", "device", "detection", *(f"embedding_dp.{k}" for k in EMBEDDING_FIT_PARAMS)),
        outs=("data/lrp_budgets",),
        metrics=("metrics/lrp_budgets.json",),
        gpu=True,
    ),
    Stage(
        name="embedding_dp",
        summary="publish one set of noisy sentence embeddings: per-dimension budgets, Laplace noise, manifest",
        upstream=("lrp_budgets",),
        deps=("data/lrp_budgets",),
        code=(f"{LIB}/budgets", f"{LIB}/evaluation/utility.py", f"{LIB}/stages/lrp_budgets.py",
              f"{LIB}/embeddings/locate.py"),
        params=("seed", "privatize.production", "embedding_dp.encoder", "embedding_dp.relevance", "embedding_dp.grid"),
        outs=("data/embeddings/{key}.parquet", "data/embeddings/{key}.manifest.json"),
        metrics=("metrics/embedding_dp/{key}.json",),
        foreach="embedding_dp.settings",
    ),
    Stage(
        name="evaluate",
        summary="utility of classifiers trained on each corpus: the privacy-utility frontier",
        upstream=("ingest", "train_detectors", "detect", "train_fill_in", "privatize", "embedding_dp"),
        deps=("data/ingest/corpus.parquet", "models/detector.json", "models/interests.json", "models/fill_in.json",
              "data/lrp_budgets", "metrics/detect.json"),
        code=(f"{LIB}/evaluation", f"{LIB}/models", f"{LIB}/interests", f"{LIB}/budgets",
              f"{LIB}/stages/evaluate_embeddings.py",
              f"{LIB}/stages/embedding_dp.py", f"{LIB}/stages/lrp_budgets.py", f"{LIB}/embeddings/locate.py",
              f"{LIB}/artifacts.py",
              f"{LIB}/device.py"),
        params=("seed", "device", "evaluate", "report", "privatize.settings", "embedding_dp", "tracking.log_models",
                "tracking.registered_model"),
        outs=("reports/evaluate/utility.csv", "reports/evaluate/frontier.csv", "reports/evaluate/frontier.png",
              "reports/evaluate/leaks.csv",
              "reports/evaluate/embedding_dp.csv", "reports/evaluate/embedding_dp.png", "reports/evaluate/report.html"),
        metrics=("metrics/evaluate.json", "metrics/evaluate_embeddings.json"),
        plots=(Plot("reports/evaluate/frontier.csv", x="leak_rate", y="utility",
                    title="Privacy-utility frontier (one point per setting)"),
               Plot("reports/evaluate/embedding_dp.csv", x="epsilon_max", y="utility",
                    title="Noisy sentence embeddings: utility vs epsilon_max")),
    ),
)


def get_stage(name: str) -> Stage:
    for stage in STAGES:
        if stage.name == name:
            return stage
    known = ", ".join(s.name for s in STAGES)
    raise StageError(f"unknown stage {name!r}; known stages: {known}")


def instances(params: Params) -> list[StageInstance]:
    """Every stage instance in topological order (fan-out stages expanded from params)."""
    out: list[StageInstance] = []
    for stage in STAGES:
        if stage.foreach:
            keys = sorted(select(params, stage.foreach))
            out.extend(StageInstance(stage, key) for key in keys)
        else:
            out.append(StageInstance(stage))
    return out


def upstream_instances(instance: StageInstance, params: Params) -> list[StageInstance]:
    """The instances an instance waits for (all instances of each upstream stage)."""
    names = set(instance.stage.upstream)
    return [i for i in instances(params) if i.stage.name in names]
