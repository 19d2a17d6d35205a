"""Code deps computed from imports: what DVC and the flow's cache hash for a stage (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import importlib
import shutil
import typing
from pathlib import Path

from textsift.code_deps import closure, imports_of, is_schema, module_path, runs_nothing, stage_code
from textsift.config import Params, load_params
from textsift.dvc_render import stage_deps
from textsift.mechanisms.registry import MECHANISMS
from textsift.registry import STAGES, StageInstance, get_stage
from textsift.stage_cache import input_digest
from textsift.stage_context import stage_params

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / "components" / "textsift"


def _module_of(path: str) -> str:
    parts = Path(path).relative_to("components").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_module_a_stage_imports_is_hashed_by_dvc_and_the_flow_cache() -> None:
    params = load_params(REPO / "params.yaml")
    for stage in STAGES:
        deps = set(stage_deps(stage, params))
        code = set(stage.all_code)
        assert code <= deps, (stage.name, sorted(code - deps))
        roots = (f"textsift.stages.{stage.name}", *stage.loads)
        for module in frozenset().union(*(closure(m) for m in roots)):  # each import that runs code, as a file
            path = module_path(module)
            assert path is not None and (runs_nothing(path) or any(
                _module_of(p) == module for p in code if p.endswith(".py"))), module
        assert not any(p.startswith("components/") for p in deps - code), stage.name  # nothing listed by hand


def test_the_deps_that_were_missing_by_hand_are_found() -> None:
    privatize = get_stage("privatize").all_code
    assert "components/textsift/evaluation/geometry.py" in privatize
    # mechanisms are imported by kind (textsift.mechanisms.registry): every implementation is the stage's code
    assert {f"components/textsift/mechanisms/{kind}/mechanism.py" for kind in MECHANISMS} <= set(privatize)
    # attack and evaluate read each setting's facts (fills from the corpus? served, or why not?) from its release's
    # manifest, which privatize writes with the mechanism's code as a dep: an edit there re-runs privatize, then them
    assert "release_manifest" in get_stage("evaluate").reads and "release_manifest" in get_stage("attack").reads
    assert not any("mechanism.py" in p for s in STAGES if s.name not in ("privatize", "outsider") for p in s.all_code)
    # privatize reads the detect stage's spans; only the outsider's probes and the served model run recognizers
    recognizers = "components/textsift/detection/recognizers/build.py"
    assert recognizers not in privatize and recognizers in get_stage("outsider").all_code
    assert "components/textsift/models/loading.py" in stage_code("build_indexes")
    assert {"components/textsift/readers.py", "components/textsift/tokenize.py"} <= set(stage_code("train_detectors"))
    assert "components/textsift/interests/lexicon.txt" in stage_code("ingest")  # data beside a module counts
    assert "textsift.adhoc" in imports_of("textsift.cli")  # an import inside a function counts
    assert not any(p.endswith(("textsift/registry.py", "stage_cache.py")) for s in STAGES for p in s.all_code)


def test_measuring_is_split_from_judging() -> None:
    """The attacks and the noisy-embedding evaluation are stages of their own: editing the report or the rule
    re-runs no attacker, and evaluate, which trains the classifiers and judges, loads none of the attackers' models."""
    lib = "components/textsift/"
    attack, embeddings, evaluate = (set(stage_code(s)) for s in ("attack", "evaluate_embeddings", "evaluate"))
    judging = {f"{lib}evaluation/{m}.py" for m in ("publishing", "report", "setting_utility")}
    assert not judging & (attack | embeddings)
    assert not {f"{lib}evaluation/recommend.py", f"{lib}evaluation/frontier.py"} & attack  # the embedding rule's
    attacking = {f"{lib}{m}.py" for m in ("evaluation/attackers", "models/detector", "interests/inference")}
    assert attacking <= attack and not attacking & (evaluate | embeddings)
    assert f"{lib}interests/training.py" not in attack  # running the interest attacker is not training it
    assert f"{lib}budgets/fit.py" in embeddings and f"{lib}budgets/fit.py" not in evaluate | attack


