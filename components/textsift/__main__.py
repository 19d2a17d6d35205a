"""``python -m textsift``: the same command line as the ``textsift`` script."""

from textsift.cli import app

app(prog_name="textsift")
