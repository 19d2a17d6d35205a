"""Outputs equal the input outside replaced spans, and detection offsets index the input (issue 33).

Models read a normalized view (``textsift.normalize.model_view``); whatever they find is mapped back, and the
mechanisms splice replacements into the text as given: line breaks (CRLF too), tabs, blank lines, ``<br />``
markup, decomposed accents and outer whitespace survive byte for byte.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from tests.conftest import tiny_params
from textsift import rng
from textsift.config import parse_params
from textsift.corpus import RawRecord, Span
from textsift.detect import detect, detect_file
from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.detection.recognizers.build import run_recognizers, spans_of
from textsift.detection.recognizers.merge import Thresholds, analyze
from textsift.detection.recognizers.patterns import PatternRecognizer
from textsift.ingest_params import IngestParams, NormalizeParams, SourceParams
from textsift.mechanisms.base import Documents
from textsift.mechanisms.metric_dp.embedders import StaticEmbedder
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard
from textsift.mechanisms.protected_spans import consistent_spans, outermost
from textsift.mechanisms.redact.mechanism import Redaction
from textsift.mechanisms.redact.params import RedactSetting
from textsift.mechanisms.redact.redactor import redact_text
from textsift.normalize import cut_at_breaks, model_view, normalize_piece, to_original, whole_clusters
from textsift.serving.resources import ServedResources
from textsift.tokenize import metric_dp_words, words
from textsift.validation import validate_records

VIEW = NormalizeParams()
DETECTION = DetectionParams(recognizers=["patterns"])
TEXTS = [
    "  Dear team,\r\n\r\nplease  call\tAnn Lee<br /><br />at +44 20 7946 0958 or ann.lee@example.org.\r\n",
    "\n\nReview:<br />I met  Ann\n  Lee on 12/03/1981 in Mu\u0308nchen.<BR/>Jose\u0301 said: call Ann Lee!\t\n",
    "Cafe\u0301 Zo\u00eb\n\n\tBlank lines above; mail bo@example.org  \n\n",
    "plain text without anything",
]


class Names:
    """A stand-in for the trained detector: two capitalised words in a row, as the model's view shows them (so
    ``Ann\\n  Lee`` is found only because the view collapses its whitespace)."""

    name = "names"
    labels = ("PERSON",)

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        return [[Detection(m.start(), m.end(), "PERSON", 0.9, self.name)
                 for m in re.finditer(r"(?<!\w)[A-Z]\w+ [A-Z]\w+(?!\w)", text)] for text in texts]


RECOGNIZERS: list[Recognizer] = [Names(), PatternRecognizer()]


def _detected(texts: Sequence[str]) -> list[list[Span]]:
    return spans_of(run_recognizers(RECOGNIZERS, texts, DETECTION, view=VIEW))


def _splice(text: str, regions: Sequence[Span], stand_in: Callable[[Span], str]) -> str:
    pieces, cursor = [], 0
    for region in regions:
        pieces += [text[cursor:region.start], stand_in(region)]
        cursor = region.end
    return "".join([*pieces, text[cursor:]])


def _kept_outside(text: str, regions: Sequence[tuple[int, int]], out: str) -> bool:
    """Whether ``out`` is ``text`` with each of the disjoint, sorted ``regions`` replaced by something: the text
    between regions appears in ``out`` unchanged and in order (glob matching, leftmost pieces first)."""
    cuts = [0, *(x for r in regions for x in r), len(text)]
    gaps = [text[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
    if len(gaps) == 1:
        return out == text
    if not (out.startswith(gaps[0]) and out.endswith(gaps[-1])):
        return False
    cursor, stop = len(gaps[0]), len(out) - len(gaps[-1])
    for gap in gaps[1:-1]:
        found = out.find(gap, cursor, stop)
        if found < 0:
            return False
        cursor = found + len(gap)
    return cursor <= stop


@pytest.mark.parametrize("nfc,breaks,spaces", list(itertools.product([True, False], repeat=3)))
def test_the_view_is_the_normalized_text_and_its_map_tiles_the_input(nfc: bool, breaks: bool, spaces: bool) -> None:
    params = NormalizeParams(unicode_nfc=nfc, strip_html_breaks=breaks, collapse_whitespace=spaces)
    for text in [*TEXTS, "q\u0301 \U0001f600 \u0958", ""]:
        view = model_view(text, params)
        assert view.text == normalize_piece(text, params)
        origins = [view.origin(k) for k in range(len(view.text))]
        assert all(ch in normalize_piece(text[a:b], params) for ch, (a, b) in zip(view.text, origins, strict=True))
        tiles = list(dict.fromkeys(origins))  # every input character came into exactly one view stretch
        ends = [0, *(b for _, b in tiles)]
        assert [a for a, _ in tiles] == ends[:-1] and ends[-1] == len(text)
    assert model_view(TEXTS[0], NormalizeParams(unicode_nfc=False, strip_html_breaks=False,
                                                collapse_whitespace=False)).text == TEXTS[0]


def test_view_spans_map_onto_every_character_they_cover_and_never_half_a_cluster() -> None:
    text = "Dear  <br />\n Jose\u0301 q\u0301x"
    view = model_view(text, VIEW)
    assert view.text == "Dear José q\u0301x"
    start = view.text.index("José")
    assert to_original(view, start, start + 4) == (text.index("Jose"), text.index(" q"))  # the accent comes along
    assert to_original(view, start - 1, start + 5) == to_original(view, start, start + 4)  # edge spaces left out
    q = view.text.index("q")
    assert to_original(view, q, q + 1) == (text.index("q"), text.index("x"))  # q without its mark: the mark too
    assert to_original(view, 4, 5) is None  # only a collapsed run
    with pytest.raises(ValueError, match="outside a view"):
        to_original(view, 0, len(view.text) + 1)
    assert whole_clusters(text, text.index("\u0301"), text.index("\u0301") + 1) == (text.index("e\u0301"),
                                                                                     text.index(" q"))


def test_a_span_read_across_a_line_break_comes_back_as_its_pieces_each_of_its_type() -> None:
    text = "Emperor Norton\r\nJoshua Norton<br /><BR/>  Ann\u2028Lee said\n\n"
    across = [Detection(0, text.index("<br"), "PERSON", 0.4, "model"), Detection(text.index("Ann"), len(text), "ORG",
                                                                             0.7, "model+patterns")]
    cut = cut_at_breaks(text, across)
    assert [(text[d.start:d.end], d.label, d.score, d.source) for d in cut] == [
        ("Emperor Norton", "PERSON", 0.4, "model"), ("Joshua Norton", "PERSON", 0.4, "model"),
        ("Ann", "ORG", 0.7, "model+patterns"), ("Lee said", "ORG", 0.7, "model+patterns")]  # blank tail dropped
    within = [Span(0, 7, "PERSON"), Span(8, 14, "PERSON")]
    assert cut_at_breaks(text, within) == within  # nothing to cut: as they were


class _Nested:
    """A detector that finds an organisation running over a line break, with a person inside it."""

    name = "model"
    labels = ("ORG", "PERSON")

    def analyze(self, texts: Sequence[str], min_score: float) -> list[list[Detection]]:
        return [[Detection(4, 28, "ORG", 0.8, self.name), Detection(4, 17, "PERSON", 0.7, self.name)]
                for _ in texts]


def test_cutting_at_a_line_break_never_takes_protection_from_a_nested_span_of_another_type() -> None:
    text = "the Joshua Norton\nFoundation gave"
    thresholds = Thresholds(0.1)

    def found(labels: list[str] | None) -> list[tuple[str, str]]:
        (doc,) = analyze([_Nested()], [text], thresholds, labels, view=VIEW)
        return [(text[d.start:d.end], d.label) for d in doc]

    assert found(["PERSON"]) == [("Joshua Norton", "PERSON")]
    assert found(["ORG"]) == [("Joshua Norton", "ORG"), ("Foundation", "ORG")]
    assert sorted(found(None)) == sorted([*found(["ORG"]), *found(["PERSON"])])  # each type's as when asked alone


def test_detect_offsets_index_the_input_text() -> None:
    text = "Report  filed\n\n by<br />Ann Lee\tand\r\n<br />  Bo   Ek, mail ann.lee@example.org\n"
    (found,) = run_recognizers(RECOGNIZERS, [text], DETECTION, view=VIEW)
    assert [(text[d.start:d.end], d.label, d.source) for d in found] == [
        ("Ann Lee", "PERSON", "names"), ("Bo   Ek", "PERSON", "names"),
        ("ann.lee@example.org", "EMAIL", "patterns")]
    for text, spans in zip(TEXTS, _detected(TEXTS), strict=True):
        assert all(text[s.start:s.end] == text[s.start:s.end].strip() for s in spans)
    assert ["Cafe\u0301 Zo\u00eb", "bo@example.org"] == [TEXTS[2][s.start:s.end] for s in _detected(TEXTS)[2]]


def test_textsift_detect_and_the_library_return_offsets_into_the_file_as_given(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(tiny_params(detection__recognizers=["patterns"])), encoding="utf-8")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": t, "label": "x"}) + "\n" for i, t in enumerate(TEXTS)),
                      encoding="utf-8")
    output = tmp_path / "spans.parquet"
    detect_file(source, output, SourceParams(kind="file", path=str(source)), params, tmp_path, with_text=True)
    rows = pq.read_table(output).to_pylist()
    assert [[(c["text"], c["label"]) for c in r["spans"]] for r in rows][:3] == [
        [("+44 20 7946 0958", "PHONE"), ("ann.lee@example.org", "EMAIL")], [("12/03/1981", "DATE")],
        [("bo@example.org", "EMAIL")]]
    assert all(TEXTS[i][c["start"]:c["end"]] == c["text"] for i, r in enumerate(rows) for c in r["spans"])
    library = detect(TEXTS, root=tmp_path, params_path=params)
    assert [[(s.start, s.end) for s in doc] for doc in library] == [[(c["start"], c["end"]) for c in r["spans"]]
                                                                     for r in rows]


def test_the_served_recognizer_set_returns_input_offsets() -> None:
    resources = ServedResources(parse_params({"detection": {"recognizers": ["patterns"]}}), {})
    docs = Documents(TEXTS, [f"d{i}" for i in range(len(TEXTS))], [[] for _ in TEXTS])
    found = [[(text[s.start:s.end], s.label) for s in doc] for text, doc in zip(TEXTS, resources.detected(docs, None),
                                                                                strict=True)]
    assert found[:2] == [[("+44 20 7946 0958", "PHONE"), ("ann.lee@example.org", "EMAIL")],
                         [("12/03/1981", "DATE")]]
    out = Redaction().privatize(docs, RedactSetting(kind="redact", style="pseudonym"), resources, 5).texts
    for text, doc, new in zip(TEXTS, resources.detected(docs, None), out, strict=True):
        assert _kept_outside(text, [(r.start, r.end) for r in outermost(consistent_spans(text, doc))], new)


@pytest.mark.parametrize("style", ["placeholder", "pseudonym"])
def test_redaction_keeps_every_byte_outside_the_regions_it_replaces(style: str) -> None:
    setting = RedactSetting(kind="redact", style=style)
    for text, spans in zip(TEXTS, _detected(TEXTS), strict=True):
        regions = outermost(consistent_spans(text, spans))
        out, count = redact_text(text, spans, setting, 3, "doc")
        assert count == len(regions) and _kept_outside(text, [(r.start, r.end) for r in regions], out)
        if style == "placeholder":
            assert out == _splice(text, regions, lambda r: f"[{r.label}]")
    second = _detected(TEXTS)[1]
    out, _ = redact_text(TEXTS[1], second, RedactSetting(kind="redact", style="placeholder"), 3, "doc")
    assert out == ("\n\nReview:<br />I met  [PERSON]\n  [PERSON] on [DATE] in Mu\u0308nchen.<BR/>Jose\u0301 said: "
                   "call [PERSON]!\t\n")  # the repeat across a line break is found too, each line's part replaced
    wrapped, _ = redact_text(TEXTS[1], second, RedactSetting(kind="redact", style="pseudonym"), 3, "doc")
    match = re.search(r"I met  (\w+)\n  (\w+) on", wrapped)  # the line break kept between the stand-in's parts
    assert match and f"call {match[1]} {match[2]}!" in wrapped and "Ann" not in wrapped and "Lee" not in wrapped


class _Exact:
    """Exact nearest item (numpy): the searcher of a tiny vocabulary."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def nearest(self, queries: np.ndarray) -> np.ndarray:
        return ((queries[:, None, :] - self.vectors[None]) ** 2).sum(-1).argmin(1)


