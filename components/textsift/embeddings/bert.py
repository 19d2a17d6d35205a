"""BERT embeddings: the static input-embedding table and the contextual first hidden state.

METHODS.md §2. ``bert_static``: the vocabulary is the whole-word entries of the WordPiece
vocabulary (no ``##`` pieces, special or ``[unused]`` tokens, punctuation), each with its row
of the input embedding table. ``bert_contextual``: a word's vector is the notebook's "first
layer", hidden state 0, averaged over the word's pieces. For a BERT, hidden state 0 is the
output of the embeddings module (word + position + segment embeddings, layer-normed) and
depends only on the piece and its position, so only that module is run: exact, and far
cheaper than the full encoder. A vocabulary without upper-case entries means an uncased model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from textsift.embeddings.vectors import WordVectors
from textsift.models.loading import hf_folders, load_pretrained
from textsift.tokenize import is_metric_dp_word, lookup_key

WordSpan = tuple[int, int, int]  # (window, first piece position, end position)


def load_bert(folder: Path, device: str) -> tuple[Any, Any]:
    """(tokenizer, model) from a local folder (plain or MLflow layout), in eval mode on ``device``."""
    model_dir, tokenizer_dir = hf_folders(folder)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, str(tokenizer_dir))
    model = load_pretrained(AutoModel.from_pretrained, str(model_dir)).to(device).eval()
    return tokenizer, model


def whole_words(tokenizer: Any) -> list[tuple[str, int]]:
    """(word, token id) of the WordPiece vocabulary's whole-word entries, by id."""
    special = set(tokenizer.all_special_tokens)
    return sorted(
        ((w, i) for w, i in tokenizer.get_vocab().items()
         if not w.startswith("##") and w not in special and not (w.startswith("[") and w.endswith("]"))
         and is_metric_dp_word(w)),
        key=lambda pair: pair[1],
    )


def is_uncased(tokenizer: Any) -> bool:
    """No upper-case whole word in the vocabulary: the tokenizer lower-cases its input."""
    return all(w == w.lower() for w, _ in whole_words(tokenizer))


def static_table(tokenizer: Any, model: Any) -> WordVectors:
    """The input embedding rows of the whole-word vocabulary entries (``bert_static``)."""
    entries = whole_words(tokenizer)
    weight = model.get_input_embeddings().weight.detach().float().cpu().numpy()
    ids = np.array([i for _, i in entries], dtype=np.int64)
    return WordVectors([w for w, _ in entries], weight[ids], is_uncased(tokenizer))


class ContextualEncoder:
    """Hidden state 0 of a BERT for every word of a document (``bert_contextual``).

    Args:
        tokenizer, model: from :func:`load_bert`.
        device: where the model is.
        windows_per_batch: model windows embedded per call.
    """

    @classmethod
    def load(cls, folder: Path, device: str) -> ContextualEncoder:
        """The encoder of the BERT in ``folder`` (:func:`load_bert`) on ``device``."""
        return cls(*load_bert(folder, device), device)

    def __init__(self, tokenizer: Any, model: Any, device: str, windows_per_batch: int = 64) -> None:
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.windows_per_batch = windows_per_batch
        self.lowercase = is_uncased(tokenizer)
        self.dim = int(model.config.hidden_size)
        self._room = int(model.config.max_position_embeddings) - 2  # [CLS] ... [SEP]

    def keys(self, words: Sequence[str]) -> list[str]:
        """The words as the model sees them (lower-cased for an uncased model): the pair labels."""
        return [lookup_key(w, self.lowercase) for w in words]

    def _windows(self, docs: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[list[WordSpan | None]]]:
        tok = self.tokenizer
        windows: list[list[int]] = []
        spans: list[list[WordSpan | None]] = []
        for words in docs:
            pieces = tok(list(words), add_special_tokens=False)["input_ids"] if words else []
            current: list[int] = []
            doc_spans: list[WordSpan | None] = []
            for ids in pieces:
                ids = ids[: self._room]
                if not ids or all(i == tok.unk_token_id for i in ids):
                    doc_spans.append(None)
                    continue
                if len(current) + len(ids) > self._room:
                    windows.append(current)
                    current = []
                doc_spans.append((len(windows), len(current) + 1, len(current) + 1 + len(ids)))
                current.extend(ids)
            if current:
                windows.append(current)
            spans.append(doc_spans)
        return windows, spans

    def _hidden_state_0(self, windows: list[list[int]]) -> list[np.ndarray]:
        tok = self.tokenizer
        out: list[np.ndarray] = []
        for start in range(0, len(windows), self.windows_per_batch):
            batch = [[tok.cls_token_id, *w, tok.sep_token_id] for w in windows[start:start + self.windows_per_batch]]
            width = max(len(w) for w in batch)
            ids = torch.tensor([w + [tok.pad_token_id] * (width - len(w)) for w in batch], device=self.device)
            with torch.inference_mode():
                hidden = self.model.embeddings(input_ids=ids, token_type_ids=torch.zeros_like(ids))
            out.extend(hidden.float().cpu().numpy())
        return out

    def encode(self, docs: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per document: (known mask over its words, (n_known, d) vectors of the known words).

        A word is unknown when the tokenizer gives it no piece or only [UNK].
        """
        windows, spans = self._windows(docs)
        hidden = self._hidden_state_0(windows)
        out = []
        for doc_spans in spans:
            known = np.array([s is not None for s in doc_spans], dtype=bool)
            rows = [hidden[w][a:b].mean(axis=0) for w, a, b in (s for s in doc_spans if s is not None)]
            out.append((known, np.array(rows, dtype=np.float32).reshape(len(rows), self.dim)))
        return out
