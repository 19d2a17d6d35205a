"""The outsider stage's attacks: what someone without the secret key recovers from a published corpus and its service.

The outsider holds the repository and params (the public ``seed``) and the published corpus, and replays the
setting's mechanism on candidate originals with the seed as its guess of the key
(:mod:`textsift.evaluation.outsider`); the same replay under a key derived from the secret one (unknowable to the
outsider, the same on every run) is the no-information baseline, so ``attack.replay.gain`` near 0 means the replay
tells the outsider nothing. Measured on the test split: a per-document mechanism is replayed on the test documents
alone, as is DataSifterText without keyphrase swapping; with it (swaps across the corpus) on the whole corpus. A
setting whose stand-in for a name is a function of the key and the name (pseudonyms, digests) also gets the
dictionary attacker: the corpus's gold person names as candidates, a name confirmed when its stand-in recomputed
under the guessed key is in the published document (``attack.dictionary.*``). A served setting also gets the oracle
attacker, who holds an API token: it sends "My name is <candidate>." under a published document's id for every
candidate name and looks for the answer's stand-in in that published document (``attack.oracle.*``), through the
very code the service runs (:func:`textsift.serving.service.served_privatize`, its draws under fixed names instead of
fresh ones, :func:`textsift.releases.measured_draw_name`, so the figures repeat run after run), and is judged as it is
served: the
gold-span leak of the service's answers on the test documents (``served.leak.rate``, by type and identifier group),
since a request carries no gold spans (a ``spans: both`` setting releases a corpus with gold + detected spans
replaced, and serves detected spans only).
"""

from __future__ import annotations

import numpy as np

from textsift.config import Setting
from textsift.evaluation.outsider import dictionary_attack, replay_agreement
from textsift.evaluation.privacy import leak_rates
from textsift.mechanisms.base import Documents, Resources
from textsift.mechanisms.registry import mechanism
from textsift.releases import draw_name, measured_draw_name
from textsift.rng import Key
from textsift.secret_key import SecretKey
from textsift.serving.service import servable, served_key, served_privatize

PERSON_LABELS = ("PERSON", "NAME")
ORACLE_DOCUMENTS = 20  # published documents the oracle probes (every candidate name each): 20 x names requests
ORACLE_TEMPLATE = "My name is {}."


def _rows(docs: Documents, rows: np.ndarray) -> Documents:
    return Documents([docs.texts[i] for i in rows], [docs.ids[i] for i in rows], [docs.gold[i] for i in rows])


def replay_metrics(docs: Documents, published: list[str], test: np.ndarray, setting: Setting, resources: Resources,
                   guess: Key, baseline_key: Key) -> dict[str, float]:
    """``attack.replay.{agreement,baseline,gain}``: the share of released test tokens a replay under ``guess``
    reproduces, the same under ``baseline_key`` (a key nobody but the holder can know), and the difference."""
    implementation = mechanism(setting.kind)
    rows = np.flatnonzero(test)
    alone = implementation.document_wise(setting)
    target = _rows(docs, rows) if alone else docs

    def replayed(key: Key) -> list[str]:
        texts = implementation.privatize(target, setting, resources, key).texts
        return texts if alone else [texts[i] for i in rows]

    originals, released = [docs.texts[i] for i in rows], [published[i] for i in rows]
    agreement = replay_agreement(originals, released, replayed(guess))
    baseline = replay_agreement(originals, released, replayed(baseline_key))
    return {"attack.replay.agreement": agreement, "attack.replay.baseline": baseline,
            "attack.replay.gain": agreement - baseline}


def dictionary_metrics(docs: Documents, published: list[str], test: np.ndarray, setting: Setting,
                       guess: Key) -> dict[str, float]:
    """``attack.dictionary.*`` of a setting whose stand-ins for names can be recomputed under a key
    (``Mechanism.recomputed_names``: pseudonyms, digests) on the test split's gold person names (none without
    them)."""
    recompute = mechanism(setting.kind).recomputed_names(setting)
    if recompute is None:
        return {}
    names = [[text[s.start:s.end] for s in spans if s.label in PERSON_LABELS]
             for text, spans in zip(docs.texts, docs.gold, strict=True)]
    candidates = sorted({n for doc in names for n in doc})
    rows = np.flatnonzero(test)
    if not any(names[i] for i in rows):
        return {}

    def stand_in(doc: int, candidate: str) -> str:
        """The candidate's stand-in in test document ``doc``, keyed by the draw name of the document as an attacker
        who knows all of it but the name rebuilds it (the strongest outsider: draws are keyed by the content)."""
        i = rows[doc]
        rebuilt = docs.texts[i] if candidate in names[i] else docs.texts[i].replace(names[i][0], candidate)
        return recompute(guess, draw_name(docs.ids[i], rebuilt), candidate)

    attack = dictionary_attack([published[i] for i in rows], [names[i] for i in rows], candidates, stand_in)
    return {f"attack.dictionary.{k}": v for k, v in attack.items()}


