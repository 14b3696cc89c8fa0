"""``python -m lexiframe_command`` runs the command as its installed entry point does."""

from lexiframe_command import run

run()