def test_a_word_list_belongs_to_the_module_that_reads_it() -> None:
    """Editing DataSifter's stop-word list re-runs what reads it (privatize, and the stages whose code reads stop
    words), never the trained models; the detector's templates re-run training, not the key or ingest."""
    stop_words = "components/textsift/stopwords_en.txt"
    readers = {stage.name for stage in STAGES if stop_words in stage.all_code}
    assert "privatize" in readers and not readers & {"key", "ingest", "train_fill_in", "train_detectors",
                                                     "train_interests", "detect", "build_indexes"}
    templates = "components/textsift/detection/templates.txt"
    assert templates in stage_code("train_detectors") and templates not in stage_code("key")
    assert templates not in stage_code("ingest") and templates not in stage_code("train_fill_in")


def _digests(params: Params, named: dict[str, tuple[str, str | None]], root: Path) -> dict[str, str]:
    """The flow cache's input digest of each named (stage, key) instance over the project at ``root``."""
    out = {}
    for name, (stage, key) in named.items():
        instance = StageInstance(get_stage(stage), key)
        out[name] = input_digest(instance, params, stage_params(params, instance), root)
    return out


def test_editing_an_imported_module_changes_only_its_importers_cache_digests(tmp_path: Path) -> None:
    shutil.copytree(LIB, tmp_path / "components" / "textsift", ignore=shutil.ignore_patterns("__pycache__"))
    params = load_params(REPO / "params.yaml")
    named = {"privatize": ("privatize", "mdp_w2v_eps10"), "ingest": ("ingest", None),
             "train_fill_in": ("train_fill_in", None)}
    before = _digests(params, named, tmp_path)
    geometry = tmp_path / "components/textsift/evaluation/geometry.py"
    geometry.write_text(geometry.read_text() + "\n# edited\n")
    after = _digests(params, named, tmp_path)
    assert after["privatize"] != before["privatize"]
    assert after["ingest"] == before["ingest"] and after["train_fill_in"] == before["train_fill_in"]


def test_a_packages_docstring_is_no_code_dep_but_a_statement_in_its_init_is(tmp_path: Path) -> None:
    """Editing the documentation of ``detection`` re-trained every model whose code lay in it: a module that runs
    nothing hashes nothing."""
    shutil.copytree(LIB, tmp_path / "components" / "textsift", ignore=shutil.ignore_patterns("__pycache__"))
    params = load_params(REPO / "params.yaml")
    named = {"train_detectors": ("train_detectors", None), "detect": ("detect", None)}
    before = _digests(params, named, tmp_path)
    package = tmp_path / "components/textsift/detection/__init__.py"
    package.write_text(package.read_text().replace('"""', '"""Edited. ', 1))
    assert _digests(params, named, tmp_path) == before
    assert "components/textsift/detection/recognizers/patterns.py" in stage_code("train_detectors")
    assert "components/textsift/detection/__init__.py" not in stage_code("train_detectors")
    documented, running = tmp_path / "documented.py", tmp_path / "running.py"
    documented.write_text('"""A package."""\n\nfrom __future__ import annotations\n')
    running.write_text('"""A package."""\n\nfrom textsift.rng import keyed_rng\n')
    assert runs_nothing(documented) and not runs_nothing(running)


