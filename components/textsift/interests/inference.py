"""Inference of the IPI interest attacker (METHODS.md §4.2): the trained model, beam-search decoding and the
attacker's reading of what it generates. Apart from :mod:`.training`, so what only runs the attacker (the ``attack``
stage, ``textsift detect``) does not depend on the training loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textsift.device import autocast
from textsift.interests.attack import grounded
from textsift.interests.params import InterestParams
from textsift.interests.synthetic import NONE, SEPARATOR
from textsift.interests.unilm import UniLMSeq2Seq, beam_search

INTEREST_ONLY_TOKENS = 2  # "<interest> :": every interest name (and "none") is one MiniLM word piece


@dataclass
class InterestModel:
    model: UniLMSeq2Seq
    tokenizer: Any
    params: InterestParams
    device: str


def generate(im: InterestModel, texts: Sequence[str], max_len: int | None = None) -> list[str]:
    """``"<interest> : <evidence>"`` (or ``"none"``) per text, by beam search, in batches of similar length.

    ``max_len`` overrides the params' (a few tokens are enough when only the interest is wanted: the
    ``attack`` stage's attacker decodes ``INTEREST_ONLY_TOKENS`` when it does not check evidence: ~4x faster).
    """
    p = im.params
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # batches of similar length: little padding
    out: list[str] = [""] * len(texts)
    for start in range(0, len(order), p.inference_batch_size):
        batch = order[start:start + p.inference_batch_size]
        with autocast(im.device, True):
            found = beam_search(im.model, im.tokenizer, [texts[i] for i in batch], p.max_source, p.beam_size,
                                min(p.min_len, max_len or p.max_len), max_len or p.max_len, im.device)
        for i, generated in zip(batch, found, strict=True):
            out[i] = generated
    return out


def infer(im: InterestModel, texts: Sequence[str], min_evidence_overlap: float) -> list[tuple[str, str]]:
    """(interest, evidence) per text as the attacker reads it: the full answer decoded, and ``("none", "")``
    unless at least ``min_evidence_overlap`` of the evidence's words are in the text (0: any interest counts;
    :func:`textsift.interests.attack.grounded`)."""
    out = []
    for text, generated in zip(texts, generate(im, texts), strict=True):
        interest, evidence = parse(generated)
        kept = grounded(text, interest, evidence, min_evidence_overlap) != NONE
        out.append((interest, evidence) if kept else (NONE, ""))
    return out


def parse(generated: str) -> tuple[str, str]:
    """(interest, evidence) of a generated text; ``("none", "")`` when it names no interest."""
    interest, _, evidence = generated.partition(SEPARATOR.strip())
    interest = interest.strip().lower()
    return (interest or NONE, evidence.strip()) if interest != NONE else (NONE, "")
