"""The IPI model: a BERT-family encoder run as a UniLM seq2seq LM (METHODS.md §4.2).

Input ``[CLS] post [SEP] target [SEP]`` with segment ids 0 (source) and 1 (target). The seq2seq
self-attention mask lets source tokens attend to every source token (bidirectional) and target
tokens attend to the source and to the target tokens up to themselves (left to right), so one
encoder both reads the post and writes ``"<interest> : <evidence>"`` one token at a time. The LM head
is BERT's (dense, GELU, LayerNorm, output tied to the word embeddings).

Encoders: the packaged MiniLM (its first ``encoder_layers`` layers; default) or a RoFormer built
from a config with MiniLM's vocabulary (the paper's encoder, untrained here: no pretrained RoFormer
is obtainable offline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from textsift.interests.source_cache import encode_sources, supports_source_cache, target_states
from textsift.models.detector_encoders import init_weights


def seq2seq_mask(segments: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
    """(batch, 1, L, L) boolean mask: ``[b, 0, i, j]`` is True when token i may attend to token j.

    Args:
        segments: (batch, L) 0 for source tokens, 1 for target tokens.
        attention: (batch, L) 1 for real tokens, 0 for padding.
    """
    length = segments.shape[1]
    source_column = (segments == 0)[:, None, :]  # everyone sees the source
    target_row = (segments == 1)[:, :, None]
    causal = torch.ones(length, length, dtype=torch.bool, device=segments.device).tril()[None]
    allowed = source_column | (target_row & (segments == 1)[:, None, :] & causal)
    allowed = allowed & attention.bool()[:, None, :]
    allowed = allowed | torch.eye(length, dtype=torch.bool, device=segments.device)[None]  # padding rows see self
    return allowed[:, None, :, :]


class UniLMSeq2Seq(nn.Module):
    """Encoder + tied LM head. ``forward`` returns the (batch, L, hidden) states under the seq2seq mask and
    ``head`` turns chosen states into next-token logits: projecting onto the 30k-word vocabulary only where
    a prediction is needed (target positions in training, the last position in decoding) is most of the
    speed on a CPU."""

    def __init__(self, encoder: nn.Module, generator: torch.Generator) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        embedding = self.word_embeddings().weight
        self.transform = nn.Sequential(nn.Linear(hidden, embedding.shape[1]), nn.GELU(),
                                       nn.LayerNorm(embedding.shape[1], eps=1e-12))
        self.bias = nn.Parameter(torch.zeros(embedding.shape[0]))
        init_weights(self.transform, generator)

    def word_embeddings(self) -> nn.Embedding:
        """The encoder's input word embeddings, to which the LM head's output is tied."""
        return self.encoder.embeddings.word_embeddings

    def forward(self, input_ids: torch.Tensor, segments: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        """The encoder's last hidden states (batch, L, hidden) under the seq2seq attention mask."""
        return self.encoder(input_ids=input_ids, token_type_ids=segments,
                            attention_mask=seq2seq_mask(segments, attention)).last_hidden_state

    def head(self, states: torch.Tensor) -> torch.Tensor:
        """Next-token logits (..., vocab) of hidden states (..., hidden)."""
        return self.transform(states) @ self.word_embeddings().weight.T + self.bias


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor
    segments: torch.Tensor
    attention: torch.Tensor
    labels: torch.Tensor  # next-token targets; -100 where no loss


def encode_pairs(tokenizer: Any, sources: list[str], targets: list[str], max_source: int, max_target: int,
                 ) -> Batch:
    """``[CLS] source [SEP] target [SEP]`` per pair, right-padded; labels on the target tokens and the final
    [SEP], placed at the position that predicts them (one to the left)."""
    src = tokenizer(sources, add_special_tokens=False, truncation=True, max_length=max_source)["input_ids"]
    tgt = tokenizer(targets, add_special_tokens=False, truncation=True, max_length=max_target)["input_ids"]
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    rows = [([cls, *s, sep], [*t, sep]) for s, t in zip(src, tgt, strict=True)]
    length = max(len(a) + len(b) for a, b in rows)
    ids = torch.full((len(rows), length), pad)
    segments = torch.zeros((len(rows), length), dtype=torch.long)
    attention = torch.zeros((len(rows), length), dtype=torch.long)
    labels = torch.full((len(rows), length), -100)
    for i, (a, b) in enumerate(rows):
        ids[i, :len(a) + len(b)] = torch.tensor(a + b)
        segments[i, len(a):len(a) + len(b)] = 1
        attention[i, :len(a) + len(b)] = 1
        labels[i, len(a) - 1:len(a) + len(b) - 1] = torch.tensor(b)
    return Batch(ids, segments, attention, labels)


def loss(model: UniLMSeq2Seq, batch: Batch) -> torch.Tensor:
    """Mean next-token cross-entropy over the target tokens (and the final [SEP])."""
    states = model(batch.input_ids, batch.segments, batch.attention)
    wanted = batch.labels != -100
    return nn.functional.cross_entropy(model.head(states[wanted]).float(), batch.labels[wanted])


