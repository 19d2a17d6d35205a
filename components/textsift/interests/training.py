"""Training and scoring of the IPI interest attacker (METHODS.md §4.2); its inference is :mod:`.inference`.

Training: teacher-forced next-token cross-entropy on the target tokens of ``[CLS] post [SEP] target
[SEP]`` under the seq2seq mask, AdamW with warm-up and linear decay, clipped gradients. Seeded like
every textsift model: batch order from a numpy generator keyed by the seed, new weights from a
``torch.Generator``, dropout from PyTorch's default generator forked and seeded for training only.
Progress (step, loss, posts/s, ETA) goes to the ``textsift`` logger.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np
import torch
from transformers import AutoTokenizer, RoFormerConfig, RoFormerModel

from textsift.device import TorchStream, autocast, global_torch_rng
from textsift.interests.inference import InterestModel, parse
from textsift.interests.params import InterestParams
from textsift.interests.rouge import corpus_rouge
from textsift.interests.synthetic import NONE, InterestPost
from textsift.interests.unilm import UniLMSeq2Seq, encode_pairs, loss
from textsift.models.bucketing import length_batches
from textsift.models.detector_encoders import INIT_STD, init_weights, keep_layers, minilm_folder
from textsift.models.loading import bert_without_pooler, hf_folders, load_pretrained
from textsift.models.schedule import warmup_then_decay
from textsift.rng import generator, torch_seed

log = logging.getLogger("textsift")
PROGRESS_LOGS = 10


def build_model(params: InterestParams, seed: int) -> InterestModel:
    """A fresh IPI model on the CPU: MiniLM's first layers (or a seeded RoFormer) and a seeded LM head."""
    model_dir, tokenizer_dir = hf_folders(minilm_folder())
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, str(tokenizer_dir))
    weights = torch.Generator().manual_seed(torch_seed(seed, "interests.weights"))
    if params.encoder == "roformer":
        config = RoFormerConfig(vocab_size=len(tokenizer), embedding_size=384, hidden_size=384,
                                num_hidden_layers=params.encoder_layers, num_attention_heads=6, intermediate_size=1536,
                                max_position_embeddings=params.max_source + params.max_target + 8, type_vocab_size=2,
                                pad_token_id=tokenizer.pad_token_id, initializer_range=INIT_STD)
        with global_torch_rng():
            encoder = RoFormerModel(config)
        init_weights(encoder, weights)
    else:
        encoder = load_pretrained(bert_without_pooler, str(model_dir))
        keep_layers(encoder, params.encoder_layers)
    with global_torch_rng():
        model = UniLMSeq2Seq(encoder, weights)
    return InterestModel(model, tokenizer, params, "cpu")


def train_interest_model(posts: Sequence[InterestPost], params: InterestParams, seed: int, device: str,
                         ) -> InterestModel:
    """Train a new IPI model on ``posts`` (their ``target`` texts)."""
    im = build_model(params, seed)
    im.model.to(device).train()
    im.device = device
    sources, targets = [p.text for p in posts], [p.target for p in posts]
    steps = max(1, int(np.ceil(params.epochs * len(posts) / params.batch_size)))
    optimizer = torch.optim.AdamW(im.model.parameters(), lr=params.learning_rate, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_then_decay(steps, params.warmup_fraction))
    order_rng = generator(seed, "interests.order")
    lengths = [len(source) + len(target) for source, target in zip(sources, targets, strict=True)]  # chars ~ tokens
    batches: list[np.ndarray] = []
    started, every = time.perf_counter(), max(1, steps // PROGRESS_LOGS)
    dropout = TorchStream(torch_seed(seed, "interests.dropout"), device)
    for step in range(steps):
        if not batches:  # a new epoch: batches of similar length (textsift.models.bucketing)
            batches = length_batches(lengths, params.batch_size, order_rng)
        picked = batches.pop()
        batch = encode_pairs(im.tokenizer, [sources[i] for i in picked], [targets[i] for i in picked],
                             params.max_source, params.max_target)
        batch = type(batch)(*(t.to(device) for t in (batch.input_ids, batch.segments, batch.attention,
                                                     batch.labels)))
        with dropout:  # the forward pass draws from this training's own stream (device.TorchStream)
            with autocast(device, True):
                value = loss(im.model, batch)
        value.backward()  # draws nothing: another training's forward pass runs beside it
        torch.nn.utils.clip_grad_norm_(im.model.parameters(), params.max_grad_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        if (step + 1) % every == 0 or step + 1 == steps:
            elapsed = time.perf_counter() - started
            log.info("interests: step %d/%d loss %.3f, %.0f posts/s, ETA %.0fs", step + 1, steps,
                     value.detach().item(), (step + 1) * params.batch_size / elapsed,
                     elapsed / (step + 1) * (steps - step - 1))
    im.model.eval()
    return im


def score(generated: Sequence[str], posts: Sequence[InterestPost]) -> dict[str, float]:
    """ROUGE (lower-cased words) of the generated texts against the targets, and interest accuracy.

    ``interest_accuracy``: generated interest equals the post's (``none`` included);
    ``interest_recall``: the same over posts that reveal an interest; ``none_accuracy``: over those that do not.
    """
    metrics = corpus_rouge(list(generated), [p.target for p in posts])
    hits = [parse(g)[0] == p.interest for g, p in zip(generated, posts, strict=True)]
    revealing = [h for h, p in zip(hits, posts, strict=True) if p.interest != NONE]
    silent = [h for h, p in zip(hits, posts, strict=True) if p.interest == NONE]
    metrics["interest_accuracy"] = float(np.mean(hits)) if hits else float("nan")
    metrics["interest_recall"] = float(np.mean(revealing)) if revealing else float("nan")
    metrics["none_accuracy"] = float(np.mean(silent)) if silent else float("nan")
    return metrics
