"""Evaluation: utility of downstream classifiers and privacy metrics (METHODS.md section 5)."""