def _metric_dp(texts: Sequence[str], epsilon: float) -> list[str]:
    vocabulary = sorted({t.text.lower() for text in texts for t in metric_dp_words(text)} | {"br"})
    vectors = rng.generator(3, "test", "vocab").standard_normal((len(vocabulary), 8)).astype(np.float32)
    privatizer = MetricDPPrivatizer(StaticEmbedder(vocabulary, vectors, True), _Exact(vectors), vocabulary,
                                    epsilon=epsilon, beta=0.7)
    return privatize_shard(privatizer, list(texts), [f"d{i}" for i in range(len(texts))], key=1).texts


def test_metric_dp_replaces_words_only_and_keeps_markup_breaks_and_accents() -> None:
    out = _metric_dp(TEXTS, epsilon=0.5)
    assert sum(a != b for a, b in zip(TEXTS, out, strict=True)) >= 3
    for text, new in zip(TEXTS, out, strict=True):
        tokens = metric_dp_words(text)
        assert "br" not in {t.text.lower() for t in tokens} and "\u0301" not in {t.text for t in tokens}
        assert _kept_outside(text, [(t.start, t.end) for t in tokens], new)
        for layout in ("\r\n", "\t", "\n\n", "<br />", "<BR/>"):
            assert new.count(layout) == text.count(layout)
    assert "Cafe\u0301" in [t.text for t in metric_dp_words(TEXTS[2])]  # the accent is part of its word


