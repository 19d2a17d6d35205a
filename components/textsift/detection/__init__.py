"""Training data for the privacy detectors (METHODS.md §4): synthetic nested-entity sentences and
the detector's train/validation/test sets."""

from textsift.detection.params import ENTITY_TYPES
from textsift.detection.synthetic import LabelledText, generate

__all__ = ["ENTITY_TYPES", "LabelledText", "generate"]
