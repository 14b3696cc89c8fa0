"""The documentation pages generated from code stay in step with it."""

from pathlib import Path

from lexiframe.metrics.registry import markdown_reference

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_measures_page_is_generated_from_the_registry():
    page = (DOCS / "measures.md").read_text(encoding="utf-8")
    assert page == markdown_reference(), (
        "regenerate: python -m lexiframe.metrics > docs/measures.md"
    )