def test_words_take_their_accents_and_markup_holds_none() -> None:
    text = "l'e\u0301te\u0301<br />Zoe\u0308 <BR>br"
    assert [t.text for t in words(text)] == ["l'e\u0301te\u0301", "Zoe\u0308", "br"]
    assert [t.text for t in metric_dp_words(text)] == ["l", "e\u0301te\u0301", "Zoe\u0308", "br"]


def test_ingest_keeps_text_and_gold_spans_as_given_and_dedupes_normalized_forms() -> None:
    text = TEXTS[0]
    gold = (Span(text.index("Ann"), text.index("Ann") + 7, "PERSON"),)
    records = [RawRecord("a", text, "x", 1, b"", gold),
               RawRecord("b", "  plain\ttext  without\nanything ", "x", 2, b""),
               RawRecord("c", TEXTS[3], "x", 3, b""), RawRecord("d", "<br />\r\n", "x", 4, b"")]
    clean, rejects, _ = validate_records(records, IngestParams())
    assert [(r.doc_id, r.text, r.spans) for r in clean] == [("a", text, gold), ("b", records[1].text, ())]
    assert {row["doc_id"]: row["reason"] for row in rejects.rows} == {"c": "duplicate_text", "d": "empty"}
    normalized, _, _ = validate_records(records[:1], IngestParams(normalize=NormalizeParams(output=True)))
    (record,) = normalized
    assert record.text == normalize_piece(text, VIEW).strip()
    assert record.text[record.spans[0].start:record.spans[0].end] == "Ann Lee"


