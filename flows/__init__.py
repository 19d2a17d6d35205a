"""Prefect flows that wire textsift stages together (the only code importing prefect)."""
