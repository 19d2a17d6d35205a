"""Privacy mechanisms, one package per kind (the ``kind`` of a ``privatize.settings`` entry).

Each package holds its setting's config model (``config.py``) beside pure code that turns
texts into privatized texts; the ``privatize`` stage loads models/indexes and dispatches on
``kind``.
"""
