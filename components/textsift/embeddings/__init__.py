"""Embedding sources of metric-DP word replacement (METHODS.md §2), behind one interface.

Static sources (``word2vec``, ``fasttext``, ``glove``, ``bert_static``) give a
:class:`~textsift.embeddings.vectors.WordVectors` table; ``bert_contextual`` gives a
:class:`~textsift.embeddings.bert.ContextualEncoder` that embeds each word in its sentence.
``sources.static_vectors`` dispatches on the source's ``kind``.
"""
