"""The stage DAG, defined once.

``dvc.yaml`` is rendered from this registry (``textsift dvc render``) and the Prefect flow
walks the same list, so the two never drift. A stage's code deps are computed: the
import closure of ``stages/<name>.py`` inside ``textsift`` (:mod:`textsift.code_deps`), so editing any
module it can run re-runs the stage under ``dvc repro`` and the flow's cache. A stage with
``foreach`` fans out over the named entries of that params key (``privatize@<setting>``).

Full product DAG (stages land with their issues):
ingest -> train_fill_in -> train_detectors (when its encoder is the fill-in model) -> detect,
train_fill_in -> build_indexes -> privatize@setting -> outsider@setting, attack -> evaluate, and
detect, train_fill_in -> lrp_budgets -> embedding_dp@setting -> evaluate_embeddings -> evaluate, and
train_interests (no input) -> attack -> evaluate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textsift.catalog import artifact, needed_keys, written_by
from textsift.catalog import path as catalog_path
from textsift.code_deps import stage_code
from textsift.config import Params, select
from textsift.errors import StageError
from textsift.mechanisms.registry import implementation_modules, setting_modules

# embedding_dp keys the lrp_budgets fit reads; the settings, grid and attacker only matter downstream of it
EMBEDDING_FIT_PARAMS = ("encoder", "max_length", "batch_size", "spans", "replace_labels", "filler", "sensitivity",
                        "relevance")


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
    """One pipeline stage: the artifacts it reads, the params it uses; it writes its catalog entries.

    ``reads`` names catalog artifacts (:mod:`textsift.catalog`): a keyed one (``privatized``) means
    every instance of it. The upstream stages, DVC deps and outs and the flow cache's digests all
    derive from ``reads``, the catalog and the computed code deps. ``input_params`` are dotted params
    keys whose (non-null) values are input files the stage depends on.
    """

    name: str
    summary: str
    reads: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    gpu: bool = False
    foreach: str | None = None
    input_params: tuple[str, ...] = ()
    plots: tuple[Plot, ...] = ()
    unneeded: Callable[[Params, str | None], tuple[str, ...]] | None = None  # reads an instance can do without
    loads: tuple[str, ...] = ()  # modules the stage imports by name (mechanisms by kind): code deps too
    loads_for: Callable[[Params, str], tuple[str, ...]] | None = None  # ... those one instance imports
    params_for: Callable[[Params, str], tuple[str, ...]] | None = None  # params keys one instance reads beyond these
    read_keys: Callable[[Params, str], dict[str, tuple[str, ...]]] | None = None  # keyed reads one instance narrows
    always: bool = False  # runs every time (DVC always_changed; never from the flow's stage cache)

    @property
    def keyed(self) -> bool:
        """Whether the stage draws what it releases with the project's secret key (it reads its fingerprint)."""
        return "key_fingerprint" in self.reads

    @property
    def upstream(self) -> tuple[str, ...]:
        """The stages that write what this stage reads."""
        return tuple(dict.fromkeys(artifact(name).producer for name in self.reads))

    @property
    def outs(self) -> tuple[str, ...]:
        """Paths of the catalog artifacts the stage writes that DVC caches (its outs; metrics files excluded)."""
        return tuple(a.path for a in written_by(self.name) if not a.metrics)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Paths of the stage's DVC metrics files (``cache: false``, kept by git)."""
        return tuple(a.path for a in written_by(self.name) if a.metrics)

    def reads_for(self, params: Params, key: str | None = None) -> tuple[str, ...]:
        """What one instance reads: ``reads``, narrowed where the instance's params say so (an index built
        without the fill-in model, a detector trained on its own encoder)."""
        skipped = self.unneeded(params, key) if self.unneeded is not None else ()
        return tuple(name for name in self.reads if name not in skipped)

    def keys_read(self, params: Params, key: str | None, name: str) -> tuple[str, ...] | None:
        """The keys of keyed read ``name`` that instance ``key`` reads (its setting's ``needs()``: a metric-DP
        setting reads its own index, not every index); None when it reads every key."""
        return self.read_keys(params, key).get(name) if self.read_keys is not None and key is not None else None

    def instance_needs(self, params: Params, key: str | None = None) -> tuple[tuple[str, str | None], ...]:
        """What one instance needs to run ad hoc (:mod:`textsift.prerequisites`): its non-keyed reads."""
        return tuple((name, None) for name in self.reads_for(params, key) if not artifact(name).keyed)

    @property
    def all_code(self) -> tuple[str, ...]:
        """The library files the stage's module imports, transitively (:func:`textsift.code_deps.stage_code`), and
        every module it loads by name: what any of its instances may run."""
        return stage_code(self.name, self.loads)

    def code(self, params: Params, key: str | None = None) -> tuple[str, ...]:
        """The library files one instance runs: the stage module's import closure and what that instance loads by
        name (a privatize setting: its own mechanism, not the others'); every instance's without ``key``."""
        if key is None or self.loads_for is None:
            return self.all_code
        return stage_code(self.name, self.loads_for(params, key))


