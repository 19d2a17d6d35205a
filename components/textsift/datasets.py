"""Which datasets a stage instance read and wrote, as MLflow sees them: name, digest, size — never rows.

Every stage run records its Parquet inputs and outputs (and ingest its source file) in the run's
"Datasets" panel of the MLflow UI: the same digest (SHA-256 of the file, the one the flow's stage
cache uses) in two runs means they saw the same bytes. Rows are counted from the Parquet footer;
no cell is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from textsift.config import Params, select
from textsift.dvc_render import stage_deps
from textsift.registry import StageInstance
from textsift.stage_cache import content_digest


@dataclass(frozen=True)
class DatasetRecord:
    name: str
    path: Path
    digest: str
    context: str  # "source" (raw input file), "input" or "output"
    profile: dict[str, int]


def _record(root: Path, relative: str, context: str) -> DatasetRecord | None:
    path = (root / relative).resolve()
    if not path.is_file():
        return None
    profile = {"bytes": path.stat().st_size}
    if path.suffix == ".parquet":
        profile["rows"] = pq.read_metadata(path).num_rows
    return DatasetRecord(relative, path, content_digest(path), context, profile)


def stage_datasets(instance: StageInstance, params: Params, root: Path) -> list[DatasetRecord]:
    """The instance's Parquet deps (``input``: declared and fanned-out upstream outputs, as in dvc.yaml), its
    Parquet outputs (``output``) and the raw files its params name (``source``: ingest's corpus file)."""
    stage = instance.stage
    sources = [str(value) for key in stage.input_params if (value := select(params, key))]
    inputs = [instance.path(d) for d in stage_deps(stage, params, instance.key)
              if d.endswith(".parquet") and d not in sources]
    outputs = [p for p in instance.outs if p.endswith(".parquet")]
    records = [_record(root, path, context) for paths, context in ((sources, "source"), (inputs, "input"),
                                                                   (outputs, "output")) for path in paths]
    return [record for record in records if record is not None]