@torch.no_grad()
def beam_search(model: UniLMSeq2Seq, tokenizer: Any, sources: list[str], max_source: int, beam_size: int,
                min_len: int, max_len: int, device: str = "cpu", prune: bool = True) -> list[str]:
    """The best target text per source by beam search (Algorithm 2 of the paper), batched over sources.

    Each step scores every live beam's next token; the ``beam_size`` best continuations per source are
    kept; a beam ends when it emits [SEP] (not before ``min_len`` tokens) or reaches ``max_len``.
    The answer is the finished beam with the highest mean log-probability per token. A BERT-shaped
    encoder reads each post once (:mod:`textsift.interests.source_cache`); others re-read it every step.

    ``prune``: a source's search stops once no live beam can finish above its best finished one. Log-probabilities
    are at most 0, so a live beam with sum ``s`` can at best end with mean ``s / max_len``; when that is below the
    best finished mean for every live beam, continuing cannot change the answer (exact: the same output as
    ``prune=False``). A post answered ``none`` with confidence stops after two tokens instead of filling ``max_len``.
    """
    if not sources:
        return []
    model.eval()
    sep, pad = tokenizer.sep_token_id, tokenizer.pad_token_id
    src = tokenizer(sources, add_special_tokens=False, truncation=True, max_length=max_source)["input_ids"]
    prefixes = [[tokenizer.cls_token_id, *s, sep] for s in src]
    n = len(prefixes)
    cache = encode_sources(model.encoder, prefixes, pad, device) if supports_source_cache(model.encoder) else None
    beams: list[list[tuple[list[int], float]]] = [[([], 0.0)] for _ in range(n)]
    done: list[list[tuple[float, list[int]]]] = [[] for _ in range(n)]
    for step in range(max_len):
        rows = [(i, tokens, score) for i in range(n) for tokens, score in beams[i]]
        if not rows:
            break
        if cache is None:
            states = _last_states(model, [prefixes[i] + tokens for i, tokens, _ in rows],
                                  [len(prefixes[i]) for i, _, _ in rows], pad, device)
        elif step == 0:
            states = cache.last_state[torch.tensor([i for i, _, _ in rows], device=device)]
        else:  # every live beam holds ``step`` tokens
            states = target_states(model.encoder, cache, torch.tensor([i for i, _, _ in rows], device=device),
                                   torch.tensor([tokens for _, tokens, _ in rows], device=device))
        logp = torch.log_softmax(model.head(states).float(), dim=-1).cpu()
        if step < min_len:
            logp[:, sep] = float("-inf")
        logp[:, pad] = float("-inf")
        top_scores, top_ids = logp.topk(beam_size, dim=-1)
        candidates: list[list[tuple[float, list[int]]]] = [[] for _ in range(n)]
        for r, (i, tokens, score) in enumerate(rows):
            for s, t in zip(top_scores[r].tolist(), top_ids[r].tolist(), strict=True):
                candidates[i].append((score + s, [*tokens, t]))
        for i in range(n):
            beams[i] = []
            for score, tokens in sorted(candidates[i], key=lambda c: -c[0])[:beam_size]:
                if tokens[-1] == sep:
                    done[i].append((score / len(tokens), tokens[:-1]))
                elif len(tokens) >= max_len:
                    done[i].append((score / len(tokens), tokens))
                else:
                    beams[i].append((tokens, score))
            if len(done[i]) >= beam_size or (prune and beams[i] and _settled(done[i], beams[i], max_len)):
                beams[i] = []
    out = []
    for i in range(n):
        finished = done[i] or [(score / max(len(tokens), 1), tokens) for tokens, score in beams[i]]
        best = max(finished, key=lambda item: item[0])[1] if finished else []
        out.append(tokenizer.decode(best, skip_special_tokens=True).strip())
    return out


def _settled(done: list[tuple[float, list[int]]], live: list[tuple[list[int], float]], max_len: int) -> bool:
    """Whether no live beam (tokens, sum of log-probabilities) can end with a mean above the best finished one."""
    if not done:
        return False
    best = max(mean for mean, _ in done)
    return all(score / max_len < best for _, score in live)


def _last_states(model: UniLMSeq2Seq, sequences: list[list[int]], source_lengths: list[int], pad: int,
                 device: str) -> torch.Tensor:
    """The state at each sequence's last token by a full forward pass under the seq2seq mask."""
    length = max(len(seq) for seq in sequences)
    ids = torch.full((len(sequences), length), pad)
    segments = torch.zeros((len(sequences), length), dtype=torch.long)
    attention = torch.zeros((len(sequences), length), dtype=torch.long)
    for r, (seq, source) in enumerate(zip(sequences, source_lengths, strict=True)):
        ids[r, :len(seq)] = torch.tensor(seq)
        segments[r, source:len(seq)] = 1
        attention[r, :len(seq)] = 1
    states = model(ids.to(device), segments.to(device), attention.to(device))
    return states[torch.arange(len(sequences)), torch.tensor([len(seq) - 1 for seq in sequences])]
