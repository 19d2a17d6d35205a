"""Privacy mechanisms, one package per kind (the ``kind`` of a ``privatize.settings`` entry).

Each package holds its setting's params model (``params.py``), pure code that turns texts into
privatized texts, and ``mechanism.py``, its :class:`~textsift.mechanisms.base.Mechanism` (what a
setting needs; privatizing documents given the resources it loads). ``registry.py`` lists them by
``kind``; the ``privatize`` stage and ``textsift privatize`` dispatch through it.
"""