# What a setting's needs() bring with them: the detector's spans file, an index's metrics.
_NEEDS_ALSO = {"detector": ("detected",), "index": ("index_metrics",)}


def _unneeded_by_setting(params: Params, key: str | None) -> tuple[str, ...]:
    """The privatize reads a setting can do without: the models, indexes and spans its ``needs()`` leave out. So a
    setting that needs neither the detector nor the spans runs (and stays cached) whatever becomes of them: in the
    flow, DataSifterText without detection and metric-DP run while the detector trains."""
    if key is None:
        return ()
    needed = {name for name, _ in params.privatize.settings[key].needs()}
    needed |= {extra for name in needed for extra in _NEEDS_ALSO.get(name, ())}
    return tuple(name for name in ("detected", "detector", "fill_in", "index", "index_metrics") if name not in needed)


def _ships(params: Params, key: str) -> bool:
    """Whether privatize setting ``key`` is served, so its outsider stage packs a served model (which detects)."""
    from textsift.mechanisms.registry import mechanism
    from textsift.serving.service import servable

    setting = params.privatize.settings[key]
    return servable(mechanism(setting.kind), setting, params)


def _privatize_loads(params: Params, key: str) -> tuple[str, ...]:
    """What a privatize instance imports by name: its setting's mechanism and the loaders of what it needs, reading
    the detect stage's spans without its recognizers."""
    from textsift.privatization.loaders import loader_modules

    setting = params.privatize.settings[key]
    return (*setting_modules(setting, params), *loader_modules(setting.needs(), detects_unseen=False))


def _outsider_loads(params: Params, key: str) -> tuple[str, ...]:
    """What an outsider instance imports by name: its setting's mechanism, the loaders of what it needs with the
    recognizers (its probes are texts the detect stage never saw) and, for a setting that ships, the served model's
    module, whose code it packs as it is when the stage runs
    (:func:`textsift.privatization.shipping.ship_privatizer`)."""
    from textsift.privatization.loaders import loader_modules
    from textsift.serving.packing import MODEL_MODULE

    setting = params.privatize.settings[key]
    ships = (MODEL_MODULE,) if _ships(params, key) else ()
    return (*setting_modules(setting, params), *loader_modules(setting.needs()), *ships)


def _privatize_read_keys(params: Params, key: str) -> dict[str, tuple[str, ...]]:
    """The keyed artifacts a setting names in its ``needs()`` (its index), with what comes along (the index's
    metrics): those keys only, so adding or rebuilding another index re-runs none of its settings."""
    needs = params.privatize.settings[key].needs()
    named = {name: needed_keys(needs, name) for name, index in needs if index is not None}
    return {**named, **{also: keys for name, keys in named.items() for also in _NEEDS_ALSO.get(name, ())}}


