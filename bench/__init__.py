"""Benchmarks behind `make bench`; figures go to bench/results/latest.json."""
