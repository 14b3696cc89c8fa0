"""``python -m lexiframe`` runs the command line."""

from lexiframe.cli import run

run()
