"""Privatizing a corpus with one setting: the mechanism's resources, the outsider attacks, the served model."""
