"""Seeded social-media-like posts for interest-privacy inference (IPI, METHODS.md §4.2).

Each post is one to four everyday sentences (distractors that reveal nothing, some using a category's
vocabulary in passing) and, in most posts, one sentence that gives away an interest in one of the
paper's 12 categories. The evidence is the interest phrase itself, with exact character offsets; the
target the model learns to generate is ``"<interest> : <evidence>"``, or ``"none"`` when the post
reveals no interest.

Held out: every slot filler belongs to the ``train`` or the ``test`` split by a stable hash of
(category, slot, value) — about 20% go to test — so a test post's evidence holds values no training
post contains. Post ``i`` of a split is a pure function of (seed, split, i).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from textsift.rng import generator, stable_key

STAGE = "interests.synthetic"
NONE = "none"
SEPARATOR = " : "
LEXICON = Path(__file__).with_name("lexicon.txt")
_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class InterestPost:
    """A post, its interest (``none`` for none) and the evidence span ``text[start:end]`` (0, 0 for none)."""

    text: str
    interest: str
    start: int = 0
    end: int = 0

    @property
    def evidence(self) -> str:
        """The text that gives the interest away, ``text[start:end]`` (empty for ``none``)."""
        return self.text[self.start:self.end]

    @property
    def target(self) -> str:
        """What the IPI model generates: ``"<interest> : <evidence>"`` or ``"none"``."""
        return NONE if self.interest == NONE else f"{self.interest}{SEPARATOR}{self.evidence}"


@dataclass(frozen=True)
class Lexicon:
    templates: dict[str, tuple[str, ...]]  # category -> evidence templates
    slots: dict[str, dict[str, tuple[str, ...]]]  # category -> slot -> fillers
    frames: tuple[str, ...]
    distractors: tuple[str, ...]

    @property
    def categories(self) -> tuple[str, ...]:
        """The interest categories, in the lexicon's order (the paper's 12)."""
        return tuple(self.templates)


@lru_cache(maxsize=1)
def load_lexicon(path: Path = LEXICON) -> Lexicon:
    """Parse ``lexicon.txt`` (format in its header)."""
    templates: dict[str, list[str]] = {}
    slots: dict[str, dict[str, tuple[str, ...]]] = {}
    sections: dict[str, list[str]] = {"frames": [], "distractors": []}
    current = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@ "):
            current = line[2:].strip()
            if current not in sections:
                templates[current], slots[current] = [], {}
        elif current in sections:
            sections[current].append(line)
        elif line.startswith("= "):
            templates[current].append(line[2:].strip())
        else:
            name, _, values = line.partition(":")
            slots[current][name.strip()] = tuple(v.strip() for v in values.split("|") if v.strip())
    return Lexicon({k: tuple(v) for k, v in templates.items()}, slots, tuple(sections["frames"]),
                   tuple(sections["distractors"]))


@lru_cache(maxsize=1)
def interest_categories() -> frozenset[str]:
    """The values a known interest may take: the lexicon's categories and ``none``."""
    return frozenset((*load_lexicon().categories, NONE))


def filler_split(category: str, slot: str, value: str, seed: int, test_share: float = 0.2) -> str:
    """``test`` for about ``test_share`` of a slot's fillers (stable hash), else ``train``."""
    return "test" if stable_key(seed, STAGE, f"split/{category}/{slot}/{value}") % 1000 < test_share * 1000 else "train"


def _fillers(lexicon: Lexicon, category: str, slot: str, split: str, seed: int) -> tuple[str, ...]:
    values = lexicon.slots[category][slot]
    chosen = tuple(v for v in values if filler_split(category, slot, v, seed) == split)
    return chosen or values  # a slot too small to split keeps all its values in both splits


def evidence_sentence(rng: np.random.Generator, category: str, split: str, seed: int,
                      lexicon: Lexicon | None = None) -> tuple[str, int, int]:
    """A sentence giving away an interest in ``category``, and its evidence span ``sentence[start:end]``.

    An evidence template of the category filled with ``split``'s fillers (held-out values for ``test``),
    now and then capitalized or shouted, wrapped in one of the frames. Draws only from ``rng``.
    """
    lexicon = lexicon or load_lexicon()
    template = str(rng.choice(lexicon.templates[category]))
    evidence = _SLOT.sub(lambda m: str(rng.choice(_fillers(lexicon, category, m.group(1), split, seed))), template)
    if rng.random() < 0.15:
        evidence = evidence.capitalize() if rng.random() < 0.5 else evidence.upper()
    frame = str(rng.choice(lexicon.frames))
    head, _, tail = frame.replace("{E}", "{e}", 1).partition("{e}")
    shown = evidence[:1].upper() + evidence[1:] if frame.startswith("{E}") else evidence
    return head + shown + tail, len(head), len(head) + len(shown)


def generate_post(i: int, split: str, seed: int, none_rate: float = 0.2, lexicon: Lexicon | None = None,
                  ) -> InterestPost:
    """Post ``i`` of ``split`` (``train`` or ``test``): distractors around at most one evidence sentence."""
    lexicon = lexicon or load_lexicon()
    rng = generator(seed, STAGE, f"{split}/{i}")
    sentences = [str(s) for s in rng.choice(lexicon.distractors, size=int(rng.integers(0, 4)), replace=False)]
    if rng.random() < none_rate:
        if not sentences:
            sentences = [str(rng.choice(lexicon.distractors))]
        return InterestPost(" ".join(sentences), NONE)
    category = str(rng.choice(lexicon.categories))
    sentence, start, end = evidence_sentence(rng, category, split, seed, lexicon)
    at = int(rng.integers(0, len(sentences) + 1))
    before = " ".join(sentences[:at]) + (" " if at else "")
    text = before + sentence + ("" if at == len(sentences) else " " + " ".join(sentences[at:]))
    return InterestPost(text, category, len(before) + start, len(before) + end)


def generate_posts(n: int, split: str, seed: int, none_rate: float = 0.2) -> list[InterestPost]:
    """``n`` posts of ``split``; post ``i`` is the same whatever ``n``."""
    lexicon = load_lexicon()
    return [generate_post(i, split, seed, none_rate, lexicon) for i in range(n)]