def _gum_texts(folder: Path, genres: Sequence[str]) -> list[str]:
    """One document of each genre, its sentences laid out in a different way each (CRLF, tabs, ``<br />``, blank
    lines, double spaces): real text in the layouts users' files have."""
    layouts = [("\n\n", "\n"), ("\r\n\r\n\t", "  "), ("<br /><br />", " "), ("\n \n", "\t")]
    texts = []
    for genre, (paragraph, sentence) in zip(genres, itertools.cycle(layouts)):
        path = sorted(folder.glob(f"GUM_{genre}_*.conllu.gz"))[0]
        paragraphs: list[list[str]] = []
        for line in gzip.open(path, "rt", encoding="utf-8"):
            if line.startswith("# newpar") and not line.startswith("# newpar_") or not paragraphs:
                paragraphs.append([])
            if line.startswith("# text = "):
                paragraphs[-1].append(line[len("# text = "):].rstrip("\n"))
        texts.append("  " + paragraph.join(sentence.join(p) for p in paragraphs if p) + "\n")
    return texts


def test_real_documents_keep_every_byte_outside_replaced_spans(shared_data: Path) -> None:
    folder = shared_data / "gum" / "conllu"
    if not folder.is_dir():
        pytest.skip("GUM is absent from ../shared/data")
    texts = _gum_texts(folder, ["court", "bio", "letter", "news"])
    detected = _detected(texts)
    assert sum(map(len, detected)) > 50
    for text, spans in zip(texts, detected, strict=True):
        assert all(text[s.start:s.end] == text[s.start:s.end].strip() for s in spans)
        regions = outermost(consistent_spans(text, spans))
        out, _ = redact_text(text, spans, RedactSetting(kind="redact", style="placeholder"), 3, "doc")
        assert out == _splice(text, regions, lambda r: f"[{r.label}]")
    for text, new in zip(texts, _metric_dp(texts, epsilon=1.0), strict=True):
        assert _kept_outside(text, [(t.start, t.end) for t in metric_dp_words(text)], new)


