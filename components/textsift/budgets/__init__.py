"""Per-dimension LRP privacy budgets for sentence embeddings (METHODS.md §3): pure building blocks."""
