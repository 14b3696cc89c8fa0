"""Success@k, the counts, SetP/SetR/SetF and IPrec@x on rankings computed by hand.

Their per-query parity with trec_eval is in ``tests/test_trec_eval_parity.py``; these
cover the edge cases: nothing relevant retrieved (r = 0), a cutoff deeper than the
ranking, an empty ranking, and the rounding of recall levels to relevant-document counts.
"""

from __future__ import annotations

import polars as pl
import pytest

import lexiframe as lf
from lexiframe.errors import UnknownMeasureError

SCHEMA = {"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32}
# (positions, m, ñ): a ranking of 10 with relevant documents at 2, 3 and 10 of m = 4;
# r = 0 of m = 3 in a ranking of 5; an empty ranking (a skipped query) with m = 2;
# a ranking of 3, all relevant, m = 3.
FRAME = pl.DataFrame(
    {
        "positions": [[2, 3, 10], [], [], [1, 2, 3]],
        "n_rel": [4, 3, 2, 3],
        "n_ret": [10, 5, 0, 3],
    },
    schema=SCHEMA,
)


def values(name: str) -> list[float]:
    return FRAME.lexi.measures([name])[str(lf.parse_measure(name))].to_list()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Success@1", [0.0, 0.0, 0.0, 1.0]),
        ("success_5", [1.0, 0.0, 0.0, 1.0]),
        ("Success@1000", [1.0, 0.0, 0.0, 1.0]),  # k beyond every ranking
        ("num_ret", [10, 5, 0, 3]),
        ("num_rel", [4, 3, 2, 3]),
        ("num_rel_ret", [3, 0, 0, 3]),
        ("set_P", [0.3, 0.0, 0.0, 1.0]),
        ("set_recall", [0.75, 0.0, 0.0, 1.0]),
        # 2 P R / (P + R) with P = 0.3, R = 0.75: 0.45 / 1.05
        ("set_F", [0.45 / 1.05, 0.0, 0.0, 1.0]),
        # (1 + 0.5) P R / (0.5 P + R) = 0.3375 / 0.9
        ("SetF(beta=0.5)", [0.3375 / 0.9, 0.0, 0.0, 1.0]),
        # precisions 1/2, 2/3, 3/10; level x needs round(4x) relevant documents
        ("IPrec@0.0", [2 / 3, 0.0, 0.0, 1.0]),
        ("iprec_at_recall_0.10", [2 / 3, 0.0, 0.0, 1.0]),  # round(0.4) = 0 → best of all
        ("IPrec@0.5", [2 / 3, 0.0, 0.0, 1.0]),  # 2 needed: max(2/3, 3/10)
        ("IPrec@0.6", [2 / 3, 0.0, 0.0, 1.0]),  # round(2.4) = 2 → max(2/3, 3/10)
        ("IPrec@0.7", [0.3, 0.0, 0.0, 1.0]),  # round(2.8) = 3 → 3/10
        ("IPrec@1.0", [0.0, 0.0, 0.0, 1.0]),  # 4 needed, only 3 retrieved
    ],
)
def test_hand_computed(name, expected):
    got = values(name)
    assert got == pytest.approx(expected), name


def test_recall_level_halves_round_up():
    """m = 2 and x = 0.25: round(0.5) = 1 relevant document (trec_eval rounds halves up)."""
    frame = pl.DataFrame({"positions": [[1, 5]], "n_rel": [2], "n_ret": [5]}, schema=SCHEMA)
    got = frame.lexi.measures(["IPrec@0.25", "IPrec@0.75"]).row(0, named=True)
    assert got["IPrec@0.25"] == 1.0  # best of 1/1 and 2/5
    assert got["IPrec@0.75"] == pytest.approx(0.4)  # round(1.5) = 2 → 2/5


@pytest.mark.parametrize("name", ["IPrec", "IPrec@2", "IPrec@1.5", "IPrec@x", "NumRet@10"])
def test_bad_names_are_refused(name):
    with pytest.raises(UnknownMeasureError):
        lf.parse_measure(name)


def test_trec_eval_names_are_aliases():
    names = ["success_10", "num_rel_ret", "set_F", "iprec_at_recall_0.50", "map_cut_100"]
    assert [str(lf.parse_measure(name)) for name in names] == [
        "Success@10",
        "NumRelRet",
        "SetF",
        "IPrec@0.5",
        "AP@100",
    ]
