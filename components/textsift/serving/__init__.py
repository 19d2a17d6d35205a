"""A privacy setting shipped as a model: the MLflow pyfunc privatizer (``textsift-privatizer``).

A data team ships a setting, not a classifier: ``privatize@<setting>`` logs the setting as an MLflow pyfunc model
whose input is a column of texts (and optional ids) and whose output is the privatized texts (and, for a DP
mechanism, the ε each document spent), packed with the validated params and the models and indexes the setting needs
(:mod:`textsift.serving.resources`). The secret key is never inside the model: it is read from
``TEXTSIFT_SECRET_KEY`` when the model is loaded, and served draws derive from it for serving only, with a fresh
name per record (:mod:`textsift.releases`): no request reproduces what was published. Corpus-wide mechanisms
(DataSifterText, METHODS.md §1) are not served per request, and metric-DP is not served: its index holds the
corpus's own input words, personal data included (a registered model is shared; the index is a local DVC output).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textsift.mechanisms.base import Documents, Mechanism, PrivatizeResult, Resources
from textsift.releases import SERVED, fresh_draw_name, release_key
from textsift.secret_key import SecretKey


def serving_refusal(implementation: Mechanism, setting: Any) -> str | None:
    """Why a setting does not ship as a model, or None when it does: it must be per document, protect something in a
    request and pack no corpus text (:meth:`~textsift.mechanisms.base.Mechanism.serving_refusal`)."""
    if not implementation.per_document:
        return "its output depends on other documents of the corpus"
    return implementation.serving_refusal(setting)


def servable(implementation: Mechanism, setting: Any) -> bool:
    """Whether a setting ships as a model (no :func:`serving_refusal`)."""
    return serving_refusal(implementation, setting) is None


def served_key(secret: SecretKey, name: str, setting: Any) -> SecretKey:
    """The key a served setting draws with: derived for serving (:data:`textsift.releases.SERVED`), so no answer
    repeats a draw of the published corpus."""
    return release_key(secret, setting.kind, name, setting, scope=SERVED)


def served_privatize(implementation: Mechanism, setting: Any, resources: Resources, key: SecretKey,
                     texts: Sequence[str], ids: Sequence[str]) -> PrivatizeResult:
    """What the service answers for ``texts``: each row drawn under a fresh name (:func:`fresh_draw_name`: a client's
    id keys nothing), no gold spans (a request carries none): the mechanism's result."""
    docs = Documents(list(texts), list(ids), [[] for _ in texts], [fresh_draw_name() for _ in texts])
    return implementation.privatize(docs, setting, resources, key)
