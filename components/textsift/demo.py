"""A seeded demo corpus: labelled review- and message-like texts with planted personal data.

``make run``, the tests and the benchmarks need a corpus that anyone can regenerate, that a
classifier can learn but not solve outright, and whose personal data is known exactly. Each
document is 2-8 body sentences (more when it gets many entities) labelled ``pos`` or ``neg``;
a ``label_noise`` share of documents is worded against its label, and one sentiment sentence in
ten goes against its document's wording, so TF-IDF + logistic regression lands well below 100%.

Personal data (PERSON, CITY, COMPANY, JOB, SCHOOL, PHONE, DATE, EMAIL) is drawn from pools built
once per seed with Faker and planted with exact character offsets (gold spans). Draws favour the
head of each pool, so the same name or email recurs across documents, as leak metrics need.
A share ``interest_rate`` of documents also gets one sentence that gives away an interest (METHODS.md
§4.2: an IPI evidence template of one of the 12 categories, filled with the lexicon's held-out values,
so the interest attacker never saw them in training); its category is the record's ``interest``, and
``none`` for every other document: the ground truth the attack stage scores the attacker against.

Document ``i`` draws only from generators keyed by (seed, its id): it is the same whatever
``n_docs`` is, and no Faker instance is seeded per document (50,000 documents take seconds). The
interest sentence has a generator of its own, so a document without one is the same text whatever
``interest_rate`` is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import date
from functools import lru_cache
from pathlib import Path

from faker import Faker

from textsift.corpus import RawRecord, Span, atomic_path
from textsift.ingest_params import DemoCorpusParams
from textsift.interests.synthetic import NONE, evidence_sentence, load_lexicon
from textsift.rng import generator

SPAN_LABELS = ("PERSON", "CITY", "COMPANY", "JOB", "SCHOOL", "PHONE", "DATE", "EMAIL")
LABELS = ("pos", "neg")  # index = polarity: 0 positive, 1 negative
AGREEMENT = 0.9  # share of sentiment sentences that follow the document's wording
_SLOT = re.compile(r"\{([A-Z]+)\}")
_SCHOOL_FORMS = ("{} University", "University of {}", "{} College", "{} High School")

_ADJ = (
    ("great", "excellent", "wonderful", "fantastic", "superb", "reliable", "friendly", "helpful",
     "impressive", "outstanding", "delightful", "smooth", "comfortable", "pleasant", "flawless",
     "brilliant", "solid", "sturdy", "quick", "responsive", "thoughtful", "lovely", "spotless",
     "top-notch", "well made", "better than expected", "exactly as described", "a pleasant surprise"),
    ("terrible", "awful", "disappointing", "poor", "unreliable", "rude", "unhelpful", "broken",
     "flimsy", "slow", "frustrating", "useless", "overpriced", "sloppy", "noisy", "dirty", "confusing",
     "mediocre", "defective", "careless", "clumsy", "painfully slow", "worse than expected",
     "nothing like the photos", "a real letdown", "badly made", "a mess", "a joke"),
)
_WORDS = {  # polarity slot -> (positive fillers, negative fillers)
    "ADJ": _ADJ,
    "XADJ": (_ADJ[1], _ADJ[0]),  # the opposite polarity, used after "not"
    "VERB": (
        ("loved", "enjoyed", "appreciated", "liked", "was happy with", "was impressed by", "adored",
         "was pleased with", "could not fault"),
        ("hated", "disliked", "was annoyed by", "was disappointed by", "could not stand",
         "was unhappy with", "struggled with", "regretted", "gave up on"),
    ),
    "OVERALL": (
        ("I would recommend it to anyone", "I would happily buy it again", "five stars from me",
         "it made my week", "I am really satisfied", "it was worth every penny", "I will be back",
         "it exceeded my expectations", "no complaints at all", "thank you for a great job"),
        ("I would not recommend it", "I want my money back", "one star from me", "it ruined my week",
         "I am really not satisfied", "it was a waste of money", "I will never come back",
         "it fell short of my expectations", "I have filed a complaint", "please fix this soon"),
    ),
}
_ASPECTS = (
    "battery", "screen", "delivery", "packaging", "customer service", "checkout", "staff", "room",
    "food", "price", "support team", "app", "manual", "refund process", "installation", "design",
    "sound", "fit", "booking", "driver", "warranty", "update", "menu", "service",
)
_SENTIMENT = {
    "review": (
        "The {ASPECT} was {ADJ}.", "The {ASPECT} is {ADJ} and the {ASPECT} was {ADJ}.",
        "I {VERB} the {ASPECT}.", "Overall, {OVERALL}.", "Honestly, the {ASPECT} was not {XADJ} at all.",
        "To be fair, the {ASPECT} felt {ADJ}.", "In short, {OVERALL}.",
        "After a month, I {VERB} the {ASPECT}.", "The {ASPECT} turned out {ADJ}, and {OVERALL}.",
    ),
    "message": (
        "Just wanted to say the {ASPECT} was {ADJ}.", "Quick note: I {VERB} the {ASPECT}.",
        "The {ASPECT} you sent was {ADJ}.", "Long story short, {OVERALL}.",
        "I have to say the {ASPECT} was not {XADJ}.", "Your {ASPECT} has been {ADJ} lately.",
        "My family {VERB} the {ASPECT}.", "As for the {ASPECT}, it was {ADJ}, so {OVERALL}.",
    ),
}
_NEUTRAL = {
    "review": (
        "I bought it a few weeks ago.", "We used it almost every day.", "It arrived in a plain box.",
        "This was my second order from them.", "I compared a few options before choosing.",
        "The size is about what I expected.", "My partner picked the color.", "We went on a weekday.",
    ),
    "message": (
        "Hope you are doing well.", "Following up on my earlier message.", "I am writing about my order.",
        "Let me know if you need anything else.", "Sorry for the long message.", "Details are below.",
        "I tried calling earlier.", "This is about the visit last week.",
    ),
}
_FRAME = {  # style -> (openings, closings), each outside the 2-8 body sentences
    "review": ((), ()),
    "message": (("Hi,", "Hello,", "Dear team,", "Good morning,"), ("Thanks.", "Best regards.", "Cheers.")),
}
_PII = {
    "PERSON": ("My name is {PERSON}.", "{PERSON} helped me at the counter.", "I was served by {PERSON}.",
               "Please forward this to {PERSON}.", "My colleague {PERSON} ordered one too."),
    "CITY": ("I live in {CITY}.", "We ordered from the store in {CITY}.", "It was shipped to {CITY}.",
             "I am moving to {CITY} next month."),
    "COMPANY": ("I bought it through {COMPANY}.", "I work at {COMPANY}.",
                "Delivery was handled by {COMPANY}.", "My employer, {COMPANY}, paid for it."),
    "JOB": ("My job title is {JOB}.", "I use it at work ({JOB}).", "My role at work: {JOB}.",
            "I listed my occupation as {JOB}."),
    "SCHOOL": ("My son goes to {SCHOOL}.", "I studied at {SCHOOL}.", "We met at {SCHOOL}.",
               "I teach at {SCHOOL}."),
    "PHONE": ("You can reach me at {PHONE}.", "Call me on {PHONE}.", "My number is {PHONE}.",
              "Text {PHONE} if anything changes."),
    "DATE": ("I ordered it on {DATE}.", "It arrived on {DATE}.", "My birthday is {DATE}.",
             "The appointment was on {DATE}."),
    "EMAIL": ("Email me at {EMAIL}.", "My email is {EMAIL}.", "Please reply to {EMAIL}.",
              "The receipt went to {EMAIL}."),
}


def _compile(templates: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """Templates split into literal (even index) and slot-name (odd index) parts."""
    return tuple(tuple(_SLOT.split(t)) for t in templates)


_SENTIMENT_T = {style: _compile(ts) for style, ts in _SENTIMENT.items()}
_NEUTRAL_T = {style: _compile(ts) for style, ts in _NEUTRAL.items()}
_PII_T = {label: _compile(ts) for label, ts in _PII.items()}


@lru_cache(maxsize=4)
def entity_pools(seed: int) -> dict[str, tuple[str, ...]]:
    """Pools of fake personal data, built once per seed with one seeded Faker.

    Args:
        seed: Root seed of the corpus.

    Returns:
        Span label -> the values that documents draw from (names and emails are paired by index).
    """
    fake = Faker("en_US")
    fake.seed_instance(seed)
    firsts = [fake.first_name() for _ in range(600)]  # Faker's weighted name draws are slow:
    lasts = [fake.last_name() for _ in range(600)]  # 2,000 people are paired from 600 + 600 names
    people = [(fake.random_element(firsts), fake.random_element(lasts)) for _ in range(2000)]
    cities = tuple(fake.city() for _ in range(500))
    jobs = (fake.job() for _ in range(2000))
    days = [fake.date_between(date(2015, 1, 1), date(2024, 12, 31)) for _ in range(1000)]
    emails = []
    for first, last in people:
        first, last = re.sub(r"[^a-z]", "", first.lower()), re.sub(r"[^a-z]", "", last.lower())
        local = fake.random_element((f"{first}.{last}", f"{first[0]}{last}{fake.random_int(1, 99)}",
                                     f"{first}{fake.random_int(1950, 2005)}"))
        emails.append(f"{local}@{fake.free_email_domain()}")
    return {
        "PERSON": tuple(f"{first} {last}" for first, last in people),
        "CITY": cities,
        "COMPANY": tuple(fake.company() for _ in range(300)),
        "JOB": tuple(dict.fromkeys(j for j in jobs if "," not in j and "(" not in j)),
        "SCHOOL": tuple(fake.random_element(_SCHOOL_FORMS).format(fake.random_element(cities))
                        for _ in range(300)),
        "PHONE": tuple(fake.phone_number() for _ in range(1000)),
        "DATE": tuple(f"{d:%B} {d.day}, {d.year}" if k % 2 else d.isoformat() for k, d in enumerate(days)),
        "EMAIL": tuple(emails),
    }


_MAX_SLOTS = max(len(t) // 2 for group in (_SENTIMENT_T, _NEUTRAL_T, _PII_T)
                 for ts in group.values() for t in ts)


def _pick(options: Sequence, u: float):
    """The option at uniform draw ``u`` in [0, 1)."""
    return options[int(u * len(options))]


def _document(i: int, params: DemoCorpusParams, pools: dict[str, tuple[str, ...]], seed: int) -> RawRecord:
    """Document ``i``: every draw comes from the generator keyed by (seed, "demo", its id)."""
    doc_id = f"demo-{i:06d}"
    rng = generator(seed, "demo", doc_id)
    n_entities = int(rng.poisson(params.pii_per_doc))
    # One vector of uniforms (scalar numpy calls are slow), sized for the most a document can use:
    # 11 header draws, per body sentence its template, agreement or entity type, order and slots, 2 frame.
    u = iter(rng.random(13 + (8 + n_entities) * (3 + _MAX_SLOTS)).tolist()).__next__
    label = int(u() >= params.positive_rate)
    wording = label ^ int(u() < params.label_noise)
    style = "review" if u() < 0.5 else "message"
    n_sent = 2 + int(u() * 7)
    n_sentiment = 1 + sum(u() < 0.5 for _ in range(n_sent - 1))
    body = [(_pick(_SENTIMENT_T[style], u()), wording if u() < AGREEMENT else 1 - wording)
            for _ in range(n_sentiment)]
    body += [(_pick(_PII_T[_pick(SPAN_LABELS, u())], u()), wording) for _ in range(n_entities)]
    body += [(_pick(_NEUTRAL_T[style], u()), wording) for _ in range(n_sent - len(body))]
    opening, closing = _FRAME[style]
    sentences = [((_pick(opening, u()),), wording)] if opening else []
    sentences += sorted(body, key=lambda _: u())
    sentences += [((_pick(closing, u()),), wording)] if closing else []
    interest, sentences = _plant_interest(doc_id, params.interest_rate, seed, sentences, bool(opening))

    pieces: list[str] = []
    spans: list[Span] = []
    length = 0
    for n, (template, polarity) in enumerate(sentences):
        if n:
            pieces.append(" ")
            length += 1
        for k, part in enumerate(template):
            if k % 2 == 0:
                value = part
            elif part in pools:
                value = _pick(pools[part], u() ** 2)  # favours the pool's head: values recur
                spans.append(Span(length, length + len(value), part))
            else:
                value = _pick(_ASPECTS if part == "ASPECT" else _WORDS[part][polarity], u())
            pieces.append(value)
            length += len(value)
    text = "".join(pieces)
    row = {"id": doc_id, "text": text, "label": LABELS[label],
           "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in spans], "interest": interest}
    raw = json.dumps(row, ensure_ascii=False).encode("utf-8")
    return RawRecord(doc_id, text, LABELS[label], source_line=i + 1, raw=raw, spans=tuple(spans),
                     interest=interest)


def _plant_interest(doc_id: str, rate: float, seed: int, sentences: list, framed: bool) -> tuple[str, list]:
    """With probability ``rate``, the category of an interest and ``sentences`` with its sentence in the body.

    Otherwise ``none`` and ``sentences`` as they were. Draws only from the generator keyed by
    (seed, "demo.interest", the id).
    """
    rng = generator(seed, "demo.interest", doc_id)
    if rng.random() >= rate:
        return NONE, sentences
    lexicon = load_lexicon()
    category = str(rng.choice(lexicon.categories))
    sentence = evidence_sentence(rng, category, "test", seed, lexicon)[0]
    first, last = int(framed), len(sentences) - int(framed)  # inside the greeting and the sign-off
    at = int(rng.integers(first, last + 1))
    return category, [*sentences[:at], ((sentence,), 0), *sentences[at:]]


def generate_demo(params: DemoCorpusParams, seed: int) -> list[RawRecord]:
    """The demo corpus: ``params.n_docs`` records ``demo-000000``, ``demo-000001``, ...

    Args:
        params: Corpus size, mean planted entities per document, positive share, label noise.
        seed: Root seed; the same seed gives the same corpus, byte for byte.

    Returns:
        Records as a reader would yield them from ``write_demo_jsonl``'s file (``raw`` is the line).
    """
    return list(iter_demo(params, seed))


def iter_demo(params: DemoCorpusParams, seed: int) -> Iterator[RawRecord]:
    """:func:`generate_demo`'s records one at a time (a corpus of millions for benchmarks, never held whole)."""
    pools = entity_pools(seed)
    return (_document(i, params, pools, seed) for i in range(params.n_docs))


def write_demo_jsonl(records: Iterable[RawRecord], path: str | Path) -> None:
    """Write records as JSONL lines ``{"id", "text", "label", "spans"}``, atomically.

    Args:
        records: Records from ``generate_demo`` (each line is the record's ``raw`` bytes).
        path: Target file; it is replaced only once fully written.
    """
    with atomic_path(path) as tmp, tmp.open("wb") as handle:
        for record in records:
            handle.write(record.raw + b"\n")
