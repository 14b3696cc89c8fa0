"""The ``.lexi`` expression methods are generated from the catalogue, one per measure family
that reads the ranks of a positions list column: each gives what :func:`lexiframe.measures`
gives under the measure's name, on graded and on binary frames."""

from __future__ import annotations

import inspect
import warnings

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import LexiframeWarning
from lexiframe.metrics import FAMILIES, Family, parse_measure
from tests.conftest import DATA

N = 5_000
WITH_METHOD = [family for family in FAMILIES if family.method is not None]


@pytest.fixture(scope="module")
def frames() -> dict[str, pl.DataFrame]:
    run, qrels = lf.read_run(DATA / "toy" / "runs"), lf.read_qrels(DATA / "toy" / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LexiframeWarning)
        graded = lf.positions(run, qrels, grades=True)
        binary = lf.positions(run, qrels.with_columns(pl.col("relevance").clip(0, 1)))
    assert "grades" not in binary.columns
    keys = ["system", "query"]
    return {"graded": graded.sort(keys), "binary": binary.sort(keys)}


def _call(family: Family, frame: pl.DataFrame, name: str) -> pl.Series:
    measure = parse_measure(name)
    method = getattr(pl.col("positions").lexi, str(family.method))
    accepted = inspect.signature(method).parameters
    args = [] if measure.cutoff is None else [measure.cutoff]
    kwargs = {k: v for k, v in measure.params if v != family.params[k]}
    if "grades" in accepted and "grades" in frame.columns:
        kwargs.update(grades="grades", ideal_grades="ideal_grades")
    if "n" in accepted:
        kwargs["n"] = N
    if "depth" in accepted:
        kwargs["depth"] = pl.col("n_ret").max().over("query")
    return frame.select(method(*args, **kwargs)).to_series()


@pytest.mark.parametrize("kind", ["graded", "binary"])
@pytest.mark.parametrize("family", WITH_METHOD, ids=[f.name for f in WITH_METHOD])
def test_each_method_is_its_measure(frames, family, kind):
    frame = frames[kind]
    names = [family.name] if family.cutoff != "required" else []
    names.append(family.example or family.name)
    for name in dict.fromkeys(names):
        measure = parse_measure(name)
        if measure.requires_grades and "grades" not in frame.columns:
            frame = frames["graded"].with_columns(  # binary grades, as the method assumes
                grades=pl.col("grades").list.eval(pl.element() * 0 + 1),
                ideal_grades=pl.col("ideal_grades").list.eval(pl.element() * 0 + 1),
            ) if kind == "binary" else frame
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LexiframeWarning)
            expected = lf.measures(frame, [name], n=N)[measure.name]
            got = _call(family, frames[kind], name)
        assert got.name == measure.name
        assert got.to_list() == pytest.approx(expected.to_list(), abs=1e-12, nan_ok=True), name


def test_families_without_a_method_read_more_than_the_ranks():
    for family in FAMILIES:
        if family.method is None:
            needs = family.needs
            assert callable(needs) or needs.judged or "n_ret" in needs.columns or (
                family.name == "NumRet"
            ), family.name


def test_methods_are_documented_from_the_catalogue():
    for family in WITH_METHOD:
        doc = inspect.getdoc(getattr(pl.col("positions").lexi, str(family.method))) or ""
        assert doc.startswith(family.summary.split(" ")[0]), family.name
        assert f"``{family.name}``" in doc
