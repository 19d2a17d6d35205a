"""The recognizer set of params ``detection`` (METHODS.md §4.1)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from textsift.corpus import Span
from textsift.detection.params import DetectionParams
from textsift.detection.recognizers.base import Detection, Recognizer
from textsift.detection.recognizers.merge import Thresholds, analyze, candidates
from textsift.detection.recognizers.model import ModelRecognizer
from textsift.detection.recognizers.name_cues import NameCueRecognizer
from textsift.detection.recognizers.org_cues import OrgCueRecognizer
from textsift.detection.recognizers.patterns import PatternRecognizer
from textsift.detection.recognizers.spacy_ner import SpacyRecognizer
from textsift.ingest_params import NormalizeParams
from textsift.models.detector import Detector

# model windows per forward pass on a CPU when params name none: a batch's span scores ([windows, types, 128, 128]
# float32: 10 MB at 16, 42 MB at the detector's 64) stay in cache. The default path on 2 cores, best of 3 interleaved:
# GUM test 34,200 -> 44,900 chars/s, GENTLE 29,300 -> 36,600, tweets alike (BTC 37,900 / 37,000, WNUT-17 31,800 /
# 35,800); 8 is slower on tweets. The same spans (confidences within 1e-6: products round per batch shape)
CPU_WINDOWS = 16


def model_batch_size(params: DetectionParams, detector: Detector) -> int:
    """Windows per forward pass of the model recognizer: params ``detection.batch_size``, else :data:`CPU_WINDOWS` on
    a CPU and the detector's ``inference_batch_size`` on an accelerator (whose throughput grows with the batch)."""
    if params.batch_size is not None:
        return params.batch_size
    if detector.device == "cpu":
        return min(CPU_WINDOWS, detector.params.inference_batch_size)
    return detector.params.inference_batch_size


def build_recognizers(params: DetectionParams, detector: Detector | None) -> list[Recognizer]:
    """The recognizers ``params.recognizers`` names, in that order (``model`` needs ``detector``)."""
    out: list[Recognizer] = []
    for name in params.recognizers:
        if name == "model":
            if detector is None:
                raise ValueError("detection.recognizers names model, but no trained detector was given")
            out.append(ModelRecognizer(detector, model_batch_size(params, detector)))
        elif name == "patterns":
            out.append(PatternRecognizer())
        elif name == "name_cues":
            out.append(NameCueRecognizer())
        elif name == "org_cues":
            out.append(OrgCueRecognizer())
        else:
            out.append(SpacyRecognizer(params.spacy_pipeline))
    return out


def recognizer_set(params: DetectionParams, detector_folder: Path | None, device: str) -> list[Recognizer]:
    """:func:`build_recognizers` with the trained detector loaded from ``detector_folder`` when ``model`` is one, its
    encoder in ``params.inference_precision``."""
    from textsift.device import resolve_detector_precision
    from textsift.models.detector_io import load_detector

    detector = None
    if "model" in params.recognizers:
        if detector_folder is None:
            raise ValueError("detection.recognizers names model, but no trained detector was given")
        detector = load_detector(detector_folder, device,
                                 resolve_detector_precision(params.inference_precision, device))
    return build_recognizers(params, detector)


def run_recognizers(recognizers: Sequence[Recognizer], texts: Sequence[str], params: DetectionParams,
                    labels: Sequence[str] | None = None, *, view: NormalizeParams,
                    ceiling: float | None = None) -> list[list[Detection]]:
    """Every recognizer over ``texts``, each detection at its threshold (:func:`thresholds_of`), merged with provenance.

    The one way into the recognizer set (the detect stage, privatize's detection of new texts, ``textsift detect``,
    the library's ``detect()``, the served privatizer): recognizers read each text's model view (``view``: params
    ``ingest.normalize``) and every offset returned indexes ``texts`` themselves. ``ceiling``: no threshold above it
    (a served request's ``threshold``: it may find more, never less)."""
    needs = thresholds_of(recognizers, params)
    return analyze(recognizers, texts, needs if ceiling is None else needs.at_most(ceiling), labels, view=view)


def recognizer_candidates(recognizers: Sequence[Recognizer], texts: Sequence[str], params: DetectionParams, *,
                          view: NormalizeParams) -> list[list[Detection]]:
    """Every span each text passed a threshold for, with every type it passed for (:func:`~textsift.detection.
    recognizers.merge.candidates`): what the detect stage stores, so each setting resolves the types it protects
    (:func:`~textsift.detection.recognizers.merge.resolve`) as :func:`run_recognizers` would for it."""
    return candidates(recognizers, texts, thresholds_of(recognizers, params), view=view)


def thresholds_of(recognizers: Sequence[Recognizer], params: DetectionParams) -> Thresholds:
    """What each detection needs: ``params.thresholds`` per type; the trained detector's calibrated thresholds for
    its own detections (when ``params.calibrated`` and the set has the model); ``params.threshold`` otherwise."""
    calibrated = next((r.detector.thresholds for r in recognizers if isinstance(r, ModelRecognizer)), {})
    return Thresholds(params.threshold, dict(params.thresholds), calibrated if params.calibrated else {})


def spans_of(detections: Sequence[Sequence[Detection]]) -> list[list[Span]]:
    """The plain spans of merged detections (per text)."""
    return [[d.span for d in doc] for doc in detections]