def _privatize_params(params: Params, key: str) -> tuple[str, ...]:
    """The params one privatize setting reads beyond the seed and the device, so editing another's re-runs none of it:
    the index source it privatizes with (whether it is a public vocabulary decides whether the setting ships, written
    in its manifest) and the geometry it measures deniability with, when it has an index. Not detection: its spans
    are the detect stage's, whose output changes when detection does."""
    indexes = needed_keys(params.privatize.settings[key].needs(), "index")
    return (*(f"indexes.sources.{index}" for index in indexes), *(("indexes.geometry",) if indexes else ()))


def _outsider_params(params: Params, key: str) -> tuple[str, ...]:
    """The params one outsider instance reads beyond the seed and the device: its setting's (:func:`_privatize_params`)
    and, when it detects or ships, detection and the view the recognizers read (``ingest.normalize``): its probes are
    detected anew, and a served model detects every request and packs them
    (:func:`textsift.serving.packing.spec`)."""
    detects = any(name == "detector" for name, _ in params.privatize.settings[key].needs()) or _ships(params, key)
    return (*_privatize_params(params, key), *(("detection", "ingest.normalize") if detects else ()))


def _privatize_loads_any() -> tuple[str, ...]:
    """What any privatize instance may import by name: every mechanism and every loader of stored artifacts."""
    from textsift.privatization.loaders import LOADERS

    return (*implementation_modules(), *dict.fromkeys(m for modules in LOADERS.values() for m in modules))


def _outsider_loads_any() -> tuple[str, ...]:
    """What any outsider instance may import by name: privatize's, the recognizers and the served model's module."""
    from textsift.privatization.loaders import RECOGNIZERS
    from textsift.serving.packing import MODEL_MODULE

    return (*_privatize_loads_any(), *RECOGNIZERS, MODEL_MODULE)


@dataclass(frozen=True)
class StageInstance:
    """A stage bound to one fan-out key (or none): the unit DVC, Prefect and MLflow see."""

    stage: Stage
    key: str | None = None

    @property
    def name(self) -> str:
        """``stage@key`` for a fan-out instance, else the stage's name: what DVC, Prefect and MLflow call it."""
        return f"{self.stage.name}@{self.key}" if self.key else self.stage.name

    def path(self, template: str) -> str:
        """``template`` with ``{key}`` replaced by this instance's key."""
        return template.replace("{key}", self.key or "")

    @property
    def outs(self) -> tuple[str, ...]:
        """The stage's outs at this instance's key."""
        return tuple(self.path(p) for p in self.stage.outs)

    def declared_params(self, params: Params) -> tuple[str, ...]:
        """The params keys the instance may read: the stage's, its input files', its own fan-out entry and what its
        entry names (``Stage.params_for``: a metric-DP setting's index source)."""
        own = (f"{self.stage.foreach}.{self.key}",) if self.stage.foreach and self.key else ()
        return (*self.stage.params, *self.stage.input_params, *own, *self.own_params(params))

    def own_params(self, params: Params) -> tuple[str, ...]:
        """The params keys this fan-out instance reads beyond the stage's and its own entry (``Stage.params_for``)."""
        return self.stage.params_for(params, self.key) if self.stage.params_for and self.key else ()

    @property
    def metrics(self) -> tuple[str, ...]:
        """The stage's metrics files at this instance's key."""
        return tuple(self.path(p) for p in self.stage.metrics)