def test_concurrent_first_requests_load_the_served_recognizers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """/privatize's batch and /analyze may need the detector at the same moment: one of them loads it."""
    import threading
    import time

    import textsift.serving.resources as served

    loads: list[int] = []
    real = served.recognizer_set

    def slow_load(*args: object) -> list:
        loads.append(1)
        time.sleep(0.2)  # a detector load takes seconds: long enough for every thread to ask meanwhile
        return real(*args)

    monkeypatch.setattr(served, "recognizer_set", slow_load)
    resources = ServedResources(parse_params({"detection": {"recognizers": ["patterns"]}}), {})
    docs = Documents(TEXTS[:2], ["a", "b"], [[], []])
    found: list = []
    threads = [threading.Thread(target=lambda: found.append(resources.detected(docs, None))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(loads) == 1 and len(found) == 4 and all(f == found[0] for f in found)


def test_joined_requests_naming_other_entity_types_are_each_privatized_with_their_own() -> None:
    """The batcher joins requests; one that asks to protect phone numbers too must get them replaced, and one that
    asks nothing must get only what the setting protects (e-mails here)."""
    import pandas as pd

    from textsift.errors import InputError
    from textsift.secret_key import new_key
    from textsift.serving.model import ENTITIES, PrivatizerModel

    model = PrivatizerModel()
    model.params = parse_params({"detection": {"recognizers": ["patterns"]}})
    model.setting = RedactSetting(kind="redact", style="placeholder", labels=["EMAIL"])
    model.mechanism, model.key = Redaction(), new_key()
    model.resources = ServedResources(model.params, {})
    text = "Write to ann.lee@example.org or call +44 20 7946 0958 today."
    frame = pd.DataFrame({"id": ["a", "b", "c"], "text": [text] * 3, ENTITIES: [None, "EMAIL,PHONE", None]})
    out = model.predict(None, frame)
    assert list(out["id"]) == ["a", "b", "c"]
    assert [("ann.lee" in t, "7946" in t) for t in out["text"]] == [(False, True), (False, False), (False, True)]
    assert all(t.startswith("Write to ") and t.endswith(" today.") for t in out["text"])
    for answer, replaced in zip(out["text"], out["replaced"], strict=True):  # where each stand-in lies in the answer
        assert [(answer[r["start"]:r["end"]], r["type"]) for r in replaced] == [
            (f"[{r['type']}]", r["type"]) for r in replaced]
    assert [[r["type"] for r in row] for row in out["replaced"]] == [["EMAIL"], ["EMAIL", "PHONE"], ["EMAIL"]]
    with pytest.raises(InputError, match=r"never leave one out \(missing: EMAIL\)"):
        model.predict(None, frame.assign(**{ENTITIES: ["PHONE"] * 3}))


def test_a_requests_threshold_finds_more_never_less_and_joined_requests_keep_their_own() -> None:
    """A year after a cue scores 0.6 and a full date 0.85 (the pattern recognizer); served at 0.7, the year stays.
    A request at 0.55 (taken down to 0.5) gets it replaced too; one at 1 (above the served threshold) still gets the
    date replaced."""
    import pandas as pd

    from textsift.errors import InputError
    from textsift.secret_key import new_key
    from textsift.serving.model import THRESHOLD, PrivatizerModel

    model = PrivatizerModel()
    model.params = parse_params({"detection": {"recognizers": ["patterns"], "threshold": 0.7}})
    model.setting = RedactSetting(kind="redact", style="placeholder", labels=["DATE"])
    model.mechanism, model.key = Redaction(), new_key()
    model.resources = ServedResources(model.params, {})
    text = "Born in 1981, she moved on 12 September 1999."
    frame = pd.DataFrame({"id": ["a", "b", "c"], "text": [text] * 3, THRESHOLD: [None, 0.55, 1.0]})
    out = list(model.predict(None, frame)["text"])
    assert ["1981" in t for t in out] == [True, False, True]
    assert not any("1999" in t for t in out) and all(t.startswith("Born in ") for t in out)
    (served,), (lowered,) = model.analyze([text]), model.analyze([text], None, 0.5)
    assert [text[s.start:s.end] for s in served] == ["12 September 1999"]
    assert [text[s.start:s.end] for s in lowered] == ["1981", "12 September 1999"]
    with pytest.raises(InputError, match=r'"threshold" must be in \[0.02, 1\]'):
        model.predict(None, frame.assign(**{THRESHOLD: [0.01] * 3}))
    nullable = frame.assign(**{THRESHOLD: pd.array([None, 0.55, 1.0], dtype="Float64")})  # NA, not NaN: no threshold
    assert list(model.predict(None, nullable)["text"]) == list(model.predict(None, frame)["text"])
