"""One exception hierarchy for textsift.

Messages name record ids, keys, files and counts — never the raw text of a document,
because exception messages end up in Prefect logs and MLflow run metadata.
"""

from __future__ import annotations


class TextsiftError(Exception):
    """Base class of every error textsift raises on purpose (never retried by the flow)."""


class ConfigError(TextsiftError):
    """params.yaml is missing, malformed, or holds an invalid or unsafe value."""


class InputError(TextsiftError):
    """The input corpus cannot be read, or too many of its records are bad."""


class QualityError(TextsiftError):
    """A Great Expectations suite failed on a stage output; the message names the expectations."""


class StageError(TextsiftError):
    """A stage was asked to run without its inputs, or under an unknown name."""


class StorageError(TextsiftError):
    """A file textsift reads or writes is damaged, or the disk it goes to is full; the message names the file and
    the fix."""