def test_editing_one_mechanism_changes_only_its_own_settings_digests(tmp_path: Path) -> None:
    """Each privatize and outsider setting hashes its own mechanism's code and the loaders of what it needs: editing
    DataSifter's sampler re-runs the DataSifter settings, editing the recognizers' code no privatize setting (their
    spans are the detect stage's) and the outsider stage of the settings that detect or ship (under the flow's cache
    and DVC alike)."""
    from textsift.mechanisms.registry import mechanism
    from textsift.serving.service import servable

    shutil.copytree(LIB, tmp_path / "components" / "textsift", ignore=shutil.ignore_patterns("__pycache__"))
    params = load_params(REPO / "params.yaml")
    kinds = {key: setting.kind for key, setting in params.privatize.settings.items()}
    assert {"datasifter", "redact", "metric_dp"} <= set(kinds.values())
    named = {f"{stage}@{key}": (stage, key) for key in kinds for stage in ("privatize", "outsider")}
    before = _digests(params, named, tmp_path)
    sampler = tmp_path / "components/textsift/mechanisms/datasifter/sampling.py"
    sampler.write_text(sampler.read_text() + "\n# edited\n")
    after = _digests(params, named, tmp_path)
    assert {name for name in named if after[name] != before[name]} == {
        f"{stage}@{k}" for k, v in kinds.items() if v == "datasifter" for stage in ("privatize", "outsider")}
    detecting = {key for key, setting in params.privatize.settings.items() if ("detector", None) in setting.needs()}
    shipped = {k for k, s in params.privatize.settings.items() if servable(mechanism(s.kind), s, params)}
    assert detecting and detecting != set(kinds) and shipped
    build = tmp_path / "components/textsift/detection/recognizers/build.py"
    build.write_text(build.read_text() + "\n# edited\n")
    again = _digests(params, named, tmp_path)
    assert {name for name in named if again[name] != after[name]} == {f"outsider@{k}" for k in detecting | shipped}


def test_params_schema_is_hashed_by_value_not_as_code() -> None:
    """Adding a field to one mechanism's schema re-runs what its values reach, not every stage that reads
    params.yaml: no schema module is any stage's code dep."""
    schema = {"components/textsift/config.py", "components/textsift/mechanisms/redact/params.py",
              "components/textsift/detection/params.py", "components/textsift/ingest_params.py"}
    assert all(Path(LIB.parent.parent, path).is_file() for path in schema)
    assert not any(schema & set(stage.all_code) for stage in STAGES)
    assert {"components/textsift/detection/types.py", "components/textsift/mechanisms/redact/redactor.py"} <= set(
        get_stage("privatize").all_code)  # the logic they once held or sit beside stays a dep


def test_a_schema_module_holds_no_logic_a_stage_runs() -> None:
    """What code deps leave out must compute nothing: other modules take from a schema module only classes and types
    (params models read by value) or config's loaders, never a function or a table; its classes' methods are
    validators or ``needs()`` (whose answer is a stage's reads, hashed as its deps list)."""
    loaders = {"load_params", "parse_params", "flatten", "select"}
    for path in [*LIB.rglob("*.py"), *(REPO / "flows").rglob("*.py")]:
        importer = _module_of(path.relative_to(REPO).as_posix()) if path.is_relative_to(LIB) else path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if is_schema(importer):
            methods = [f for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body
                       if isinstance(f, ast.FunctionDef)]
            for method in methods:
                decorators = {ast.unparse(d).split("(")[0] for d in method.decorator_list}
                assert decorators & {"field_validator", "model_validator"} or method.name == "needs", (
                    importer, method.name)
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):  # `import textsift.x.params` would reach anything in it
                assert not [a.name for a in node.names if is_schema(a.name)], (importer, ast.unparse(node))
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            for alias in node.names:
                if is_schema(f"{node.module}.{alias.name}"):  # `from textsift.detection import params`
                    raise AssertionError((importer, f"{node.module}.{alias.name}: import names from it"))
                if not is_schema(node.module):
                    continue
                taken = getattr(importlib.import_module(node.module), alias.name)
                assert isinstance(taken, type) or typing.get_origin(taken) is not None or alias.name in loaders, (
                    importer, node.module, alias.name)
                home = getattr(taken, "__module__", node.module)  # a logic class passed on by a schema module
                assert not home.startswith("textsift.") or is_schema(home), (importer, node.module, alias.name)


