"""A released corpus's manifest: what produced it and what may be done with its setting, as a public document.

Written by privatize@<setting> beside the corpus (``data/privatized/<setting>.manifest.json``) and read by evaluate, so
the verdicts and the report learn a setting's facts from its release, not by importing every mechanism: whether its
replacements come from a corpus-trained model or index (the cross-document attacker is measured then), and whether it
ships as a served model or why not (:func:`textsift.serving.service.serving_refusal`). Nothing in it is text of the
corpus; the key appears only as its public fingerprint.
"""

from __future__ import annotations

from typing import Any

from textsift.mechanisms.base import Mechanism


def release_manifest(setting_name: str, setting: Any, implementation: Mechanism, params: Any, refusal: str | None,
                     fingerprint: str) -> dict[str, Any]:
    """The manifest of ``setting_name``'s release: its mechanism, the guarantee written beside its ledger, whether it
    fills from the corpus, whether it is served (``refusal``: why not) and the fingerprint of the key it drew with."""
    return {"setting": setting_name, "mechanism": setting.kind, "guarantee": implementation.guarantee,
            "fills_from_corpus": implementation.fills_from_corpus(setting, params), "served": refusal is None,
            "not_served": refusal or "", "key_fingerprint": fingerprint}
