"""``python -m textsift``: the same command line as the ``textsift`` script."""

from textsift.cli import main

main()