STAGES: tuple[Stage, ...] = (
    Stage(
        name="key",
        summary="the project's secret key: made on a fresh project, its fingerprint recorded; a lost key is an error",
        always=True,
    ),
    Stage(
        name="ingest",
        summary="read, validate, de-duplicate and split the corpus (its text kept as given)",
        params=("seed", "ingest", "quality"),
        input_params=("ingest.source.path",),
    ),
    Stage(
        name="train_fill_in",
        summary="train the WordPiece tokenizer and masked LM of DataSifterText on the training split",
        reads=("corpus",),
        params=("seed", "device", "fill_in", "tracking.log_models", "ingest.source.kind"),  # demo: may be cached
        gpu=True,
    ),
    Stage(
        name="train_detectors",
        summary="train the DPER nested privacy-entity detector (and the flat baseline) offline",
        reads=("corpus", "fill_in"),
        params=("seed", "device", "detectors.data", "detectors.model", "detectors.compare_flat", "detectors.pretrain",
                "detectors.calibration", "detection.inference_precision", "tracking.log_models",
                "ingest.source.kind"),  # demo: may be cached
        input_params=("detectors.data.wnut17_path", "detectors.data.btc_path", "detectors.data.gum_path"),
        gpu=True,
        unneeded=lambda params, key: () if params.detectors.model.encoder == "fill_in" else ("fill_in",),
    ),
    Stage(
        name="train_interests",
        summary="train the IPI interest attacker (UniLM over MiniLM's first layers) on seeded synthetic posts",
        params=("seed", "device", "detectors.interests"),
        gpu=True,
    ),
    Stage(
        name="detect",
        summary="the recognizer set (model, patterns, optionally spaCy) over the corpus; its real-text figures",
        reads=("corpus", "detector"),
        # ingest.normalize: the view the recognizers read (textsift.normalize.model_view)
        params=("device", "detection", "ingest.normalize", "detectors.data.wnut17_path",
                "detectors.data.wnut17_labels", "detectors.data.btc_path", "detectors.data.gum_path",
                "detectors.data.corpus_labels"),
        input_params=("detectors.data.wnut17_path", "detectors.data.btc_path", "detectors.data.gum_path"),
        gpu=True,
    ),
    Stage(
        name="build_indexes",
        summary="embeddings, seeded projection and Annoy index per embedding source; geometry experiments",
        reads=("corpus", "fill_in"),
        params=("seed", "device", "indexes.geometry"),
        gpu=True,
        foreach="indexes.sources",
        unneeded=lambda params, key: () if params.indexes.sources[key].model_path == "fill_in" else ("fill_in",),
    ),
    Stage(
        name="privatize",
        summary="apply one named privacy setting to the corpus (DataSifterText, metric-DP or redact)",
        # every document's spans from the detect stage's file: no detector (PRIVATIZE_FILE detects new texts)
        reads=("key_fingerprint", "corpus", "detected", "fill_in", "index", "index_metrics"),
        # each setting's own: its index source and geometry (_privatize_params)
        params=("seed", "device"),
        gpu=True,
        foreach="privatize.settings",
        loads=_privatize_loads_any(),
        loads_for=lambda params, key: _privatize_loads(params, key),
        params_for=lambda params, key: _privatize_params(params, key),
        read_keys=lambda params, key: _privatize_read_keys(params, key),
        unneeded=lambda params, key: _unneeded_by_setting(params, key),
    ),
    Stage(
        name="outsider",
        summary="what an outsider gets from one setting's release and service (replays, stand-ins, an API token's "
                "probes); registers the servable setting's privatizer",
        reads=("key_fingerprint", "corpus", "privatized", "detected", "detector", "fill_in", "index", "index_metrics"),
        # each setting's own: its index source and geometry, detection and the recognizers' view (_outsider_params)
        params=("seed", "device"),
        gpu=True,
        foreach="privatize.settings",
        loads=_outsider_loads_any(),
        loads_for=lambda params, key: _outsider_loads(params, key),
        params_for=lambda params, key: _outsider_params(params, key),
        read_keys=lambda params, key: {"privatized": (key,), **_privatize_read_keys(params, key)},
        unneeded=lambda params, key: _unneeded_by_setting(params, key),
    ),
    Stage(
        name="lrp_budgets",
        summary="embed the corpus (task-irrelevant sensitive words filled); per-dimension sensitivity, LRP relevance",
        reads=("corpus", "detected", "fill_in"),  # the detect stage's spans, every corpus document's
        params=("seed", "device", *(f"embedding_dp.{k}" for k in EMBEDDING_FIT_PARAMS)),
        gpu=True,
    ),
    Stage(
        name="embedding_dp",
        summary="publish one set of noisy sentence embeddings: per-dimension budgets, Laplace noise, manifest",
        reads=("key_fingerprint", "budgets"),
        params=("seed", "embedding_dp.encoder", "embedding_dp.relevance", "embedding_dp.grid"),
        foreach="embedding_dp.settings",
    ),
    Stage(
        name="attack",
        summary="the attackers (detector, interest inference, re-identification) on the original and each corpus",
        # release_manifest: whether a setting fills from the corpus (then a cross-document match is no chance)
        reads=("corpus", "detector", "interests", "privatized", "release_manifest"),
        params=("seed", "device", "evaluate.interest_attack", "evaluate.bootstrap", "evaluate.inference_precision",
                "privatize.settings"),
        gpu=True,
    ),
    Stage(
        name="evaluate_embeddings",
        summary="utility, keyword and cross-release attacks of every published set of noisy sentence embeddings",
        reads=("budgets", "noisy_embeddings", "embedding_manifest"),
        # the rule's embedding ceilings only: a text ceiling's edit re-runs evaluate, not this
        params=("seed", "embedding_dp", "evaluate.recommend.keyword_gain", "evaluate.recommend.cross_release_gain"),
        plots=(Plot(catalog_path("embedding_table"), x="epsilon_max", y="utility",
                    title="Noisy sentence embeddings: utility vs epsilon_max"),),
    ),
    Stage(
        name="evaluate",
        summary="utility of classifiers trained on each corpus; the privacy-utility frontier and the recommendation",
        # release_manifest: each setting's facts (served, or why not?) from its release
        reads=("corpus", "fill_in", "detect_metrics", "privatized", "release_manifest", "privatize_metrics",
               "outsider_metrics", "ledger", "attack_metrics", "leaks", "embedding_table", "embedding_plot"),
        params=("seed", "device", "evaluate.tfidf_logreg", "evaluate.transformer", "evaluate.inference_precision",
                "evaluate.frontier", "evaluate.recommend", "evaluate.bootstrap", "report", "privatize.settings",
                "embedding_dp.settings", "tracking.log_models", "tracking.registered_model",
                "tracking.registered_privatizer"),
        plots=(Plot(catalog_path("frontier"), x="privacy_risk", y="utility",
                    title="Privacy-utility frontier (one point per setting)"),),
    ),
)


