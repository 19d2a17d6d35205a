"""Which settings ship as a served model, with which key, and what the service answers: the code the served
privatizer runs and the attacks judge it by (:mod:`textsift.privatization.attacks`)."""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textsift.mechanisms.base import Documents, Mechanism, PrivatizeResult, Resources
from textsift.releases import SERVED, fresh_draw_name, release_key
from textsift.secret_key import SecretKey


def serving_refusal(implementation: Mechanism, setting: Any, params: Any) -> str | None:
    """Why a setting does not ship as a model, or None when it does: it must be per document, protect something in a
    request and pack no corpus text (:meth:`~textsift.mechanisms.base.Mechanism.serving_refusal`; ``params`` say what
    it would pack)."""
    if not implementation.per_document:
        return "its output depends on other documents of the corpus"
    return implementation.serving_refusal(setting, params)


def servable(implementation: Mechanism, setting: Any, params: Any) -> bool:
    """Whether a setting ships as a model (no :func:`serving_refusal`)."""
    return serving_refusal(implementation, setting, params) is None


def served_key(secret: SecretKey, name: str, setting: Any, implementation: Mechanism, resources: Resources
               ) -> SecretKey:
    """The key a served setting draws with: derived for serving (:data:`textsift.releases.SERVED`), so no answer
    repeats a draw of the published corpus, and bound to what its draws depend on (``Mechanism.release_context``)."""
    return release_key(secret, setting.kind, name, setting, scope=SERVED,
                       context=implementation.release_context(setting, resources))


def served_privatize(implementation: Mechanism, setting: Any, resources: Resources, key: SecretKey,
                     texts: Sequence[str], ids: Sequence[str], names: Sequence[str] | None = None) -> PrivatizeResult:
    """What the service answers for ``texts``: each row drawn under a fresh name (:func:`fresh_draw_name`: a client's
    id keys nothing), no gold spans (a request carries none): the mechanism's result. A stage measuring the service
    passes fixed ``names`` (:func:`textsift.releases.measured_draw_name`) so its figures repeat."""
    drawn = list(names) if names is not None else [fresh_draw_name() for _ in texts]
    docs = Documents(list(texts), list(ids), [[] for _ in texts], drawn)
    return implementation.privatize(docs, setting, resources, key)
