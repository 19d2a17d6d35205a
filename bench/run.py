"""`make bench`: run every benchmark and write bench/results/latest.json.

Usage: python -m bench.run [--n-docs 50000] [--output bench/results/latest.json]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from textsift.telemetry import disable_telemetry

disable_telemetry()

from bench import ingest_eval  # noqa: E402
from bench.harness import write_results  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-docs", type=int, default=50_000, help="documents for the ingest figures")
    parser.add_argument("--output", type=Path, default=Path("bench/results/latest.json"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    figures = ingest_eval.figures(args.n_docs)
    write_results(figures, args.output)
    for figure in figures:
        print(figure.summary())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
