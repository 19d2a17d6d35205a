"""`make bench`: run every benchmark module and write bench/results/latest.json.

Each module listed in ``MODULES`` exposes ``figures(args) -> list[Figure]`` and may add its
own command-line options with ``add_arguments(parser)``.

Usage: python -m bench.run [--only NAME ...] [--n-docs 50000] [--output bench/results/latest.json]

Only the modules ``--only`` names are imported (and only their options exist), so one module runs where the
others' dependencies are missing (e.g. ``--only gpu detector`` on a lent GPU machine). ``--device`` picks where the
torch modules run (detector, embeddings, transformer_modes; default: CUDA when torch sees one, transformer_modes
the params' ``device``); ``gpu`` measures CUDA beside the CPU itself (``--gpu-devices``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
from pathlib import Path

from textsift.entry_point import prepare_process

prepare_process()

from bench.harness import write_results  # noqa: E402

MODULES = ("ingest_eval", "metric_dp", "datasifter", "detector", "detector_real", "names_task", "embeddings",
           "interests", "scale_out", "privatize_stream", "serve", "transformer_modes", "gpu", "pipeline_growth")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=None, help=f"modules to run (of {', '.join(MODULES)})")
    parser.add_argument("--output", type=Path, default=Path("bench/results/latest.json"))
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None,
                        help="where detector, embeddings and transformer_modes run (default: auto; "
                             "transformer_modes: the params' device)")
    only = parser.parse_known_args(argv)[0].only
    unknown = sorted(set(only or ()) - set(MODULES))
    if unknown:
        parser.error(f"--only: unknown module(s) {', '.join(unknown)} (of {', '.join(MODULES)})")
    names = [name for name in MODULES if only is None or name in only]
    modules = [importlib.import_module(f"bench.{name}") for name in names]
    for module in modules:
        if hasattr(module, "add_arguments"):
            module.add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    figures = []
    for module in modules:
        figures.extend(module.figures(args))
        write_results(figures, args.output)  # keep what is measured even if a later module fails
    for figure in figures:
        print(figure.summary())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
