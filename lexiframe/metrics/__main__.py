"""``python -m lexiframe.metrics`` prints the measures page of the documentation."""

from lexiframe.metrics.registry import markdown_reference

print(markdown_reference(), end="")
