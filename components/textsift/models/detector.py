"""DPER: nested privacy-entity recognition, encoder -> BiLSTM -> GlobalPointer (METHODS.md §4.1).

The encoder's token states (with a character-shape embedding concatenated, since MiniLM is
uncased) run through a BiLSTM; GlobalPointer scores every span ``(i, j)`` per entity type and
every span above the threshold is a detection, nested or not. Spans start and end on word
boundaries (a word's later WordPiece pieces can neither start nor end one). ``model: flat`` swaps the head for
the BIO baseline of :mod:`textsift.models.flat_tagging`. Detection works on token windows of any
text length and returns exact character spans (:mod:`textsift.models.detector_windows`).
Training is in :mod:`textsift.models.detector_training`, saving and loading in
:mod:`textsift.models.detector_io`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from textsift.corpus import Span
from textsift.device import DetectorResolved, autocast, global_torch_rng
from textsift.models.detector_encoders import SHAPES, build_encoder, init_weights
from textsift.models.detector_windows import Window, collate, make_windows, window_scored_spans
from textsift.models.flat_tagging import FlatHead, decode_tags
from textsift.models.global_pointer import GlobalPointer, TokenSpan, decode_spans
from textsift.models.int8_linear import quantize_linears
from textsift.models.params import DetectorParams


class Example(Protocol):
    """A labelled text: ``text`` and its gold ``spans`` (nested allowed), e.g. a corpus record."""

    @property
    def text(self) -> str:
        """The labelled text."""
        ...

    @property
    def spans(self) -> Sequence[Span]:
        """The gold character spans of ``text``, nested ones allowed."""
        ...


class DetectorNet(nn.Module):
    """The network: encoder, shape embedding, dropout, BiLSTM and a GlobalPointer or flat head.

    The BiLSTM is two one-directional LSTMs, the backward one over each row reversed within its
    length (:func:`reverse_padded`): exact for padded batches, and fast on the CPU.

    Args:
        encoder: a Hugging Face encoder returning ``last_hidden_state``.
        num_types: entity types.
        params: sizes (``shape_dim``, ``lstm_hidden``, ``head_size``, ``dropout``) and ``model``.
    """

    def __init__(self, encoder: nn.Module, num_types: int, params: DetectorParams) -> None:
        super().__init__()
        self.encoder = encoder
        self.shape = nn.Embedding(len(SHAPES), params.shape_dim, padding_idx=0) if params.shape_dim else None
        self.dropout = nn.Dropout(params.dropout)
        width = int(encoder.config.hidden_size) + params.shape_dim
        self.lstm = nn.ModuleList(nn.LSTM(width, params.lstm_hidden, batch_first=True) for _ in range(2))  # -> <-
        self.head: nn.Module = (GlobalPointer(2 * params.lstm_hidden, num_types, params.head_size)
                                if params.model == "global_pointer" else FlatHead(2 * params.lstm_hidden, num_types))

    def new_modules(self) -> list[nn.Module]:
        """The modules trained from scratch (everything but a pretrained encoder)."""
        return [m for m in (self.shape, self.lstm, self.head) if m is not None]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, shapes: torch.Tensor,
                body_mask: torch.Tensor, start_mask: torch.Tensor, end_mask: torch.Tensor) -> torch.Tensor:
        """GlobalPointer scores ``[batch, types, length, length]`` or flat logits ``[batch, length, tags]``.

        Args:
            input_ids, attention_mask, shapes: ``[batch, length]`` from :func:`collate`.
            body_mask, start_mask, end_mask: the text's tokens, and those a span may start / end on.
        """
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.shape is not None:
            hidden = torch.cat((hidden, self.shape(shapes).to(hidden.dtype)), dim=-1)
        hidden = self.dropout(hidden)
        lengths = attention_mask.sum(dim=1)
        # the BiLSTM runs in float32 even under bf16 autocast: autocast runs cuDNN's RNNs in float16 whatever its
        # dtype (seen on an H100), and a float16 LSTM trained without a gradient scaler underflows
        with torch.autocast(hidden.device.type, enabled=False):
            hidden = hidden.float()
            forward, _ = self.lstm[0](hidden)
            backward, _ = self.lstm[1](reverse_padded(hidden, lengths))
        out = torch.cat((forward, reverse_padded(backward, lengths)), dim=-1)
        out = self.dropout(out)
        return self.head(out, start_mask, end_mask) if isinstance(self.head, GlobalPointer) else self.head(out)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Each row's first ``lengths[b]`` steps in reverse order, padding left in place (its own inverse).

    The BiLSTM's backward direction runs over the reversed rows: padding stays at the end, so it
    never reaches a real token's state, with no packed sequences (slow on the CPU).
    """
    steps = torch.arange(x.shape[1], device=x.device)[None, :]
    index = torch.where(steps < lengths[:, None], lengths[:, None] - 1 - steps, steps)
    return x.gather(1, index[:, :, None].expand_as(x))


