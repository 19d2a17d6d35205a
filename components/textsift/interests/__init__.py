"""Interest-privacy inference (IPI, METHODS.md §4.2): synthetic posts, the UniLM seq2seq model, ROUGE."""
