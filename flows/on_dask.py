"""The pipeline flow with its stages on a Dask cluster: the entrypoint of ``prefect.yaml``'s Dask deployment.

Prefect loads a deployment's entrypoint file as a script under a module name of its own (``pipeline``, or
``__prefect_loader_...__``), so tasks defined in that file are pickled by a name no Dask worker can import. This file
defines no task: it imports the flow from the package ``flows.pipeline``, whose ``stage_task`` every worker imports
by that name (the project folder is on its path). The cluster is the one at ``$TEXTSIFT_DASK_ADDRESS`` (set it in
the deployment's ``job_variables``), else a local cluster of two worker processes.
"""

from __future__ import annotations

import os

from flows.pipeline import DASK_ADDRESS_ENV, pipeline, task_runner

LOCAL_WORKERS = 2  # without a scheduler address: a cluster of this many single-threaded workers

pipeline_on_dask = pipeline.with_options(
    task_runner=task_runner("dask", LOCAL_WORKERS, os.environ.get(DASK_ADDRESS_ENV) or None))
