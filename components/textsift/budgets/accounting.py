"""What a published set of noisy sentence embeddings guarantees, in words: written into each set's manifest and
the report (its own module: the report states it without importing the fit)."""

ACCOUNTING = (
    "Each published row (one document embedding) is epsilon_max-DP with respect to substituting one sensitive word "
    "within the masked-LM candidate neighbourhood whose spread defines the sensitivity: dimension d gets "
    "Lap(0, sensitivity_d / epsilon_d), and the dimensions compose sequentially (sum of epsilon_d = epsilon_max). "
    "A person in k published rows composes to k * epsilon_max. The sensitivity is empirical, and sensitivity and "
    "relevance were fitted on the corpus itself, so the allocation is not private; the noise is."
)
