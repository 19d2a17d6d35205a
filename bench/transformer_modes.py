"""The transformer classifier both ways on one project's corpora: a head on frozen cached features vs fine-tuning.

``evaluate.transformer.mode`` defaults to ``features`` because it is several times cheaper; it is only a fair
stand-in if it ranks the privacy settings as fine-tuning does. This trains both on the original corpus and on
every privatized corpus of a project that has run (``--eval-root``, default: this folder after ``make run``) and
reports the time of each and the rank agreement (Spearman) of their test accuracies on the original test split,
with every setting's two accuracies in the figure's params. Skipped when the project has no privatized corpora.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

from bench.harness import Figure, cpu_device, timed
from textsift.budgets.sentence_encoder import load_sentence_encoder
from textsift.config import load_params
from textsift.corpus import read_corpus
from textsift.device import resolve_device, resolve_precision
from textsift.embeddings.locate import model_folder
from textsift.evaluation.feature_classifier import FeatureCache
from textsift.evaluation.params import TransformerClassifierParams
from textsift.evaluation.setting_utility import fine_tuned_probabilities, head_probabilities
from textsift.evaluation.utility import score_probabilities


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--eval-root", type=Path, default=Path("."),
                        help="a project whose pipeline has run (data/ingest, data/privatized)")


def _corpora(root: Path) -> dict[str, pd.DataFrame]:
    corpora = {"original": read_corpus(root / "data/ingest/corpus.parquet")}
    for path in sorted((root / "data/privatized").glob("*.parquet")):
        corpora[path.stem] = read_corpus(path)
    return corpora


def figures(args: argparse.Namespace) -> list[Figure]:
    root = args.eval_root.resolve()
    if not (root / "data/privatized").is_dir():
        print(f"transformer_modes: skipped, {root} has no privatized corpora (run `make run` first)")
        return []
    params = load_params(root / "params.yaml")
    options: TransformerClassifierParams = params.evaluate.transformer
    device = resolve_device(getattr(args, "device", None) or params.device)  # bench.run --device wins
    folder = model_folder(options.encoder, root, None, "evaluate.transformer.encoder")
    corpora = _corpora(root)
    test = corpora["original"][corpora["original"]["split"] == "test"]
    tests = {"original": test}
    cache = FeatureCache(load_sentence_encoder(folder, device), options.max_length, 64,
                         resolve_precision(params.evaluate.inference_precision, device))  # as evaluate runs it
    accuracy: dict[str, dict[str, float]] = {"features": {}, "fine_tune": {}}
    seconds = {"features": 0.0, "fine_tune": 0.0}
    for name, corpus in corpora.items():
        train = corpus[corpus["split"] == "train"]
        for mode, (took, (classes, proba)) in {
            "features": timed(partial(head_probabilities, cache, train, tests, options)),
            "fine_tune": timed(partial(fine_tuned_probabilities, folder, train, tests, options, params.seed, name,
                                       device)),
        }.items():
            seconds[mode] += took
            accuracy[mode][name] = score_probabilities(classes, proba["original"], test["label"])["accuracy"]
        print(f"transformer_modes: {name}: features {accuracy['features'][name]:.3f}, "
              f"fine-tuned {accuracy['fine_tune'][name]:.3f}")
    names = list(corpora)
    rho = float(spearmanr([accuracy["features"][n] for n in names], [accuracy["fine_tune"][n] for n in names])[0])
    where = cpu_device() if device == "cpu" else f"cuda ({device})"
    common = {"corpora": len(names), "docs": int(sum(len(c) for c in corpora.values())), "accuracy": accuracy,
              "encoder": options.encoder, "fine_tune_layers": options.encoder_layers, "epochs": options.epochs}
    return [
        Figure("evaluate.transformer.features_s", seconds["features"], "s", where, common,
               {"name": "fine-tuning", "value": seconds["fine_tune"], "unit": "s"},
               seconds["features"] / seconds["fine_tune"]),
        Figure("evaluate.transformer.rank_agreement", rho, "spearman", where, common),
    ]