@dataclass
class Detector:
    """A DPER detector (or flat baseline) ready to detect: network, tokenizer, entity types.

    Attributes:
        net: the network (eval mode unless training).
        tokenizer: the encoder's fast tokenizer (character offsets).
        labels: entity types; type index ``c`` is ``labels[c]``.
        params: the parameters it was built with.
        device: ``"cpu"`` or ``"cuda"``.
        thresholds: per-type confidence thresholds chosen on held-out annotated text after training
            (:mod:`textsift.detection.calibration`); empty for an uncalibrated detector.
    """

    net: DetectorNet
    tokenizer: Any
    labels: tuple[str, ...]
    params: DetectorParams
    device: str = "cpu"
    thresholds: dict[str, float] = field(default_factory=dict)


def set_precision(net: DetectorNet, precision: DetectorResolved) -> DetectorNet:
    """``net`` with its encoder converted in place to ``precision`` (params ``detection.inference_precision``,
    resolved): bfloat16 weights, or int8 linear layers (:mod:`textsift.models.int8_linear`); the BiLSTM and head stay
    float32. For inference only: the converted layers do not train."""
    if precision == "bfloat16":
        net.encoder.to(torch.bfloat16)
    elif precision == "int8":
        quantize_linears(net.encoder)
    return net


def in_precision(detector: Detector, precision: DetectorResolved) -> Detector:
    """``detector`` for inference in ``precision``: itself for float32, else a copy with its encoder converted
    (:func:`set_precision`), the trained detector left as it is. Calibration runs the copy the detection stages will
    run, so each threshold is chosen on the scores it is compared with."""
    if precision == "float32":
        return detector
    return replace(detector, net=set_precision(copy.deepcopy(detector.net).eval(), precision))


def build_detector(params: DetectorParams, labels: Sequence[str], generator: torch.Generator,
                   encoder_folder: str | Path | None = None, device: str = "cpu") -> Detector:
    """A new detector: the configured encoder and seeded new layers (from ``generator``).

    Args:
        params: the detector parameters.
        labels: the entity types to detect (order fixes the type indices).
        generator: CPU generator for every freshly initialized weight.
        encoder_folder: the folder of ``encoder: fill_in`` (or a folder overriding ``encoder``).
        device: where the network is placed.
    """
    if not labels or len(set(labels)) != len(labels):
        raise ValueError(f"detector labels must be distinct and non-empty, got {list(labels)}")
    encoder, tokenizer = build_encoder(params, generator, encoder_folder)
    with global_torch_rng():  # module constructors draw from the global RNG
        net = DetectorNet(encoder, len(labels), params)
    for module in net.new_modules():
        init_weights(module, generator)
    return Detector(net.to(device).eval(), tokenizer, tuple(labels), params, device)


def decode(detector: Detector, output: torch.Tensor, body_mask: torch.Tensor,
           threshold: float | None = None) -> list[list[TokenSpan]]:
    """Token spans per window from the network output (GlobalPointer scores above ``threshold``,
    default ``params.threshold``, or BIO tags)."""
    if detector.params.model == "global_pointer":
        return decode_spans(output, detector.params.threshold if threshold is None else threshold)
    return decode_tags(output, body_mask)


