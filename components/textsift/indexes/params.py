"""``indexes`` in params.yaml: the embedding sources the metric-DP indexes are built from, and the geometry
experiments run on each."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from textsift.params_base import Frozen, Name


class EmbeddingSourceParams(Frozen):
    """One embedding source of METHODS.md §2 and the projected Annoy index built over it."""

    kind: Literal["word2vec", "fasttext", "bert_static", "bert_contextual", "glove"]
    vectors_path: str | None = Field(None, description="word2vec text/binary vectors file instead of training")
    model_path: str | None = Field(
        None, description="BERT folder: a local path, 'fill_in' (the corpus-trained model) or 'minilm' (packaged)"
    )
    dim: int = Field(300, ge=2, description="vector size when trained with gensim")
    epochs: int = Field(5, ge=1)
    window: int = Field(5, ge=1)
    min_count: int = Field(2, ge=1)
    min_doc_freq: int = Field(
        5, ge=1,
        description="an index may OUTPUT only words used outside privacy spans in at least this many distinct "
                    "training documents (names never qualify); rarer words are still perturbed as inputs",
    )
    vocabulary: Literal["corpus", "public"] = Field(
        "corpus",
        description="corpus: the corpus words with an embedding (outputs filtered by min_doc_freq); public: the "
                    "source's own most frequent public_words words (glove only), chosen without reading the corpus, "
                    "so the index holds no corpus word or vector and a setting over it can be served",
    )
    public_words: int = Field(50_000, ge=2, description="the public vocabulary's size (its most frequent words)")
    contextual_sample_frac: float = Field(0.05, gt=0, le=1)
    beta: float = Field(0.7, gt=0, lt=1, description="projection distortion; noise sensitivity is 1 + beta")
    delta: float = Field(1e-6, gt=0, lt=1)
    omega: Literal["log", "sqrt_log"] = Field("log", description="log: the notebook's m; sqrt_log: the paper's")
    n_trees: int = Field(50, ge=1)


    @model_validator(mode="after")
    def _public_needs_public_vectors(self) -> EmbeddingSourceParams:
        if self.vocabulary == "public" and self.kind != "glove":
            raise ValueError(f"vocabulary: public needs published vectors and their own vocabulary (kind: glove); "
                             f"{self.kind} vectors are learnt from the corpus or pair words with corpus contexts")
        return self


class GeometryParams(Frozen):
    """The notebook's experiments per embedding source (METHODS.md §2), run by build_indexes."""

    epsilons: list[float] = Field([5, 10, 15, 25, 50, 75, 100, 125, 150, 200, 300, 500], min_length=1)
    k_list: list[int] = Field([1, 2, 3, 4, 5, 10, 20, 50, 200, 500, 1000], min_length=1)
    draws: int = Field(1000, ge=1, description="M, noisy draws per word for N_w and S_w")
    vocab_sample: int = Field(200, ge=1, description="words sampled for the experiments")

    @model_validator(mode="after")
    def _positive(self) -> GeometryParams:
        if any(e <= 0 for e in self.epsilons) or any(k < 1 for k in self.k_list):
            raise ValueError("geometry.epsilons must be > 0 and geometry.k_list >= 1")
        return self


class IndexesParams(Frozen):
    sources: dict[Name, EmbeddingSourceParams] = Field(default_factory=dict)
    geometry: GeometryParams = GeometryParams()
