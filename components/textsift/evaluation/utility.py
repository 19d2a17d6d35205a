"""Downstream utility: classifiers trained on one corpus, scored on another (METHODS.md §5).

Pure functions: texts and labels in, fitted models and metric dicts out; no file I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from sklearn.pipeline import Pipeline

from textsift.evaluation.params import TfidfLogregParams
from textsift.rng import stable_key

UTILITY_METRICS = ("accuracy", "macro_f1", "roc_auc")
TEXT_COLUMN = "text"


def as_frame(texts: Sequence[str]) -> pd.DataFrame:
    """The baseline's input: one ``text`` column (its MLflow signature), so the logged model serves
    ``pd.DataFrame({"text": [...]})`` as MLflow's pyfunc passes it."""
    return pd.DataFrame({TEXT_COLUMN: list(texts)})


def train_tfidf_logreg(
    texts: Sequence[str], labels: Sequence[str], params: TfidfLogregParams, seed: int
) -> Pipeline:
    """Fit the TF-IDF + logistic-regression baseline (deterministic for a given seed).

    Hashed n-gram counts (no stored vocabulary, no ``stop_words_`` of pruned terms), then TF-IDF
    weighting. The input is a frame with a ``text`` column (:func:`as_frame`); scikit-learn only, so
    the logged model loads anywhere scikit-learn does. Hashing hides the words but not which ones
    occurred: ``idf_`` and the non-zero coefficients mark every hashed n-gram of the training text,
    so a model is only logged when its training text is published anyway (a privatized corpus,
    ``evaluation.publishing.register_classifiers``), never when trained on the original.
    """
    hashing = HashingVectorizer(n_features=2**params.n_features_log2, ngram_range=(1, params.ngram_max),
                                alternate_sign=False, norm=None, dtype=np.float32)
    model = Pipeline(
        [
            ("hash", ColumnTransformer([("text", hashing, TEXT_COLUMN)])),
            ("tfidf", TfidfTransformer(sublinear_tf=True)),
            ("logreg", LogisticRegression(
                C=params.C, max_iter=params.max_iter,
                random_state=stable_key(seed, "evaluate", "tfidf_logreg") % (2**31),
            )),
        ]
    )
    model.fit(as_frame(texts), list(labels))
    return model


def score_probabilities(classes: Sequence[str], proba: np.ndarray, labels: Sequence[str]) -> dict[str, float]:
    """Accuracy, macro-F1 and (binary tasks only) ROC AUC from class probabilities.

    Args:
        classes: the label of each probability column.
        proba: (n_docs, n_classes) probabilities.
        labels: the true labels.

    ROC AUC is NaN when the task is not binary or the test labels hold one class only.
    """
    labels = list(labels)
    predicted = [classes[i] for i in np.asarray(proba).argmax(axis=1)]
    out = {
        "accuracy": float(accuracy_score(labels, predicted)),
        "macro_f1": float(f1_score(labels, predicted, average="macro")),
        "roc_auc": float("nan"),
    }
    if len(classes) == 2 and len(set(labels)) == 2:
        out["roc_auc"] = float(roc_auc_score([lab == classes[1] for lab in labels], np.asarray(proba)[:, 1]))
    return out


def score(model: Pipeline, texts: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """``score_probabilities`` of a fitted scikit-learn classifier on (texts, labels)."""
    return score_probabilities(list(model.classes_), model.predict_proba(as_frame(texts)), labels)