def forward_windows(detector: Detector, windows: Sequence[Window]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(network output, body mask)`` of a batch of windows (bf16 autocast on CUDA when configured)."""
    batch = collate(windows, detector.device, detector.tokenizer.pad_token_id or 0)
    with autocast(detector.device, detector.params.mixed_precision):
        return detector.net(**batch), batch["body_mask"]


def probability(logit: float) -> float:
    """A GlobalPointer score as a confidence in [0, 1]: the logistic of the score, so the trained
    decision point (score 0, eq. (9)) is 0.5."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -60.0), 60.0)))


def logit(p: float) -> float:
    """The GlobalPointer score of confidence ``p`` (the inverse of :func:`probability`)."""
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def span_confidences(detector: Detector, output: torch.Tensor, decoded: Sequence[Sequence[TokenSpan]]
                     ) -> list[list[float]]:
    """Per window of a batch, the confidence of each decoded span (:func:`probability` of its GlobalPointer score,
    read for the whole batch at once; 1 for the flat baseline's spans)."""
    if detector.params.model != "global_pointer":
        return [[1.0] * len(spans) for spans in decoded]
    cells = [(row, c, i, j) for row, spans in enumerate(decoded) for c, i, j in spans]
    values = output[tuple(torch.tensor(cells, dtype=torch.long).T)].tolist() if cells else []
    it = iter(values)
    return [[probability(next(it)) for _ in spans] for spans in decoded]


def detect_scored(detector: Detector, texts: Sequence[str], batch_size: int | None = None,
                  min_confidence: float | None = None) -> list[list[tuple[Span, float]]]:
    """Privacy entities of each text with a confidence in [0, 1] (METHODS.md §4.1).

    Windows of all texts are sorted by length and run ``batch_size`` at a time (default
    ``params.inference_batch_size``) under ``torch.inference_mode``; a span found by two overlapping
    windows is kept once, with its higher confidence. GlobalPointer confidences are the logistic of
    the span score (:func:`probability`); the flat baseline's spans have confidence 1.

    Args:
        detector: a built, trained or loaded detector.
        texts: any lengths; an empty text gives no spans.
        batch_size: windows per forward pass.
        min_confidence: keep spans above this (default: the trained ``params.threshold``); a caller
            that applies per-type thresholds decodes at the lowest of them.

    Returns:
        Per text, in input order: ``(span, confidence)`` sorted by ``(start, end, label)``; nested spans included.
    """
    size = batch_size or detector.params.inference_batch_size
    threshold = detector.params.threshold if min_confidence is None else logit(min_confidence)
    windows = make_windows(detector.tokenizer, texts, detector.params.max_length, detector.params.stride)
    order = sorted(range(len(windows)), key=lambda w: (-len(windows[w].input_ids), w))
    found: list[dict[Span, float]] = [{} for _ in texts]
    detector.net.eval()
    with torch.inference_mode():
        for start in range(0, len(order), size):
            batch = [windows[w] for w in order[start:start + size]]
            output, body_mask = forward_windows(detector, batch)
            decoded = decode(detector, output, body_mask, threshold)
            for window, spans, scores in zip(batch, decoded, span_confidences(detector, output, decoded), strict=True):
                kept = found[window.text_index]
                for span, score in window_scored_spans(window, spans, scores, detector.labels,
                                                       texts[window.text_index]):
                    kept[span] = max(score, kept.get(span, 0.0))
    return [sorted(spans.items(), key=lambda item: (item[0].start, item[0].end, item[0].label)) for spans in found]


def detect(detector: Detector, texts: Sequence[str], batch_size: int | None = None) -> list[list[Span]]:
    """Privacy entities of each text as exact character spans, at the trained threshold.

    :func:`detect_scored` without the confidences: per text, in input order, spans sorted by
    ``(start, end, label)``; nested spans included.
    """
    return [[span for span, _ in doc] for doc in detect_scored(detector, texts, batch_size)]
