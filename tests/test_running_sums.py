"""trec_eval's running sums (``compat="pytrec_eval"``): the table of C's log2 that
:func:`lexiframe.metrics.running.c_log2` grows stays aligned when Polars' threads grow it
at once (the measures of one call run in parallel)."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from lexiframe.metrics import running


def test_the_log2_table_grown_by_threads_at_once_stays_aligned(monkeypatch: pytest.MonkeyPatch):
    wrong: list[int] = []

    def look_up(top: int) -> None:
        values = np.arange(1, top)
        if not np.array_equal(running.c_log2(values), [math.log2(v) for v in values]):
            wrong.append(top)

    for _ in range(20):
        monkeypatch.setattr(running, "_log2_table", np.zeros(1))
        threads = [
            threading.Thread(target=look_up, args=(top,))
            for top in (50, 5_000, 200, 20_000, 800, 100_000, 3_000)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        look_up(150_000)  # every entry, past what each thread grew
    assert wrong == []
