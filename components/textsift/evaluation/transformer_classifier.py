"""A transformer sequence classifier fine-tuned from a BERT encoder (METHODS.md §5).

The encoder — the packaged MiniLM (its first ``encoder_layers`` layers) by default, or the fill-in
model's BERT trained on the ORIGINAL training split — gets a fresh classification head and is
fine-tuned on one corpus's training split (privatized or original), then scores test texts. The
corpus-trained fill-in encoder, fine-tuned for one epoch, predicted one class on every corpus.

Seeded: batch order from a numpy generator, the head's initial weights
from a ``torch.Generator``, and dropout from PyTorch's default generator forked and seeded for
the duration of training only (no global state leaks out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoTokenizer, BertForSequenceClassification, PreTrainedTokenizerFast

from textsift.config import TransformerClassifierParams
from textsift.device import autocast, global_torch_rng
from textsift.models.detector_encoders import keep_layers
from textsift.models.fill_in import seed_weights
from textsift.models.loading import hf_folders, load_pretrained
from textsift.rng import generator, torch_seed


@dataclass
class TransformerClassifier:
    model: BertForSequenceClassification
    tokenizer: PreTrainedTokenizerFast
    classes: list[str]
    device: str
    params: TransformerClassifierParams


def _encode(clf_tokenizer: PreTrainedTokenizerFast, texts: Sequence[str], max_length: int, device: str) -> dict:
    batch = clf_tokenizer(list(texts), truncation=True, max_length=max_length, padding=True, return_tensors="pt")
    return {k: v.to(device) for k, v in batch.items() if k in ("input_ids", "attention_mask")}


def fine_tune(
    encoder_folder: str | Path, texts: Sequence[str], labels: Sequence[str], params: TransformerClassifierParams,
    seed: int, key: str, device: str,
) -> TransformerClassifier:
    """Fine-tune a fresh head + the encoder on (texts, labels); ``key`` names the run for seeding."""
    model_dir, tokenizer_dir = hf_folders(encoder_folder)
    classes = sorted(set(labels))
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, tokenizer_dir)
    model, info = load_pretrained(
        BertForSequenceClassification.from_pretrained, model_dir, num_labels=len(classes), output_loading_info=True
    )
    keep_layers(model.bert, params.encoder_layers)
    # the pooler and the head are new: initialize them from our generator, not torch's global one
    seed_weights(model, torch.Generator().manual_seed(torch_seed(seed, "evaluate.transformer.head", key)),
                 only=info["missing_keys"])
    model.to(device).train()
    targets = torch.tensor([classes.index(label) for label in labels])
    steps = max(1, int(np.ceil(params.epochs * len(texts) / params.batch_size)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.learning_rate)
    order_rng = generator(seed, "evaluate.transformer.order", key)
    order = np.empty(0, dtype=int)
    with global_torch_rng(torch_seed(seed, "evaluate.transformer.dropout", key)):
        for _ in range(steps):
            if len(order) < params.batch_size:
                order = np.concatenate([order, order_rng.permutation(len(texts))])
            batch, order = order[:params.batch_size], order[params.batch_size:]
            inputs = _encode(tokenizer, [texts[i] for i in batch], params.max_length, device)
            with autocast(device, params.mixed_precision):
                loss = model(**inputs, labels=targets[batch].to(device)).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    model.eval()
    return TransformerClassifier(model, tokenizer, classes, device, params)


@torch.no_grad()
def predict_proba(clf: TransformerClassifier, texts: Sequence[str]) -> np.ndarray:
    """(n_texts, n_classes) class probabilities, batched."""
    out = []
    for start in range(0, len(texts), clf.params.batch_size):
        inputs = _encode(clf.tokenizer, texts[start:start + clf.params.batch_size], clf.params.max_length,
                         clf.device)
        with autocast(clf.device, clf.params.mixed_precision):
            logits = clf.model(**inputs).logits
        out.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(clf.classes)))
