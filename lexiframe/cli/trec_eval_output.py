"""trec_eval's output: the per-query lines and the ``all`` lines of each run, formatted for
all runs of a per-query table at once, as trec_eval prints them (names padded to 22
characters, counts as integers, 4 decimals otherwise, its ``-nan``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from lexiframe.cli import decimals
from lexiframe.cli.trec_eval_measures import SHOWN, Line
from lexiframe.metrics.trec_eval import MIN_GEO_MEAN


def format_runs(
    table: pl.DataFrame,
    lines: Sequence[Line],
    runids: Sequence[str],
    *,
    per_query: bool,
    judged_relevant: int | None = None,
    fill: bool = True,
    summary: bool = True,
) -> list[str]:
    """trec_eval's output for each run of a per-query table (columns as
    :func:`lexiframe.cli.trec_eval_measures.measured` names them; ``run`` is the run's
    index into ``runids``), formatted for all runs at once: the values of every query and
    line of a run in one column.

    ``judged_relevant``: with ``-c``, trec_eval's ``num_rel`` summary counts the judgments
    of the qrels with a grade above 0, whatever ``-l`` says; this is that count.
    ``fill``: a missing value is 0, as in trec_eval; otherwise it prints as ``nan`` and the
    mean is over the values present (lexiframe's null: undefined). ``summary=False``
    leaves out the ``all`` lines (trec_eval's ``-n``).
    """
    table = table.with_columns(pl.col("run").cast(pl.Int64)).sort("run", "query")
    runs = table.group_by("run", maintain_order=True).agg(pl.len().alias("count"))
    blocks = dict.fromkeys(range(len(runids)), "")
    if per_query:
        shown = [line for line in lines if line.kind not in ("runid", "num_q", "gm")]
        printed = table.filter(SHOWN) if SHOWN in table.columns else table
        for run, text in _per_query_text(printed, shown, fill).iter_rows():
            blocks[run] = text
    if summary:
        means = _means(table, lines, fill)
        for index, (run, count) in enumerate(runs.iter_rows()):
            text = []
            for line in lines:
                if line.kind == "runid":
                    value = runids[run]
                elif line.kind == "num_q":
                    value = str(count)
                elif line.printed == "num_rel" and judged_relevant is not None and fill:
                    value = str(judged_relevant)
                else:
                    value = means[line.printed][index]
                text.append(f"{line.printed:<22}\tall\t{value}\n")
            blocks[run] += "".join(text)
    return [blocks[run] for run in range(len(runids))]


def _per_query_text(table: pl.DataFrame, shown: Sequence[Line], fill: bool) -> pl.DataFrame:
    """One row per run: its per-query lines, query after query, lines in ``shown``'s
    order, joined into one string."""
    rows, width = table.height, len(shown)
    if rows == 0 or width == 0:
        return pl.DataFrame({"run": [], "text": []}, schema={"run": pl.Int64, "text": pl.String})
    columns = [line.column for line in shown]
    missing = 0.0 if fill else float("nan")
    values = table.select(pl.col(columns).cast(pl.Float64).fill_null(missing)).to_numpy()
    values = values.reshape(-1)  # query after query, each query's lines in order
    is_long = np.tile([line.kind == "long" for line in shown], rows)
    text = decimals.fixed4(pl.Series(values))
    if is_long.any():  # counts print as integers (a missing one as 0)
        counts = np.nan_to_num(values[is_long]).astype(np.int64)
        text = text.scatter(np.flatnonzero(is_long), pl.Series(counts).cast(pl.String))
    names = pl.Series([f"{line.printed:<22}" for line in shown])
    cell = np.arange(rows * width)
    long = pl.DataFrame(
        {
            "run": table["run"].gather(cell // width),
            "name": names.gather(cell % width),
            "query": table["query"].cast(pl.String).gather(cell // width),
            "value": text,
        }
    )
    return (
        long.group_by("run", maintain_order=True)
        .agg(pl.concat_str("name", "query", "value", separator="\t").str.join("\n") + "\n")
        .rename({"name": "text"})
    )


def _means(table: pl.DataFrame, lines: Sequence[Line], fill: bool) -> dict[str, list[str]]:
    """Each line's ``all`` value per run (in the runs' order), as trec_eval prints it."""
    aggregations = {}
    kinds = {}
    for line in lines:
        if line.kind in ("runid", "num_q"):
            continue
        column = pl.col(line.column).cast(pl.Float64)
        if not fill:
            value = column.mean().fill_null(float("nan"))
        elif line.kind == "long":
            value = column.fill_null(0).sum()
        elif line.kind == "gm":
            logs = column.fill_null(0).clip(lower_bound=MIN_GEO_MEAN).log()
            value = (logs.cum_sum().last() / pl.len()).exp()
        else:
            # Summed query after query, as trec_eval does, so that a mean on the rounding
            # boundary of the 4th decimal rounds the same way.
            value = column.fill_null(0).cum_sum().last() / pl.len()
        aggregations[line.printed] = value
        kinds[line.printed] = "long" if fill and line.kind == "long" else "double"
    if not aggregations:
        return {}
    means = table.group_by("run", maintain_order=True).agg(**aggregations).drop("run")
    doubles = [name for name in means.columns if kinds[name] == "double"]
    # Every double of every run formatted in one call, then cut back into columns.
    text = decimals.fixed4(pl.Series(means.select(doubles).to_numpy().reshape(-1, order="F")))
    runs = means.height
    printed = {name: text[i * runs : (i + 1) * runs].to_list() for i, name in enumerate(doubles)}
    for name in means.columns:
        if kinds[name] == "long":
            printed[name] = means[name].cast(pl.Int64).cast(pl.String).to_list()
    return printed


def per_query_lines(per_query: pl.DataFrame, names: Sequence[str]) -> str:
    """``lexiframe evaluate -q``: a metrics table (system, query, measures) in trec_eval's
    ``-q`` format, one block per system (sorted): each query's values, then ``runid``,
    ``num_q`` and the means, as ``all``. Undefined (null) values print as ``nan``.

    Example:
        >>> import polars as pl
        >>> table = pl.DataFrame({"system": ["a", "a"], "query": ["2", "1"], "RR": [0.5, 1.0]})
        >>> print(per_query_lines(table, ["RR"]), end="")
        RR                    \t1\t1.0000
        RR                    \t2\t0.5000
        runid                 \tall\ta
        num_q                 \tall\t2
        RR                    \tall\t0.7500
    """
    lines = [Line("runid", "runid", ""), Line("num_q", "num_q", "")]
    lines += [Line(name, "double", name) for name in names]
    systems = per_query["system"].cast(pl.String).unique().sort()
    table = per_query.select(
        pl.col("system").cast(pl.String).replace_strict(systems, range(len(systems))).alias("run"),
        "query",
        *names,
    )
    return "".join(format_runs(table, lines, systems.to_list(), per_query=True, fill=False))


