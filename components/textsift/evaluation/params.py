"""``evaluate`` and ``report`` in params.yaml: the classifiers that measure utility, the frontier, the recommendation
rule's ceilings, the bootstrap and the interest attacker."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from textsift.device import Precision
from textsift.params_base import Frozen, Probability


class TfidfLogregParams(Frozen):
    """TF-IDF + logistic regression, the baseline classifier of METHODS.md section 5.

    Terms are hashed into 2**n_features_log2 buckets, so the fitted model stores no vocabulary; its
    IDF and coefficients still mark which hashed n-grams its training text held, so only the models of
    privatized corpora are logged to MLflow.
    """

    n_features_log2: int = Field(18, ge=10, le=24)
    ngram_max: int = Field(2, ge=1, le=3)
    C: float = Field(4.0, gt=0)
    max_iter: int = Field(1000, gt=0)


class TransformerClassifierParams(Frozen):
    """The transformer classifier (METHODS.md §5): a linear head on frozen sentence features, or the encoder
    fine-tuned with its head."""

    enabled: bool = True
    mode: Literal["features", "fine_tune"] = Field(
        "features", description="features: a logistic regression on the frozen encoder's mean-pooled features, each "
                                "distinct text encoded once | fine_tune: encoder + head trained per corpus")
    encoder: str = Field("minilm", description="minilm (packaged all-MiniLM-L6-v2) | fill_in (the corpus-trained "
                                               "masked LM) | a local BERT folder")
    head_c: float = Field(4.0, gt=0, description="features: the head's inverse L2 strength")
    head_max_iter: int = Field(2000, ge=1, description="features: the head's solver iterations")
    encoder_layers: int | None = Field(3, ge=1, description="fine_tune: keep the first k transformer layers "
                                                            "(null: all; features use every layer)")
    epochs: float = Field(2.0, gt=0)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(1e-4, gt=0, description="peak learning rate (after warm-up, then linear decay to 0)")
    warmup_fraction: float = Field(0.1, ge=0, lt=1, description="share of the steps spent warming the rate up from 0")
    max_grad_norm: float = Field(1.0, gt=0, description="gradients are clipped to this L2 norm")
    max_length: int = Field(128, ge=16, description="tokens per document (longer ones are truncated)")
    mixed_precision: bool = Field(True, description="bf16 autocast on CUDA")


class FrontierParams(Frozen):
    """How the frontier ranks settings (METHODS.md §5)."""

    utility: str = Field(
        "tfidf_logreg.original.accuracy",
        pattern=r"^[a-z_]+\.(original|privatized)\.(accuracy|macro_f1|roc_auc)$",
        description="<classifier>.<test_on>.<metric> used as the frontier's utility",
    )


class RecommendParams(Frozen):
    """The rule that proposes the setting to ship (METHODS.md §5; :mod:`textsift.evaluation.recommend`).

    Every privacy criterion must hold, each judged on its bootstrap upper bound (a point value where there is no
    interval) against its ceiling; a criterion a run cannot measure (no gold spans, no interest model) is
    skipped and said so. Among the settings that pass, the highest utility lower bound wins; none passes -> no
    recommendation."""

    leak_rate: Probability = Field(0.05, description="ceiling on the share of gold privacy spans left verbatim")
    leak_of: Literal["direct", "all"] = Field(
        "direct", description="which gold spans the leak-rate and attacker-recall ceilings count: the direct "
        "identifiers (names, contact details, ID numbers: detection.types.DIRECT_IDENTIFIERS) or every type. What "
        "quasi-identifiers (places, organisations, dates, jobs) still allow is judged by the re-identification and "
        "interest attackers; their leak is reported beside it")
    attacker_recall: Probability = Field(0.05, description="ceiling on the share of original spans the trained "
                                                           "detector finds again in the output")
    interest_leak: Probability = Field(0.2, description="ceiling on the share of revealed interests the IPI "
                                                        "attacker still infers the same")
    outsider_gain: Probability = Field(0.05, description="ceiling on what an outsider gains over chance by "
                                                         "replaying the draws or confirming guessed names")
    cross_document: Probability = Field(0.05, description="ceiling on the share of published documents that carry "
                                                          "a name part of another document of the corpus")
    trir_gain: Probability = Field(
        0.1, description="ceiling on the re-identification attacker's gain over chance: (share of published test "
        "documents it links to their person - chance) / (1 - chance), the attacker knowing the train split's "
        "persons from their documents; 0.1 is of the order of the 0.09 re-identification probability EMA (policy "
        "0070) and Health Canada accept for publicly released clinical reports")
    keyword_gain: Probability = Field(0.1, description="noisy embeddings: ceiling on the keyword attacker's gain over "
                                                       "chance, 2 x balanced accuracy - 1 of the stronger of the "
                                                       "clean-trained and the noise-aware attacker")
    cross_release_gain: Probability = Field(
        0.05, description="noisy embeddings: ceiling on the share of the distance to the clean embeddings that two "
        "published sets close beyond what composition allows (the inverse-variance average: on their draws and in "
        "expectation under independent noise)")
    beats_majority: bool = Field(True, description="the setting's classifier must beat the majority class "
                                                   "(utility lower bound above it)")


class BootstrapParams(Frozen):
    """Percentile-bootstrap intervals on utility and leak rates (test documents resampled)."""

    samples: int = Field(1000, ge=100, description="resamples per interval")
    level: float = Field(0.95, gt=0, lt=1, description="coverage of each interval")


class InterestAttackParams(Frozen):
    """How the attack stage's IPI attacker decides (METHODS.md §4.2 as an attribute-inference attack; see
    interests.attack)."""

    min_evidence_overlap: Probability = Field(
        0.5, ge=0, le=1, description="share of the generated evidence's words the text must contain for the "
        "attacker to count the interest; 0 trusts the interest alone (decodes 2 tokens instead of the evidence too)")


class EvaluateParams(Frozen):
    interest_attack: InterestAttackParams = InterestAttackParams()
    inference_precision: Precision = Field(
        "auto", description="what the frozen measuring models (the transformer head's sentence features, the "
        "interest attacker's decoding) compute in; auto: bfloat16 on CUDA and on CPUs with native bf16 "
        "(AVX512-BF16, AMX), else float32. What is released is never computed in it")
    tfidf_logreg: TfidfLogregParams = TfidfLogregParams()
    transformer: TransformerClassifierParams = TransformerClassifierParams()
    frontier: FrontierParams = FrontierParams()
    recommend: RecommendParams = RecommendParams()
    bootstrap: BootstrapParams = BootstrapParams()


class ReportParams(Frozen):
    """The HTML report of a run: tables and plots; privatized examples only when asked."""

    show_examples: bool = False
    examples_per_setting: int = Field(3, ge=0, le=50)
