"""privatize@<setting> for ``kind: datasifter``: the I/O around ``textsift.mechanisms.datasifter``.

Loads the fill-in model named by ``models/fill_in.json`` (fetched from MLflow into
``.textsift/cache/models``), reads the whitelist/blacklist files (paths relative to the project
root), adds each document's privacy-span words to its whitelist when ``whitelist_spans`` is set,
and runs mask -> fill -> obfuscate over all documents in row order (METHODS.md §1). The common
privatize stage adds leak metrics and the quality checks.
"""

from __future__ import annotations

import pandas as pd

from textsift.artifacts import fill_in_folder
from textsift.corpus import spans_to_python
from textsift.device import resolve_device
from textsift.errors import ConfigError
from textsift.mechanisms.datasifter.config import DataSifterSetting
from textsift.mechanisms.datasifter.sifter import sift
from textsift.mechanisms.datasifter.wordlists import default_blacklist, parse_word_list
from textsift.models.fill_in import load_fill_in
from textsift.stages import StageContext
from textsift.stages.detected_spans import detected_spans
from textsift.tokenize import words


def _read_list(ctx: StageContext, relative: str, key: str) -> list[str]:
    path = ctx.path(relative)
    if not path.is_file():
        raise ConfigError(f"privatize.settings.{ctx.instance.key}.{key}: {relative} is not a file")
    return parse_word_list(path.read_text(encoding="utf-8"))


def word_lists(setting: DataSifterSetting, ctx: StageContext) -> tuple[list[str], list[str]]:
    """The setting's whitelist and blacklist; with neither ``blacklist`` nor a file, the default blacklist."""
    whitelist = list(setting.whitelist)
    if setting.whitelist_file:
        whitelist += _read_list(ctx, setting.whitelist_file, "whitelist_file")
    if setting.blacklist is None and setting.blacklist_file is None:
        return whitelist, sorted(default_blacklist())
    blacklist = list(setting.blacklist or [])
    if setting.blacklist_file:
        blacklist += _read_list(ctx, setting.blacklist_file, "blacklist_file")
    return whitelist, blacklist


def span_words(corpus: pd.DataFrame) -> list[list[str]]:
    """Per document, the words of its privacy spans."""
    return [
        [t.text for span in spans_to_python(spans) for t in words(text[span.start:span.end])]
        for text, spans in zip(corpus["text"], corpus["spans"], strict=True)
    ]


def privatize_texts(
    corpus: pd.DataFrame, setting: DataSifterSetting, ctx: StageContext, seed: int
) -> tuple[list[str], dict[str, float]]:
    """DataSifterText over the whole corpus; returns texts in row order and the mechanism's metrics."""
    folder = fill_in_folder(ctx.root, ctx.tracker)
    fm = load_fill_in(folder, resolve_device(ctx.params.device))
    whitelist, blacklist = word_lists(setting, ctx)
    extra = span_words(corpus) if setting.whitelist_spans else None
    protected = detected_spans(ctx, corpus, setting.labels) if setting.mask_detected else None
    result = sift(corpus["text"].tolist(), corpus["doc_id"].tolist(), setting, fm, whitelist, blacklist, seed, extra,
                  protected)
    return result.texts, result.metrics
