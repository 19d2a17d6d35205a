"""Parameters of the DPER privacy-entity detector and its flat baseline (METHODS.md §4.1)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from textsift.params_base import Frozen


class DetectorParams(Frozen):
    """Encoder -> BiLSTM -> GlobalPointer (or a flat BIO head): sizes, windows, training, decoding.

    The defaults are chosen for speed on a small CPU with a pretrained encoder: the first 2 of
    MiniLM's 6 layers (see bench/detector.py for the measured characters per second).
    """

    model: Literal["global_pointer", "flat"] = Field(
        "global_pointer", description="global_pointer: nested spans (DPER); flat: BIO tags, the baseline"
    )
    encoder: str = Field(
        "minilm", min_length=1,
        description="minilm (packaged pretrained all-MiniLM-L6-v2, uncased), roformer (transformers.RoFormerModel "
                    "from a config, trained from scratch: the paper's encoder), fill_in (the corpus-trained fill-in "
                    "model, resolved to its folder by the caller) or a local BERT folder",
    )
    encoder_layers: int | None = Field(
        2, ge=1, description="transformer layers: the first k of a pretrained encoder (null: all of them); "
                             "the depth of a roformer (null: 4)",
    )
    roformer_hidden: int = Field(256, ge=16, description="hidden size of a from-config roformer")
    roformer_heads: int = Field(4, ge=1, description="attention heads of a from-config roformer")
    roformer_intermediate: int = Field(1024, ge=16, description="feed-forward size of a from-config roformer")
    shape_dim: int = Field(
        16, ge=0, description="size of the character-shape embedding concatenated to the encoder output "
                              "(capitalised, all caps, lower, digits, punctuation, other); 0: none",
    )
    lstm_hidden: int = Field(128, ge=8, description="BiLSTM hidden size per direction")
    head_size: int = Field(64, ge=2, description="size of each type's q and k in GlobalPointer (even, for RoPE)")
    dropout: float = Field(0.1, ge=0, lt=1, description="dropout on the encoder output and the BiLSTM output")
    max_length: int = Field(128, ge=8, le=512, description="tokens per window, [CLS] and [SEP] included")
    stride: int = Field(
        32, ge=0, description="tokens shared by consecutive windows of a long text (each window reports the spans "
                              "starting in its share; spans up to stride/2 tokens long cross a border safely)",
    )
    freeze_word_embeddings: bool = Field(
        True, description="a pretrained encoder's word-embedding matrix stays as pretrained (80% of a 1-layer "
                          "MiniLM detector's weights: updating it was a third of each training step); a roformer "
                          "trains its own")
    epochs: int = Field(3, ge=1)
    batch_size: int = Field(16, ge=1, description="training windows per optimizer step")
    learning_rate: float = Field(5e-5, gt=0, description="AdamW learning rate of a pretrained encoder")
    head_learning_rate: float = Field(1e-3, gt=0, description="AdamW learning rate of the layers trained from "
                                                               "scratch: shape embedding, BiLSTM, head, a roformer")
    weight_decay: float = Field(0.01, ge=0)
    max_grad_norm: float = Field(1.0, gt=0, description="gradients are clipped to this global L2 norm")
    warmup_fraction: float = Field(0.1, ge=0, lt=1, description="share of the steps with a linear warm-up")
    threshold: float = Field(0.0, ge=-100, le=100, description="GlobalPointer decision score: spans above it")
    inference_batch_size: int = Field(64, ge=1, description="windows per forward pass when detecting")
    mixed_precision: bool = Field(True, description="bf16 autocast on CUDA")

    @model_validator(mode="after")
    def _consistent(self) -> DetectorParams:
        if self.head_size % 2:
            raise ValueError("detector.head_size must be even (RoPE rotates pairs)")
        if self.roformer_hidden % self.roformer_heads:
            raise ValueError("detector.roformer_hidden must be a multiple of detector.roformer_heads")
        if 2 * self.stride > self.max_length - 2:
            raise ValueError("detector.stride must be at most half the window body (max_length - 2)")
        return self


class FillInParams(Frozen):
    """The corpus-trained masked LM of DataSifterText (METHODS.md §1.1), stage train_fill_in."""

    init_from: str | None = Field(None, description="local checkpoint folder to continue MLM training from")
    vocab_size: int = Field(8000, ge=100, description="WordPiece vocabulary trained on the training split")
    min_doc_freq: int = Field(
        5, ge=1,
        description="the WordPiece vocabulary (published with the model) is learned only from words used outside "
                    "privacy spans by at least this many distinct training documents; other words only give "
                    "their characters, span text nothing")
    hidden_size: int = Field(256, ge=16)
    num_layers: int = Field(4, ge=1)
    num_heads: int = Field(4, ge=1)
    intermediate_size: int = Field(1024, ge=16)
    max_length: int = Field(128, ge=16, description="tokens per window")
    epochs: float = Field(3.0, gt=0)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(5e-4, gt=0)
    warmup_fraction: float = Field(0.06, ge=0, lt=1)
    mask_probability: float = Field(0.15, gt=0, lt=1)
    mixed_precision: bool = Field(True, description="bf16 autocast on CUDA")
    validation_fraction: float = Field(0.1, gt=0, lt=1, description="held-out windows for MLM loss")

    @model_validator(mode="after")
    def _heads_divide_hidden(self) -> FillInParams:
        if self.hidden_size % self.num_heads:
            raise ValueError("fill_in.hidden_size must be a multiple of fill_in.num_heads")
        return self