# `textsift privatize` on a file: a setting over texts the detect stage never saw, detected on the spot as the service
# and the outsider's probes detect them; what it may read and which params, not a stage of the DAG
PRIVATIZE_FILE = Stage(
    name="privatize_file",
    summary="one privacy setting over a file of new texts (textsift privatize)",
    reads=("key_fingerprint", "detected", "detector", "fill_in", "index", "index_metrics"),
    params=("seed", "device"),
    foreach="privatize.settings",
    params_for=lambda params, key: _outsider_params(params, key),
    read_keys=lambda params, key: _privatize_read_keys(params, key),
    unneeded=lambda params, key: _unneeded_by_setting(params, key),
)


def get_stage(name: str) -> Stage:
    """The registered stage called ``name``; a StageError lists the known stages otherwise."""
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
    """The instances an instance waits for: every instance of each stage writing what it reads (its own reads,
    narrowed by its params: an index over word2vec does not wait for the fill-in model; a metric-DP setting waits for
    its own index only)."""
    reads = instance.stage.reads_for(params, instance.key)
    waits = {artifact(name).producer: instance.stage.keys_read(params, instance.key, name) for name in reads}
    return [i for i in instances(params) if i.stage.name in waits and (waits[i.stage.name] is None
                                                                        or i.key in waits[i.stage.name])]
