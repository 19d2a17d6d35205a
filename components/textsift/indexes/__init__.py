"""Projected nearest-neighbour indexes of metric-DP word replacement (METHODS.md §2).

``projection`` fixes the projected dimension m and the seeded Gaussian projection;
``annoy_index`` and ``exact_index`` answer batched nearest-neighbour queries (Annoy on CPU,
exact matrix products on CUDA); ``store`` saves and loads an index folder with its manifest.
"""
