"""The outsider's replay attacks (textsift.evaluation.outsider) against outputs drawn with the public seed and with a
secret key: each attack succeeds when the key is the public seed — what textsift did before it had secret keys —
and gains nothing over its no-information baseline when the key is secret (issue 20).

The outsider guesses ``PUBLIC_SEED`` (what params.yaml publishes). Keys are fixed bytes, so every figure here is
deterministic; tolerances are three binomial standard deviations of the sample sizes used.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from textsift.budgets.allocation import laplace_noise
from textsift.corpus import Span
from textsift.evaluation.outsider import (
    denoise_error_ratio,
    dictionary_attack,
    mask_replay_accuracy,
    replay_agreement,
)
from textsift.mechanisms.base import Documents
from textsift.mechanisms.datasifter.masking import MaskingRule
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sifter import mask_corpus
from textsift.mechanisms.datasifter.wordlists import default_blacklist
from textsift.mechanisms.redact.mechanism import Redaction
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import pseudonym_of, redact
from textsift.privatization.attacks import dictionary_metrics
from textsift.rng import generator
from textsift.secret_key import SecretKey
from textsift.tokenize import words

PUBLIC_SEED = 1234
SECRET = SecretKey(bytes(range(32)))
OTHER_SECRET = SecretKey(bytes(range(32, 64)))  # the no-information baseline's random key
KEYS = {"public seed": PUBLIC_SEED, "secret key": SECRET}
FIRST = ["Ada", "Boris", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jana", "Kofi", "Lena", "Mateo",
         "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomas"]
LAST = ["Abara", "Brandt", "Costa", "Duval", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen", "Kowalski",
        "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Quispe", "Rossi", "Sato", "Tanaka"]
NAMES = [f"{f} {la}" for f in FIRST for la in LAST]  # the attacker's dictionary: 400 candidate names


def _bound(p: float, n: int) -> float:
    """Three standard deviations of the difference of two independent rates p over n trials (plus one trial)."""
    return 3 * math.sqrt(2 * p * (1 - p) / n) + 1 / n


@pytest.mark.parametrize("key_name", KEYS)
def test_dictionary_attacker_confirms_names_only_under_the_public_seed(key_name: str) -> None:
    pick = generator(7, "test", "names")
    names = [str(NAMES[i]) for i in pick.integers(0, len(NAMES), 600)]
    texts = [f"Dear {n}, your parcel is late. {n} can call us." for n in names]
    spans = [[Span(5, 5 + len(n), "PERSON")] for n in names]
    ids = [f"doc-{i}" for i in range(len(texts))]
    published, _ = redact(texts, ids, spans, RedactSetting(kind="redact", style="pseudonym"), KEYS[key_name])
    assert not any(n in p for n, p in zip(names, published, strict=True))
    attack = dictionary_attack(published, [[n] for n in names], NAMES,
                               lambda doc, name: pseudonym_of("PERSON", PUBLIC_SEED, ids[doc], name))
    if key_name == "public seed":
        assert attack["confirm_rate"] == 1.0 and attack["false_confirm_rate"] < 0.01  # every name confirmed
    else:
        assert attack["confirm_rate"] <= 0.01 and abs(attack["gain"]) <= 0.01


@pytest.mark.parametrize("key_name", KEYS)
@pytest.mark.parametrize("operator", ["pseudonym", "hash"])
def test_the_stages_dictionary_attacker_confirms_pseudonyms_and_digests_only_under_the_public_seed(
        key_name: str, operator: str) -> None:
    """The attack the privatize stage runs, on what the mechanism itself publishes (draws keyed by each document's
    draw name, its id and content): it recomputes what replaces a name (a pseudonym, a keyed digest) in the document
    rebuilt around each candidate, so it confirms every name under the public seed and none under the secret key."""
    pick = generator(8, "test", "names")
    names = [str(NAMES[i]) for i in pick.integers(0, len(NAMES), 300)]
    texts = [f"Dear {n}, your parcel is late." for n in names]
    docs = Documents(texts, [f"doc-{i}" for i in range(len(texts))], [[Span(5, 5 + len(n), "PERSON")] for n in names])
    setting = RedactSetting(kind="redact", spans="gold", labels=["PERSON"], operators={"PERSON": operator})
    published = Redaction().privatize(docs, setting, None, KEYS[key_name]).texts  # type: ignore[arg-type]
    assert not any(n in p for n, p in zip(names, published, strict=True))
    attack = dictionary_metrics(docs, published, np.ones(len(texts), bool), setting, PUBLIC_SEED)
    if key_name == "public seed":
        assert attack["attack.dictionary.confirm_rate"] == 1.0 and attack["attack.dictionary.false_confirm_rate"] < 0.01
    else:
        assert attack["attack.dictionary.confirm_rate"] <= 0.01 and abs(attack["attack.dictionary.gain"]) <= 0.01
    masked = RedactSetting(kind="redact", spans="gold", operators={"PERSON": "mask"})
    assert dictionary_metrics(docs, published, np.ones(len(texts), bool), masked, PUBLIC_SEED) == {}  # no key in it


def test_corpus_scope_gives_a_person_one_pseudonym_in_every_document() -> None:
    texts = ["Ada Costa wrote.", "Later, Ada Costa called.", "Boris Ito and Ada Costa met."]
    spans = [[Span(t.index(n), t.index(n) + len(n), "PERSON") for n in ("Ada Costa", "Boris Ito") if n in t]
             for t in texts]
    ids = ["a", "b", "c"]
    scoped = redact(texts, ids, spans, RedactSetting(kind="redact", scope="corpus"), SECRET)[0]
    stand_in = scoped[0].removesuffix(" wrote.")
    assert all(stand_in in out for out in scoped) and "Ada" not in " ".join(scoped)
    per_document = redact(texts, ids, spans, RedactSetting(kind="redact"), SECRET)[0]
    assert len({out.removesuffix(" wrote.").split(", ")[-1].split(" called")[0] for out in per_document[:2]}) == 2


@pytest.mark.parametrize("key_name", KEYS)
def test_noise_regeneration_denoises_embeddings_only_under_the_public_seed(key_name: str) -> None:
    clean = generator(7, "test", "embeddings").normal(size=(400, 16))
    ids = [f"doc-{i}" for i in range(len(clean))]
    sensitivity, epsilon = np.full(16, 0.5), np.full(16, 0.4)
    published = laplace_noise(clean, ids, sensitivity, epsilon, KEYS[key_name])
    # the strongest outsider: one who also knows every clean row its noise is keyed by (textsift.releases)
    regenerated = laplace_noise(clean, ids, sensitivity, epsilon, PUBLIC_SEED) - clean
    ratio = denoise_error_ratio(published, clean, regenerated)
    if key_name == "public seed":
        assert ratio < 1e-9  # the clean embeddings back, exactly
    else:
        assert ratio == pytest.approx(math.sqrt(2), rel=0.05)  # two independent noises: worse than not trying


@pytest.mark.parametrize("key_name", KEYS)
def test_mask_replay_tells_kept_from_filled_words_only_under_the_public_seed(key_name: str) -> None:
    text = ("The patient Ada Costa from Lyon was seen on Monday about her knee and she asked for a second opinion "
            "before the surgery that her doctor had planned")
    tokens = [words(text)] * 300
    ids = [f"doc-{i}" for i in range(len(tokens))]
    rule = MaskingRule.from_setting(DataSifterSetting(kind="datasifter", target_fraction=0.25),
                                    ["ada", "costa", "lyon"], default_blacklist())
    truth = [m.masked for m in mask_corpus(tokens, ids, rule, KEYS[key_name])]
    replay = [m.masked for m in mask_corpus(tokens, ids, rule, PUBLIC_SEED)]
    baseline = [m.masked for m in mask_corpus(tokens, ids, rule, OTHER_SECRET)]
    accuracy, chance = mask_replay_accuracy(truth, replay), mask_replay_accuracy(truth, baseline)
    if key_name == "public seed":
        assert accuracy == 1.0 and chance < 0.9
    else:
        n = sum(len(m) for m in truth)
        assert abs(accuracy - chance) <= _bound(chance, n)


def test_replay_agreement_counts_released_tokens_the_replay_reproduces() -> None:
    originals = ["the red car stopped", "a blue door"]
    published = ["the green car halted", "a blue door"]
    assert replay_agreement(originals, published, ["the green car stopped", "a blue gate"]) == 0.5
    assert replay_agreement(originals, published, published) == 1.0
    assert replay_agreement(originals, originals, published) == 0.0  # nothing released
