"""One module per pipeline stage, each a ``run(ctx)`` over :class:`textsift.stage_context.StageContext`;
the registry (:mod:`textsift.registry`) names them and :mod:`textsift.runner` runs them."""
