"""privatize@<setting> for ``kind: datasifter``: the I/O around ``textsift.mechanisms.datasifter``.

Loads the fill-in model named by ``models/fill_in.json`` (fetched from MLflow into
``.textsift/cache/models``), reads the whitelist/blacklist files (paths relative to the project
root), adds each document's privacy-span words to its whitelist when ``whitelist_spans`` is set,
and runs mask -> fill -> obfuscate over all documents in row order (METHODS.md §1). The common
privatize stage adds leak metrics and the quality checks.
"""

from __future__ import annotations

from typing import Any

from textsift.mechanisms.base import Documents, Mechanism, PrivatizeResult, Resources
from textsift.mechanisms.datasifter.params import DataSifterSetting
from textsift.mechanisms.datasifter.sifter import sift
from textsift.mechanisms.datasifter.wordlists import default_blacklist
from textsift.rng import Key
from textsift.tokenize import words
from textsift.word_lists import parse_word_list


def word_lists(setting: DataSifterSetting, resources: Resources) -> tuple[list[str], list[str]]:
    """The setting's whitelist and blacklist; with neither ``blacklist`` nor a file, the default blacklist."""
    whitelist = list(setting.whitelist)
    if setting.whitelist_file:
        whitelist += parse_word_list(resources.read_text(setting.whitelist_file, "whitelist_file"))
    if setting.blacklist is None and setting.blacklist_file is None:
        return whitelist, sorted(default_blacklist())
    blacklist = list(setting.blacklist or [])
    if setting.blacklist_file:
        blacklist += parse_word_list(resources.read_text(setting.blacklist_file, "blacklist_file"))
    return whitelist, blacklist


def span_words(docs: Documents) -> list[list[str]]:
    """Per document, the words of its privacy spans."""
    return [[t.text for span in spans for t in words(text[span.start:span.end])]
            for text, spans in zip(docs.texts, docs.gold, strict=True)]


class DataSifter(Mechanism):
    """DataSifterText: mask, fill and swap keyphrases between documents (METHODS.md §1)."""

    per_document = False  # keyphrases are swapped between documents of the corpus (§1.4)

    def serving_refusal(self, setting: DataSifterSetting, params: Any) -> str | None:
        """Not served: it fills from the corpus-trained model and swaps keyphrases between corpus documents."""
        return "it fills from the corpus-trained model and swaps keyphrases between corpus documents"

    def document_wise(self, setting: DataSifterSetting) -> bool:
        """Whether a document's output depends on the document, its id and the key alone under ``setting``: without
        keyphrase swapping (``replacement: none``) it does, as masking and fill-in draw per document (§1.2-1.3)."""
        return setting.replacement == "none"

    def privatize(self, docs: Documents, setting: DataSifterSetting, resources: Resources, key: Key, *,
                  vault: bool = False) -> PrivatizeResult:
        """DataSifterText over the documents; texts in input order and the mechanism's metrics."""
        whitelist, blacklist = word_lists(setting, resources)
        extra = span_words(docs) if setting.whitelist_spans else None
        protected = resources.detected(docs, setting.labels) if setting.mask_detected else None
        result = sift(docs.texts, docs.draw_names, setting, resources.fill_in(), whitelist, blacklist, key, extra,
                      protected)
        return PrivatizeResult(result.texts, result.metrics)
