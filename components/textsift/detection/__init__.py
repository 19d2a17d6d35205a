"""Privacy-entity detection: the recognizers, their training data (METHODS.md §4) and how they are scored."""
