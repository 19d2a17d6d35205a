"""Metric-DP word replacement, "Mechanism 2" (METHODS.md §2).

``noise`` draws the per-token noise (ε bounds one token occurrence; n tokens compose to nε),
``embedders`` turn a document's words into projected query vectors, and ``privatizer`` replaces
words batch by batch (``privatize_shard``: the pure per-shard function a fan-out calls).
"""
