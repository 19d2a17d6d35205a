"""``ingest`` in params.yaml: where the corpus comes from (the demo or a file), how it is normalized for the
models, de-duplicated and split."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from textsift.params_base import Frozen, Probability


class DemoCorpusParams(Frozen):
    """The seeded demo corpus with planted personal data (textsift.demo)."""

    n_docs: int = Field(2000, ge=10, description="documents to generate")
    pii_per_doc: float = Field(2.0, ge=0, description="mean planted personal-data spans per document")
    positive_rate: Probability = Field(0.5, ge=0, le=1, description="share of label 'pos'")
    label_noise: Probability = Field(
        0.05, ge=0, le=1, description="share of documents whose wording contradicts their label"
    )
    interest_rate: Probability = Field(
        0.3, ge=0, le=1, description="share of documents with a sentence giving away an interest (the interest "
        "attacker's ground truth; held-out values of the IPI lexicon)")


class SourceParams(Frozen):
    """Where ingest reads the corpus from; ``kind: demo`` generates it instead."""

    kind: Literal["demo", "file"] = "demo"
    path: str | None = Field(None, description="input file (csv, tsv, jsonl, parquet, conll; .gz allowed)")
    format: Literal["auto", "csv", "tsv", "jsonl", "parquet", "conll"] = "auto"
    text_field: str = "text"
    label_field: str | None = "label"
    id_field: str | None = Field(None, description="column with record ids; row numbers when absent")
    spans_field: str | None = Field(None, description="column with [{start, end, label}] privacy spans")
    split_field: str | None = Field(None, description="column with a given train/test split to respect")
    interest_field: str | None = Field(
        None, description="column with each record's known interest category (or 'none'): the interest "
        "attacker's ground truth in the attack stage; never published with a privatized corpus")
    columns: list[str] | None = Field(None, description="column names of a header-less csv/tsv file")

    @model_validator(mode="after")
    def _file_needs_path(self) -> SourceParams:
        if self.kind == "file" and not self.path:
            raise ValueError("source.kind 'file' needs source.path")
        return self


class NormalizeParams(Frozen):
    """The normalization models read text through (``textsift.normalize.model_view``: detection maps every span back
    to the text as given); stored and returned text stays as given unless ``output`` is true."""

    unicode_nfc: bool = Field(True, description="compose decomposed accents (Unicode NFC)")
    strip_html_breaks: bool = Field(True, description="turn <br /> tags into spaces")
    collapse_whitespace: bool = Field(True, description="turn each run of whitespace into one space")
    output: bool = Field(False, description="also normalize the text ingest, textsift privatize and textsift detect "
                                            "store and return (outer whitespace stripped, spans moved along); false "
                                            "keeps every input character outside replaced spans")


class SplitParams(Frozen):
    """Seeded, stratified split fractions; train is the rest."""

    validation: float = Field(0.1, ge=0, lt=1)
    test: float = Field(0.2, gt=0, lt=1)

    @model_validator(mode="after")
    def _leaves_train(self) -> SplitParams:
        if self.validation + self.test >= 1:
            raise ValueError("split.validation + split.test must be < 1 (train gets the rest)")
        return self


class IngestParams(Frozen):
    source: SourceParams = SourceParams()
    demo: DemoCorpusParams = DemoCorpusParams()
    normalize: NormalizeParams = NormalizeParams()
    dedupe: bool = Field(True, description="reject records whose normalized text repeats an earlier one")
    max_chars: int = Field(20000, gt=0, description="records longer than this are rejected")
    max_reject_fraction: Probability = Field(0.05, ge=0, le=1)
    split: SplitParams = SplitParams()