def test_a_setting_that_ships_hashes_the_served_models_code_and_the_stage_covers_every_instance() -> None:
    """A served setting's privatizer packs the serving code as it is when its instance runs: editing that code must
    re-run it (else the registry keeps the old model), while a setting that never ships does not hash it."""
    from textsift.mechanisms.registry import mechanism
    from textsift.serving.service import servable

    params = load_params(REPO / "params.yaml")
    stage = get_stage("outsider")  # registers the setting's privatizer: the service its probes measured
    served_model = "components/textsift/serving/model.py"
    shipped = {k for k, s in params.privatize.settings.items() if servable(mechanism(s.kind), s, params)}
    assert shipped and shipped != set(params.privatize.settings)
    for key in params.privatize.settings:
        code = set(stage.code(params, key))
        assert code <= set(stage.all_code), key  # what any instance may run
        assert (served_model in code) >= (key in shipped), key
    assert served_model not in stage.code(params, "ds_default")
    assert served_model not in get_stage("privatize").all_code  # the release is the same whether or not it ships


def test_a_metric_dp_setting_hashes_the_bert_encoder_and_the_stand_ins_only_where_it_runs_them() -> None:
    """A plain metric-DP setting over a static index runs neither BERT's encoder nor redaction's stand-ins: editing
    them re-runs none of its instances (they once did, by a type-only import and a module-level one); a hybrid hashes
    the stand-ins, a contextual index the encoder, and a load its setting does not name is refused."""
    import pytest

    from textsift.errors import StageError
    from textsift.mechanisms.metric_dp.loaded_modules import CONTEXTUAL_ENCODER, STAND_INS
    from textsift.mechanisms.metric_dp.mechanism import MetricDP

    params = load_params(REPO / "params.yaml")
    encoder, stand_ins = (f"components/{name.replace('.', '/')}.py" for name in (CONTEXTUAL_ENCODER, STAND_INS))
    settings = params.privatize.settings
    plain = [key for key, s in settings.items() if s.kind == "metric_dp" and not s.stand_ins]
    hybrid = [key for key, s in settings.items() if s.kind == "metric_dp" and s.stand_ins]
    assert plain and hybrid
    for stage in ("privatize", "outsider"):
        for key in plain:
            assert not {encoder, stand_ins} & set(get_stage(stage).code(params, key)), (stage, key)
        for key in hybrid:
            assert stand_ins in get_stage(stage).code(params, key), (stage, key)
        assert {encoder, stand_ins} <= set(get_stage(stage).all_code)
    bert = params.indexes.sources["w2v"].model_copy(update={"kind": "bert_contextual"})
    contextual = params.model_copy(update={"indexes": params.indexes.model_copy(update={"sources": {
        **params.indexes.sources, "w2v": bert}})})
    setting = settings[plain[0]]
    assert setting.index == "w2v" and MetricDP().modules(setting, contextual) == (CONTEXTUAL_ENCODER,)
    assert encoder in get_stage("privatize").code(contextual, plain[0])
    with pytest.raises(StageError, match="modules"):
        MetricDP().load(STAND_INS, setting, params)
    assert MetricDP().load(STAND_INS, settings[hybrid[0]], params).redact_text


def test_a_recognizer_that_does_not_teach_re_runs_detection_never_training() -> None:
    """Training imports only its silver teachers (patterns, spaCy); the recognizer set's builder and a recognizer
    that only detects (name cues) are code of ``detect``, not of ``train_detectors``: editing or adding one once
    re-trained the detector."""
    builder, cues = "components/textsift/detection/recognizers/build.py", \
        "components/textsift/detection/recognizers/name_cues.py"
    patterns = "components/textsift/detection/recognizers/patterns.py"
    training, detection = set(get_stage("train_detectors").all_code), set(get_stage("detect").all_code)
    assert not {builder, cues} & training and patterns in training
    assert {builder, cues, patterns} <= detection
