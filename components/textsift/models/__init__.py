"""Trained models of textsift: the corpus-trained fill-in masked LM (METHODS.md §1.1) and its tokenizer."""
