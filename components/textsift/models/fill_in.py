"""The fill-in masked LM of DataSifterText (METHODS.md §1.1): build, seed, load.

A ``BertForMaskedLM`` is either built from a config (sizes from ``FillInParams``) with a
WordPiece vocabulary trained on the corpus, or continued from a local checkpoint folder
(``fill_in.init_from``) with that folder's own tokenizer. Weights that are initialized here
draw from an explicit ``torch.Generator`` (never torch's global state), so the same seed gives
the same initial model. Training lives in ``textsift.models.training``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

from textsift.corpus import CharSpan
from textsift.device import global_torch_rng
from textsift.errors import StageError
from textsift.models.loading import hf_folders, load_pretrained
from textsift.models.params import FillInParams
from textsift.models.wordpiece import train_wordpiece

INIT_STD = 0.02  # BERT's initializer_range: the std of every freshly initialized weight


@dataclass
class FillInModel:
    """A masked LM with its tokenizer, on ``device`` (``"cpu"`` or ``"cuda"``)."""

    model: BertForMaskedLM
    tokenizer: PreTrainedTokenizerFast
    device: str

    @property
    def window(self) -> int:
        """Tokens per forward pass, ``[CLS]`` and ``[SEP]`` included."""
        return int(self.model.config.max_position_embeddings)


def _init_module(module: torch.nn.Module, generator: torch.Generator) -> None:
    """BERT's initialization scheme for one module, drawing from ``generator``."""
    if isinstance(module, torch.nn.Linear):
        torch.nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)
        if module.bias is not None:
            torch.nn.init.zeros_(module.bias)
    elif isinstance(module, torch.nn.Embedding):
        torch.nn.init.normal_(module.weight, 0.0, INIT_STD, generator=generator)
        if module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()
    elif isinstance(module, torch.nn.LayerNorm):
        torch.nn.init.ones_(module.weight)
        torch.nn.init.zeros_(module.bias)


@torch.no_grad()
def seed_weights(model: BertForMaskedLM, generator: torch.Generator, only: Sequence[str] | None = None) -> None:
    """(Re-)initialize the model's modules (or only those owning a parameter named in ``only``).

    The decoder bias of the MLM head is zeroed too; input and output embeddings stay tied.
    """
    prefixes = None if only is None else {name.rsplit(".", 1)[0] for name in only}
    for name, module in model.named_modules():
        if prefixes is None or name in prefixes:
            _init_module(module, generator)
    if prefixes is None or "cls.predictions" in prefixes:
        torch.nn.init.zeros_(model.cls.predictions.bias)
    model.tie_weights()


def build_model(texts: Sequence[str], params: FillInParams, generator: torch.Generator,
                spans: Sequence[Iterable[CharSpan]] | None = None) -> FillInModel:
    """A new tokenizer trained on the public words of ``texts`` and a seeded ``BertForMaskedLM`` of the configured
    size.

    ``spans``: per document, its privacy spans (None: none known). The tokenizer learns nothing from their text
    and only words of at least ``params.min_doc_freq`` documents (:func:`~textsift.models.wordpiece.train_wordpiece`):
    its vocabulary is published with the model and is what DataSifterText's fills are drawn from.
    """
    tokenizer = train_wordpiece(texts, params.vocab_size, spans=spans, min_doc_freq=params.min_doc_freq)
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=params.hidden_size, num_hidden_layers=params.num_layers,
        num_attention_heads=params.num_heads, intermediate_size=params.intermediate_size,
        max_position_embeddings=params.max_length, pad_token_id=tokenizer.pad_token_id,
        initializer_range=INIT_STD,
    )
    with global_torch_rng():  # the constructor draws from torch's shared generator: never beside a seeded task
        model = BertForMaskedLM(config)  # (a detector training in another thread would see its dropout shift)
    seed_weights(model, generator)
    return FillInModel(model, tokenizer, "cpu")


def continue_from(folder: str | Path, generator: torch.Generator) -> FillInModel:
    """A local checkpoint folder's ``BertForMaskedLM`` and tokenizer, ready for more MLM training.

    A folder with an encoder only (no MLM head, e.g. a sentence-embedding BERT) gets a head
    initialized from ``generator``.
    """
    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise StageError(f"fill_in.init_from: {folder} is not a model folder (no config.json)")
    model, info = load_pretrained(BertForMaskedLM.from_pretrained, folder, output_loading_info=True)
    missing = list(info.get("missing_keys", []))
    if missing:
        seed_weights(model, generator, only=missing)
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, folder)
    return FillInModel(model, tokenizer, "cpu")


def load_fill_in(folder: str | Path, device: str) -> FillInModel:
    """Load a fill-in model for inference (eval mode, on ``device``) from a saved folder."""
    model_dir, tokenizer_dir = hf_folders(folder)
    model = load_pretrained(BertForMaskedLM.from_pretrained, model_dir).to(device).eval()
    tokenizer = load_pretrained(AutoTokenizer.from_pretrained, tokenizer_dir)
    return FillInModel(model, tokenizer, device)


def logits_at(fm: FillInModel, windows: list[list[int]], rows: list[int], cols: list[int]) -> torch.Tensor:
    """The MLM logits at body position ``cols[i]`` of window ``rows[i]``, float32 on the model's device.

    ``windows`` hold token ids without [CLS]/[SEP] (added here, padding after); only the encoder runs
    on whole windows, the MLM head only at the asked positions. Shared by DataSifterText's fill
    (METHODS.md §1.3) and the LRP budgets' candidate sentences (§3 step 2).
    """
    tok = fm.tokenizer
    length = max(map(len, windows)) + 2
    ids = torch.full((len(windows), length), tok.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(windows), length), dtype=torch.long)
    for b, window in enumerate(windows):
        ids[b, 1:len(window) + 1] = torch.tensor(window, dtype=torch.long)
        ids[b, len(window) + 1] = tok.sep_token_id
        attention[b, :len(window) + 2] = 1
    ids[:, 0] = tok.cls_token_id
    with torch.inference_mode():
        hidden = fm.model.bert(input_ids=ids.to(fm.device), attention_mask=attention.to(fm.device)).last_hidden_state
        at = hidden[torch.tensor(rows, device=fm.device), torch.tensor(cols, device=fm.device) + 1]
        return fm.model.cls(at).float()