def oracle_metrics(docs: Documents, published: list[str], test: np.ndarray, name: str, setting: Setting,
                   resources: Resources, key: SecretKey) -> dict[str, float]:
    """``attack.oracle.{confirmed,false,probes}`` of a served setting: of the test documents' replaced gold person
    names (the first ``ORACLE_DOCUMENTS`` documents with one), the share the oracle confirms, the share of wrong
    candidates it confirms, and how many probes it sent. Nothing for a setting that is not served."""
    implementation = mechanism(setting.kind)
    if not servable(implementation, setting, resources.params):
        return {}
    owners: dict[int, set[str]] = {}
    for i in np.flatnonzero(test):
        text = docs.texts[i]
        names = {text[s.start:s.end] for s in docs.gold[i] if s.label in PERSON_LABELS} - {""}
        names = {n for n in names if n not in published[i]}  # replaced in the published document
        if names and len(owners) < ORACLE_DOCUMENTS:
            owners[int(i)] = names
    candidates = sorted({n for names in owners.values() for n in names})
    probes = [(i, c) for i in owners for c in candidates]
    if not probes:
        return {}
    served = served_key(key, name, setting, implementation, resources)
    answers = served_privatize(implementation, setting, resources, served,
                               [ORACLE_TEMPLATE.format(c) for _, c in probes], [docs.ids[i] for i, _ in probes],
                               [measured_draw_name("oracle", k) for k in range(len(probes))]).texts
    prefix, suffix = ORACLE_TEMPLATE.split("{}")
    hits = [(c in owners[i], bool(s) and s != c and s in published[i]) for (i, c), s in zip(
        probes, (a.removeprefix(prefix).removesuffix(suffix) for a in answers), strict=True)]
    true = [hit for own, hit in hits if own]
    wrong = [hit for own, hit in hits if not own]
    return {"attack.oracle.confirmed": float(np.mean(true)), "attack.oracle.probes": float(len(probes)),
            **({"attack.oracle.false": float(np.mean(wrong))} if wrong else {})}


def served_leak_metrics(docs: Documents, test: np.ndarray, name: str, setting: Setting, resources: Resources,
                        key: SecretKey) -> dict[str, float]:
    """``served.leak.rate`` (``.<LABEL>``, ``.direct``, ``.quasi``): the share of the test documents' gold spans that
    survive in what the service answers for those documents (what promote checks before shipping). Nothing for a
    setting that is not served or a corpus without gold spans."""
    implementation = mechanism(setting.kind)
    rows = [int(i) for i in np.flatnonzero(test)]
    if not servable(implementation, setting, resources.params) or not any(docs.gold[i] for i in rows):
        return {}
    served = served_key(key, name, setting, implementation, resources)
    answers = served_privatize(implementation, setting, resources, served,
                               [docs.texts[i] for i in rows], [docs.ids[i] for i in rows],
                               [measured_draw_name("served_leak", k) for k in range(len(rows))]).texts
    leaks = leak_rates([docs.texts[i] for i in rows], [docs.gold[i] for i in rows], answers)
    return {f"served.{k}": v for k, v in leaks.items() if k.startswith("leak.rate")}


def outsider_metrics(docs: Documents, published: list[str], test: np.ndarray, name: str, setting: Setting,
                     resources: Resources, guess: Key, key: SecretKey) -> dict[str, float]:
    """The outsider's attacks on one setting's published corpus, guessing ``guess`` (the public seed) as the key;
    the baseline replays under a key derived from the secret ``key`` (unknowable, and the same on every run, so
    the metrics reproduce); and, for a served setting, the oracle with an API token and the served answers' leak."""
    return {**replay_metrics(docs, published, test, setting, resources, guess, key.derive("outsider.baseline")),
            **dictionary_metrics(docs, published, test, setting, guess),
            **oracle_metrics(docs, published, test, name, setting, resources, key),
            **served_leak_metrics(docs, test, name, setting, resources, key)}
