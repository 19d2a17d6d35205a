"""build_indexes@<source> and privatize@<metric_dp setting> on the tiny demo corpus (METHODS.md §2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.integration.conftest import make_project
from textsift.config import TrackingParams
from textsift.corpus import read_corpus
from textsift.errors import ConfigError
from textsift.runner import run_stage
from textsift.tokenize import metric_dp_words
from textsift.tracking import resolve_uri

pytestmark = pytest.mark.integration
SOURCE = {"kind": "word2vec", "dim": 128, "beta": 0.9, "epochs": 2, "min_count": 1, "n_trees": 5}
GEOMETRY = {"epsilons": [5, 50000], "k_list": [1, 5, 1000], "draws": 20, "vocab_sample": 30}
SETTING = {"kind": "metric_dp", "index": "w2v", "epsilon": 5.0, "batch_size": 64}
VAULTED = {"kind": "redact", "spans": "gold", "style": "pseudonym", "vault": True}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sources = {"w2v": SOURCE, "strict": {**SOURCE, "min_doc_freq": 10_000}}
    root = make_project(tmp_path_factory.mktemp("mdp") / "p", indexes__sources=sources,
                        indexes__geometry=GEOMETRY, privatize__settings={"mdp_eps5": SETTING, "red_vault": VAULTED})
    run_stage("ingest", root=root)
    run_stage("build_indexes", root=root, key="w2v")
    run_stage("privatize", root=root, key="mdp_eps5")
    return root


def _words(text: str) -> set[str]:
    return {t.text.lower() for t in metric_dp_words(text)}


def _span_values(corpus: pd.DataFrame, split: str | None = None) -> list[str]:
    rows = corpus if split is None else corpus[corpus["split"] == split]
    return [text[s["start"]:s["end"]] for text, spans in zip(rows["text"], rows["spans"], strict=True) for s in spans]


def _public_document_words(corpus: pd.DataFrame) -> list[set[str]]:
    """Per training document, the words it uses outside its gold spans (span characters blanked)."""
    train = corpus[corpus["split"] == "train"]
    docs = []
    for text, spans in zip(train["text"], train["spans"], strict=True):
        chars = list(text)
        for s in spans:
            chars[s["start"]:s["end"]] = " " * (s["end"] - s["start"])
        docs.append(_words("".join(chars)))
    return docs


def _publicly_common(corpus: pd.DataFrame, min_docs: int = 5) -> set[str]:
    docs = _public_document_words(corpus)
    return {w for w in set().union(*docs) if sum(w in doc for doc in docs) >= min_docs}


def test_index_folder_manifest_and_metrics(project: Path) -> None:
    folder = project / "data/indexes/w2v"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["embedding"] == "word2vec" and manifest["d"] == 128 and manifest["beta"] == 0.9
    assert manifest["projected"] is True and manifest["m"] == manifest["m_formula"] == 90
    vocab = (folder / "vocab.txt").read_text().split()
    assert manifest["vocab_size"] == len(vocab) > 10 and all(w == w.lower() for w in vocab)
    assert np.load(folder / "vectors.npy").shape == (len(vocab), 90) and (folder / "index.ann").exists()
    assert np.load(folder / "projection.npy").shape == (128, 90)
    inputs = (folder / "inputs.txt").read_text().split()
    assert manifest["input_vocab_size"] == len(inputs) > len(vocab) and set(vocab) < set(inputs)
    assert np.load(folder / "input_vectors.npy").shape == (len(inputs), 90)
    assert manifest["min_doc_freq"] == 5 and manifest["private_spans"] == "gold"
    assert manifest["excluded_doc_freq"] > 0 and manifest["excluded_private_span"] > 0
    assert manifest["candidate_words"] == len(inputs) == (
        len(vocab) + manifest["excluded_doc_freq"] + manifest["excluded_private_span"])
    assert sorted(p.name for p in (folder / "plots").iterdir()) == [
        "deniability_N_w.png", "deniability_S_w.png", "distance_vs_epsilon.png", "knn_distance_vs_k.png"]
    metrics = json.loads((project / "metrics/build_indexes/w2v.json").read_text())
    assert metrics["geometry.noise_distance.eps_5"] > metrics["geometry.noise_distance.eps_50000"]
    assert f"geometry.knn_distance.k_{len(vocab) - 1}" in metrics  # k = 1000 capped at vocabulary size - 1
    assert metrics["deniability.N_w.mean.eps_5"] < 0.2 < 0.9 < metrics["deniability.N_w.mean.eps_50000"] <= 1
    assert metrics["deniability.S_w.mean.eps_5"] > metrics["deniability.S_w.mean.eps_50000"] >= 1
    assert metrics["index.vocab_size"] == len(vocab) and metrics["index.input_vocab_size"] == len(inputs)
    assert metrics["index.excluded.doc_freq"] == manifest["excluded_doc_freq"]
    assert metrics["index.excluded.private_span"] == manifest["excluded_private_span"]


def test_outputs_are_words_used_outside_gold_spans_in_five_training_documents(project: Path) -> None:
    corpus = read_corpus(project / "data/ingest/corpus.parquet")
    vocab = set((project / "data/indexes/w2v/vocab.txt").read_text().split())
    assert vocab <= _publicly_common(corpus)
    private_only = {w for value in _span_values(corpus) for w in _words(value)} - set().union(
        *_public_document_words(corpus))
    assert len(private_only) > 20 and not private_only & vocab  # names and e-mail parts never are outputs


def test_no_planted_value_reaches_a_document_that_did_not_contain_it(project: Path) -> None:
    original = read_corpus(project / "data/ingest/corpus.parquet")
    privatized = read_corpus(project / "data/privatized/mdp_eps5.parquet")
    values = sorted(set(_span_values(original, "test")))
    patterns = [re.compile(rf"(?<!\w){re.escape(v)}(?!\w)", re.IGNORECASE) for v in values]
    planted_words = {w for v in values for w in _words(v)} - _publicly_common(original)  # "and" is no secret
    assert len(values) > 10 and len(planted_words) > 10
    for before, after in zip(original["text"], privatized["text"], strict=True):
        assert not [p.pattern for p in patterns if p.search(after) and not p.search(before)]
        assert not (_words(after) - _words(before)) & planted_words  # not even one word of a value


def test_an_empty_output_vocabulary_says_to_lower_min_doc_freq(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"indexes\.sources\.strict\.min_doc_freq"):
        run_stage("build_indexes", root=project, key="strict")
    assert not (project / "data/indexes/strict").exists()


def test_privatized_corpus_keeps_ids_labels_splits(project: Path) -> None:
    original = read_corpus(project / "data/ingest/corpus.parquet")
    privatized = read_corpus(project / "data/privatized/mdp_eps5.parquet")
    for column in ("doc_id", "label", "split"):
        assert privatized[column].tolist() == original[column].tolist()
    assert (privatized["text"] != original["text"]).mean() > 0.9
    assert original["interest"].notna().all() and (original["interest"] != "none").any()  # the demo's truth...
    assert privatized["interest"].isna().all()  # ...is the attacker's ground truth, never published
    metrics = json.loads((project / "metrics/privatize/mdp_eps5.json").read_text())
    assert metrics["metric_dp.epsilon"] == 5.0 and metrics["metric_dp.beta"] == 0.9
    assert 0.3 < metrics["metric_dp.tokens_changed_fraction"] <= 1
    assert "metric_dp.tokens_per_s" not in metrics  # timings go to MLflow only: DVC outputs stay reproducible
    assert 0 <= metrics["metric_dp.deniability.N_w.mean"] <= 1 <= metrics["metric_dp.deniability.S_w.mean"]
    assert 0 <= metrics["metric_dp.oov_rate"] < 0.5 and "privacy.token_change_fraction" in metrics


def test_mlflow_gets_manifest_plots_and_aggregates_but_no_vocabulary(project: Path) -> None:
    client = MlflowClient(resolve_uri(TrackingParams(), project))
    runs = client.search_runs([client.get_experiment_by_name("textsift").experiment_id],
                              "tags.`textsift.instance` = 'build_indexes@w2v'")
    assert [r.info.status for r in runs] == ["FINISHED"]
    run = runs[0]
    artifacts = {f.path for d in ("index", "plots") for f in client.list_artifacts(run.info.run_id, d)}
    assert artifacts == {"index/manifest.json", "plots/deniability_N_w.png", "plots/deniability_S_w.png",
                         "plots/distance_vs_epsilon.png", "plots/knn_distance_vs_k.png"}
    assert run.data.metrics["index.vocab_size"] > 10
    assert run.data.metrics["index.excluded.doc_freq"] > 0 and run.data.metrics["index.excluded.private_span"] > 0
    manifest = Path(client.download_artifacts(run.info.run_id, "index/manifest.json", str(project / "dl")))
    logged = " ".join([*run.data.params.values(), *run.data.tags.values(), *run.data.metrics,
                       manifest.read_text()]).lower()
    corpus = read_corpus(project / "data/ingest/corpus.parquet")
    planted = {text[s["start"]:s["end"]].lower() for text, spans in zip(corpus["text"], corpus["spans"], strict=True)
               for s in spans}
    assert len(planted) > 20 and not [p for p in planted if p in logged]


def test_each_setting_runs_its_mechanism_once_and_that_run_gives_the_ledger_and_the_vault(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage runs a setting's mechanism once, over the corpus (the outsider's replays are the outsider stage's):
    the ledger's ε and the vault's entries come from that run, not from running it again."""
    from textsift import secret_key
    from textsift.mechanisms.metric_dp import mechanism as metric_dp
    from textsift.mechanisms.redact.mechanism import Redaction
    from textsift.vault import unseal

    corpus = read_corpus(project / "data/ingest/corpus.parquet")
    ids = corpus["doc_id"].astype(str).tolist()
    whole: list[str] = []
    for implementation in (metric_dp.MetricDP, Redaction):
        def counting(self, docs, *args, _real=implementation.privatize, **kwargs):  # type: ignore[no-untyped-def]
            whole.append(type(self).__name__ if docs.ids == ids else "part of the corpus")
            return _real(self, docs, *args, **kwargs)
        monkeypatch.setattr(implementation, "privatize", counting)
    recounted: list[int] = []
    real_counts = metric_dp.perturbed_counts
    monkeypatch.setattr(metric_dp, "perturbed_counts", lambda *a, **k: recounted.append(1) or real_counts(*a, **k))
    run_stage("privatize", root=project, key="mdp_eps5")
    run_stage("privatize", root=project, key="red_vault")
    assert whole == ["MetricDP", "Redaction"] and not recounted

    ledger = pd.read_parquet(project / "data/ledger/mdp_eps5.parquet")
    privatizer = metric_dp.load_privatizer(metric_dp.MetricDPSetting(**SETTING), _Indexes(project))
    assert ledger["doc_id"].tolist() == ids
    assert ledger["epsilon"].tolist() == [5.0 * n for n in real_counts(privatizer, corpus["text"].tolist())]
    entries = unseal((project / "data/vault/red_vault.bin").read_bytes(), "red_vault", secret_key.ensure(project))
    published = read_corpus(project / "data/privatized/red_vault.parquet")["text"].tolist()
    assert entries and all(pseudonym in published[ids.index(doc)] for doc, found in entries.items()
                           for _, pseudonym, _ in found)


def test_the_outsider_stage_replays_a_release_and_the_privatize_stage_does_not(project: Path) -> None:
    """The outsider's figures are their own stage's metrics file, written apart from the release's."""
    released = json.loads((project / "metrics/privatize/mdp_eps5.json").read_text())
    assert not [k for k in released if k.startswith(("attack.", "served."))]
    figures = run_stage("outsider", root=project, key="mdp_eps5")
    assert json.loads((project / "metrics/outsider/mdp_eps5.json").read_text()) == figures
    assert 0 < figures["attack.replay.baseline"] < 1 and abs(figures["attack.replay.gain"]) < 0.05


class _Indexes:
    """Just enough :class:`~textsift.mechanisms.base.Resources` to load the w2v index of the project."""

    def __init__(self, root: Path) -> None:
        from textsift.indexes.store import load_index

        self.device, self.index = "cpu", lambda name: load_index(root / "data/indexes" / name)
