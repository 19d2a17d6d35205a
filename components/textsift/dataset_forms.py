"""What is inside each catalog artifact, and how it is loaded and saved: its form.

The catalog (:mod:`textsift.catalog`) names each artifact's path, producer and form; a stage reads and writes
through ``ctx.load(name)`` / ``ctx.save(name, value)`` (:class:`textsift.stage_context.StageContext`), so no stage
knows another's file layout. Every save is atomic (the old file stays whole until the new one is complete) and gives
the same bytes for the same value, which is what DVC and the flow's stage cache compare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from textsift.corpus import atomic_path, corpus_table, read_corpus, write_json, write_table
from textsift.errors import StageError


def is_timing(key: str) -> bool:
    """Whether metric ``key`` is a timing (``*_per_s``, ``*seconds``): it varies run to run, so no file keeps it."""
    return key.endswith(("_per_s", "seconds", "per_second"))


class Form:
    """How one kind of artifact is loaded and saved; a form that cannot do one says which artifact it is."""

    def load(self, path: Path) -> Any:
        """The artifact at ``path``."""
        raise StageError(f"{path.name} is not loaded through the catalog")

    def save(self, value: Any, path: Path) -> None:
        """Write ``value`` to ``path`` atomically."""
        raise StageError(f"{path.name} is not saved through the catalog")


class Corpus(Form):
    """A canonical corpus table (ids, text, label, split, gold spans, interest): a pandas frame."""

    def load(self, path: Path) -> pd.DataFrame:
        """The corpus frame."""
        return read_corpus(path)

    def save(self, value: pd.DataFrame, path: Path) -> None:
        """The frame as the canonical Parquet table."""
        write_table(corpus_table(value), path)


class Table(Form):
    """A Parquet table: saved from an Arrow table, loaded as a pandas frame."""

    def load(self, path: Path) -> pd.DataFrame:
        """The table as a frame."""
        return pq.read_table(path).to_pandas()

    def save(self, value: pa.Table, path: Path) -> None:
        """The Arrow table, reproducibly (:func:`textsift.corpus.write_table`)."""
        write_table(value, path)


class Json(Form):
    """A JSON document, keys sorted."""

    def load(self, path: Path) -> Any:
        """The parsed document."""
        return json.loads(path.read_text(encoding="utf-8"))

    def save(self, value: Any, path: Path) -> None:
        """The document, keys sorted (stable bytes)."""
        write_json(value, path)


class Metrics(Json):
    """A stage's DVC metrics file: every metric except timings, each as a float (a count is 9 when just trained and
    9.0 when read back from a cache: one value, one set of bytes)."""

    def save(self, value: dict[str, float], path: Path) -> None:
        """The metrics, timings left out."""
        write_json({k: float(v) for k, v in value.items() if not is_timing(k)}, path)


class Csv(Form):
    """A report table: a frame written without its index, floats to 6 decimals."""

    def load(self, path: Path) -> pd.DataFrame:
        """The table as a frame; only an empty cell is missing (a setting may be called "nan" or "null")."""
        return pd.read_csv(path, keep_default_na=False, na_values=[""])

    def save(self, value: pd.DataFrame, path: Path) -> None:
        """The frame as CSV."""
        with atomic_path(path) as tmp:
            value.to_csv(tmp, index=False, float_format="%.6f")


class Blob(Form):
    """Opaque bytes (a plot, the sealed vault) or text (the HTML report, saved as UTF-8)."""

    def load(self, path: Path) -> bytes:
        """The bytes."""
        return path.read_bytes()

    def save(self, value: bytes | str, path: Path) -> None:
        """The bytes, or the text as UTF-8."""
        with atomic_path(path) as tmp:
            tmp.write_bytes(value.encode("utf-8") if isinstance(value, str) else value)


@dataclass(frozen=True)
class Custom(Form):
    """An artifact its own package reads and writes (a model pointer, an index folder, the LRP fit, detected spans):
    the stage passes its path to that package."""

    owner: str

    def load(self, path: Path) -> Any:
        """Refused: the owning package loads it."""
        raise StageError(f"{path.name} is read by {self.owner}")

    def save(self, value: Any, path: Path) -> None:
        """Refused: the owning package writes it."""
        raise StageError(f"{path.name} is written by {self.owner}")


FORMS: dict[str, Form] = {"corpus": Corpus(), "table": Table(), "json": Json(), "metrics": Metrics(), "csv": Csv(),
                          "blob": Blob()}


def form(name: str) -> Form:
    """The form called ``name`` in the catalog (a package name for an artifact its package reads and writes)."""
    return FORMS.get(name) or Custom(name)
