"""BERT sources from the packaged MiniLM folder, offline: static table, contextual encoder,
MLflow folder layout, and a contextual index end to end (METHODS.md §2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from textsift import rng
from textsift.embeddings.bert import ContextualEncoder, load_bert
from textsift.embeddings.locate import model_folder
from textsift.embeddings.sources import contextual_pairs, static_vectors
from textsift.errors import ConfigError, InputError, StageError
from textsift.indexes.params import EmbeddingSourceParams
from textsift.indexes.projection import project_vocabulary
from textsift.indexes.store import load_index, save_index
from textsift.mechanisms.metric_dp.embedders import ContextualEmbedder
from textsift.mechanisms.metric_dp.privatizer import MetricDPPrivatizer, privatize_shard
from textsift.models.loading import hf_folders

DOCS = ["We went to Parijs in May, and loved it.", "The hotel in Paris was terrible; ꙮ never again!"]


@pytest.fixture(scope="module")
def minilm() -> tuple:
    return load_bert(model_folder("minilm", Path("."), None, "m"), "cpu")


def test_bert_static_uses_whole_word_entries_of_the_packaged_minilm(tmp_path: Path, minilm: tuple) -> None:
    source = EmbeddingSourceParams(kind="bert_static", model_path="minilm")
    table = static_vectors(source, name="m", train_texts=[], words={"Paris", "hotel", "##s", "[CLS]", "Parijs"},
                           seed=1, root=tmp_path, artifacts=None, device="cpu")
    assert table.lowercase and table.dim == 384 and table.words == ["paris", "hotel"]  # vocabulary id order
    tokenizer, model = minilm
    row = model.get_input_embeddings().weight[tokenizer.convert_tokens_to_ids("paris")].detach().numpy()
    np.testing.assert_allclose(table.vectors[0], row)


def test_contextual_vectors_are_hidden_state_0_averaged_over_pieces(minilm: tuple) -> None:
    tokenizer, model = minilm
    encoder = ContextualEncoder(tokenizer, model, "cpu")
    (known, vectors), (known2, _) = encoder.encode([["We", "went", "Parijs"], ["hotel", "ꙮ", "x"]])
    assert known.tolist() == [True, True, True] and known2.tolist() == [True, False, True]
    ids = tokenizer(["We went Parijs"], return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        hidden = model(input_ids=ids, output_hidden_states=True).hidden_states[0][0].numpy()
    np.testing.assert_allclose(vectors[0], hidden[1], atol=1e-5)
    np.testing.assert_allclose(vectors[2], hidden[3:6].mean(axis=0), atol=1e-5)  # par ##ij ##s
    alone = encoder.encode([["We", "went", "Parijs"]])[0][1]
    np.testing.assert_allclose(alone, vectors, atol=1e-6)  # batching does not change a document's vectors


def test_long_documents_are_windowed(minilm: tuple) -> None:
    encoder = ContextualEncoder(*minilm, "cpu")
    words = ["hotel", "Parijs"] * 300  # 1,200 pieces, more than one 512-piece window
    known, vectors = encoder.encode([words])[0]
    assert known.all() and vectors.shape == (600, 384) and np.isfinite(vectors).all()


def test_mlflow_transformers_layout_is_found(tmp_path: Path) -> None:
    source = model_folder("minilm", tmp_path, None, "m")
    for sub, names in (("model", ["config.json", "model.safetensors"]),
                       ("components/tokenizer", ["tokenizer.json", "vocab.txt", "tokenizer_config.json"])):
        (tmp_path / "saved" / sub).mkdir(parents=True)
        for name in names:
            (tmp_path / "saved" / sub / name).symlink_to(source / name)
    assert hf_folders(tmp_path / "saved") == (tmp_path / "saved/model", tmp_path / "saved/components/tokenizer")
    tokenizer, model = load_bert(tmp_path / "saved", "cpu")
    assert model.config.hidden_size == 384 and tokenizer.convert_tokens_to_ids("paris") > 0


def test_model_path_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model_path is required"):
        model_folder(None, tmp_path, None, "indexes.sources.ctx.model_path")
    with pytest.raises(StageError, match="fill_in.json is missing"):
        model_folder("fill_in", tmp_path, None, "indexes.sources.ctx.model_path")
    with pytest.raises(InputError, match="does not exist"):
        model_folder("no/such/folder", tmp_path, None, "indexes.sources.ctx.model_path")
    with pytest.raises(InputError, match="no Hugging Face model"):
        hf_folders(tmp_path)


def test_contextual_index_privatizes_its_own_sample_to_itself_at_huge_epsilon(tmp_path: Path, minilm: tuple) -> None:
    encoder = ContextualEncoder(*minilm, "cpu")
    tokens, vectors = contextual_pairs(encoder, DOCS)
    assert tokens[:4] == ["we", "went", "to", "parijs"] and vectors.shape == (len(tokens), 384)
    items = project_vocabulary(tokens, vectors, beta=0.7, delta=1e-6, omega="log", generator=rng.generator(1, "t"))
    save_index(tmp_path, items, {"beta": 0.7}, n_trees=5, annoy_seed=1)
    index = load_index(tmp_path)
    privatizer = MetricDPPrivatizer(ContextualEmbedder(encoder, index.projection), index.searcher("exact", "cpu"),
                                    index.words, epsilon=1e9, beta=0.7)
    out = privatize_shard(privatizer, DOCS, ["a", "b"], key=1)
    assert out.texts == [DOCS[0].lower(), DOCS[1].lower().replace("ꙮ", "[OOV]")] and out.oov == 1
    noisy = privatize_shard(MetricDPPrivatizer(privatizer.embedder, privatizer.searcher, index.words,
                                               epsilon=1.0, beta=0.7), DOCS, ["a", "b"], key=1)
    assert noisy.changed > 10 and "##" not in " ".join(noisy.texts)
