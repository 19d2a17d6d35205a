"""What an outsider recovers by replaying a mechanism's randomness: the attacks the secret key defeats.

The outsider has the repository, ``params.yaml`` (so the public ``seed``) and the published corpus
or embeddings, but not the project's secret key (:mod:`textsift.secret_key`). Each attack guesses
the key — the public seed is the best guess there is — regenerates the draws, and checks them
against what was published; each compares with the same attack under a random key, the
no-information baseline, so a *gain* of 0 means the replay tells the outsider nothing:

- :func:`dictionary_attack` — pseudonyms (redaction): recompute the pseudonym of a candidate name; it
  is confirmed when that pseudonym appears in the published document.
- :func:`replay_agreement` — any per-document mechanism (metric-DP words, pseudonyms): the share of
  released stand-in tokens that a replay on the original reproduces.
- :func:`denoise_error_ratio` — noisy embeddings: subtract regenerated Laplace noise; the error left,
  relative to the published noise (0: denoised exactly; 1: no better than the published vector).
- :func:`mask_replay_accuracy` — DataSifterText: predict which tokens were masked and filled from the
  replayed masks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from textsift.tokenize import words


def dictionary_attack(
    published: Sequence[str], names: Sequence[Sequence[str]], candidates: Sequence[str],
    pseudonym: Callable[[int, str], str],
) -> dict[str, float]:
    """Confirm rate of the true names and of wrong candidates (the baseline), and the gain between them.

    Args:
        published: The published documents.
        names: Per document, the true names it mentions (the originals the attacker wants to confirm).
        candidates: The attacker's dictionary; a wrong candidate for a mention is the next one that differs.
        pseudonym: ``(document index, name) -> the stand-in the attacker recomputes under its guessed key``.
    """
    pool = list(candidates)
    true_hits = wrong_hits = mentions = 0
    for doc, (text, doc_names) in enumerate(zip(published, names, strict=True)):
        folded = text.casefold()
        for k, name in enumerate(doc_names):
            start = (doc + k) % max(len(pool), 1)
            wrong = next((c for c in pool[start:] + pool if c.casefold() != name.casefold()), None)
            mentions += 1
            true_hits += pseudonym(doc, name).casefold() in folded
            wrong_hits += wrong is not None and pseudonym(doc, wrong).casefold() in folded
    n = max(mentions, 1)
    confirm, false_confirm = true_hits / n, wrong_hits / n
    return {"confirm_rate": confirm, "false_confirm_rate": false_confirm, "gain": confirm - false_confirm,
            "mentions": float(mentions)}


def _released(original: str, published: str) -> Counter[str]:
    """The tokens of ``published`` that are not tokens of ``original`` (a multiset): the released draws."""
    return Counter(t.text for t in words(published)) - Counter(t.text for t in words(original))


def replay_agreement(originals: Sequence[str], published: Sequence[str], replayed: Sequence[str]) -> float:
    """The share of released stand-in tokens (in ``published``, not in the original) that ``replayed`` — the
    mechanism re-run on the originals under a guessed key — releases too; 0 when nothing was released."""
    released = agreed = 0
    for original, out, replay in zip(originals, published, replayed, strict=True):
        mine, theirs = _released(original, out), _released(original, replay)
        released += sum(mine.values())
        agreed += sum((mine & theirs).values())
    return agreed / released if released else 0.0


def denoise_error_ratio(published: np.ndarray, clean: np.ndarray, regenerated_noise: np.ndarray) -> float:
    """‖published − regenerated − clean‖ / ‖published − clean‖: 0 when the outsider regenerates the noise,
    about √2 when its guess is independent of it (then subtracting only adds noise; 1 = keep the published)."""
    noise = np.linalg.norm(np.asarray(published, np.float64) - clean)
    left = np.linalg.norm(np.asarray(published, np.float64) - regenerated_noise - clean)
    return float(left / noise) if noise else 0.0


def mask_replay_accuracy(masked: Sequence[Sequence[bool]], replayed: Sequence[Sequence[bool]]) -> float:
    """Share of tokens whose fate (masked and filled, or kept) the replayed masks predict correctly."""
    right = total = 0
    for truth, guess in zip(masked, replayed, strict=True):
        a, b = np.asarray(truth, bool), np.asarray(guess, bool)
        right += int((a == b).sum())
        total += a.size
    return right / total if total else 0.0
