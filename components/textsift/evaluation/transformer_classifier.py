"""A transformer sequence classifier fine-tuned from a BERT encoder (METHODS.md §5).

The encoder — the packaged MiniLM (its first ``encoder_layers`` layers) by default, or the fill-in
model's BERT trained on the ORIGINAL training split — gets a fresh linear head over its MEAN-POOLED
token states and is fine-tuned on one corpus's training split (privatized or original), then scores
test texts. Mean pooling is how MiniLM was trained; its [CLS] pooler was never trained, and a
classifier on it (``BertForSequenceClassification``) predicted one class on every privatized corpus.
The rate warms up and decays linearly, and gradients are clipped.

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
from torch import nn
from transformers import AutoTokenizer, BertModel, PreTrainedTokenizerFast

from textsift.device import autocast, global_torch_rng
from textsift.evaluation.params import TransformerClassifierParams
from textsift.models.detector_encoders import keep_layers
from textsift.models.loading import bert_without_pooler, hf_folders, load_pretrained
from textsift.models.schedule import warmup_then_decay
from textsift.rng import generator, torch_seed


class MeanPoolClassifier(nn.Module):
    """A BERT encoder, masked mean pooling over its last layer, dropout and a linear head."""

    def __init__(self, encoder: BertModel, n_classes: int, generator: torch.Generator) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(encoder.config.hidden_dropout_prob)
        self.head = nn.Linear(encoder.config.hidden_size, n_classes)
        with torch.no_grad():  # the head is new: initialize it from our generator, not torch's global one
            self.head.weight.normal_(0.0, encoder.config.initializer_range, generator=generator)
            self.head.bias.zero_()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Class logits (batch, n_classes): the last layer's states mean-pooled over real tokens, dropout, head."""
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.head(self.dropout(pooled))


@dataclass
class TransformerClassifier:
    model: MeanPoolClassifier
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
    encoder = load_pretrained(bert_without_pooler, model_dir)
    keep_layers(encoder, params.encoder_layers)
    with global_torch_rng():  # constructors draw from torch's shared generator: never beside a seeded task
        model = MeanPoolClassifier(encoder, len(classes),
                                   torch.Generator().manual_seed(torch_seed(seed, "evaluate.transformer.head", key)))
    model.to(device).train()
    targets = torch.tensor([classes.index(label) for label in labels])
    steps = max(1, int(np.ceil(params.epochs * len(texts) / params.batch_size)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_then_decay(steps, params.warmup_fraction))
    order_rng = generator(seed, "evaluate.transformer.order", key)
    order = np.empty(0, dtype=int)
    with global_torch_rng(torch_seed(seed, "evaluate.transformer.dropout", key), device):
        for _ in range(steps):
            if len(order) < params.batch_size:
                order = np.concatenate([order, order_rng.permutation(len(texts))])
            batch, order = order[:params.batch_size], order[params.batch_size:]
            inputs = _encode(tokenizer, [texts[i] for i in batch], params.max_length, device)
            with autocast(device, params.mixed_precision):
                loss = nn.functional.cross_entropy(model(**inputs).float(), targets[batch].to(device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), params.max_grad_norm)
            optimizer.step()
            scheduler.step()
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
            logits = clf.model(**inputs)
        out.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, len(clf.classes)))
