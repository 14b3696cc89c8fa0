"""Several qrels on the same runs, checked against SciPy, published values and plain loops.

τ_AP follows Yilmaz, Aslam and Robertson (SIGIR 2008) written out item by item; κ follows
its definition as observed and chance agreement over a contingency table; Krippendorff's
α enumerates the pairable values of each unit (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability", whose worked example is checked too).
"""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

import lexiframe as lf
from lexiframe import stats
from lexiframe.cli import main
from lexiframe.errors import DroppedQueriesWarning, InputError, SchemaError

# --- direct implementations -------------------------------------------------------------------


def direct_tau_ap(reference: list[int], compared: list[int]) -> float:
    """τ_AP = 2/(N−1) Σ_{i=2..N} C(i)/(i−1) − 1, the items in the compared order."""
    items = sorted(range(len(compared)), key=lambda i: compared[i])
    total = 0.0
    for position in range(1, len(items)):
        item = items[position]
        correct = sum(reference[other] < reference[item] for other in items[:position])
        total += correct / position
    return 2.0 / (len(items) - 1) * total - 1.0


def direct_kappa(a: list[int], b: list[int], weights: str = "none") -> float:
    grades = sorted(set(a) | set(b))
    k = len(grades)
    n = len(a)

    def w(x: int, y: int) -> float:
        d = abs(grades.index(x) - grades.index(y)) / max(k - 1, 1)
        return {"none": float(x != y), "linear": d, "quadratic": d * d}[weights]

    observed = sum(w(x, y) for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(x) / n) * (b.count(y) / n) * w(x, y) for x in grades for y in grades)
    return 1.0 - observed / expected


def direct_alpha(units: list[list[float]], level: str) -> float:
    """α = 1 − D_o / D_e over the pairable values, each unit's pairs weighted 1/(m_u − 1)."""
    units = [[v for v in unit if not math.isnan(v)] for unit in units]
    units = [unit for unit in units if len(unit) >= 2]
    values = [v for unit in units for v in unit]
    n = len(values)
    counts = {c: values.count(c) for c in set(values)}

    def delta(c: float, k: float) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        low, high = min(c, k), max(c, k)
        between = sum(counts[g] for g in counts if low <= g <= high)
        return (between - (counts[c] + counts[k]) / 2) ** 2

    observed = sum(
        delta(unit[i], unit[j]) / (len(unit) - 1)
        for unit in units
        for i, j in itertools.permutations(range(len(unit)), 2)
    )
    expected = sum(delta(c, k) for c, k in itertools.permutations(values, 2)) / (n - 1)
    return 1.0 - observed / expected


# --- ordering agreement -----------------------------------------------------------------------


@given(st.permutations(list(range(1, 9))), st.permutations(list(range(1, 9))))
@settings(max_examples=200, deadline=None)
def test_tau_ap_matches_the_definition(reference: list[int], compared: list[int]) -> None:
    assert stats.tau_ap(reference, compared) == pytest.approx(direct_tau_ap(reference, compared))
    assert -1.0 - 1e-12 <= stats.tau_ap(reference, compared) <= 1.0 + 1e-12


def test_tau_ap_weighs_the_top() -> None:
    truth = [1, 2, 3, 4, 5]
    top_swap = stats.tau_ap(truth, [2, 1, 3, 4, 5])
    bottom_swap = stats.tau_ap(truth, [1, 2, 3, 5, 4])
    assert top_swap < bottom_swap < 1.0
    # one swap costs Kendall's τ the same wherever it is
    assert scipy_stats.kendalltau(truth, [2, 1, 3, 4, 5]).statistic == pytest.approx(
        scipy_stats.kendalltau(truth, [1, 2, 3, 5, 4]).statistic
    )


@given(st.permutations(list(range(1, 11))), st.permutations(list(range(1, 11))),
       st.integers(1, 12))  # fmt: skip
@settings(max_examples=100, deadline=None)
def test_top_k_overlap_is_the_set_intersection(a: list[int], b: list[int], k: int) -> None:
    top_a = {i for i, r in enumerate(a) if r <= k}
    top_b = {i for i, r in enumerate(b) if r <= k}
    assert stats.top_k_overlap(a, b, k) == pytest.approx(len(top_a & top_b) / min(k, len(a)))


def test_orderings_with_ties_are_refused() -> None:
    with pytest.raises(InputError, match="ties"):
        stats.tau_ap([1, 1, 2], [1, 2, 3])


# --- label agreement --------------------------------------------------------------------------


def test_kappa_of_a_textbook_table() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o = 0.7, p_e = 0.5, κ = 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4)


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40),
    st.sampled_from(["none", "linear", "quadratic"]),
)
@settings(max_examples=200, deadline=None)
def test_kappa_matches_the_definition(pairs: list[tuple[int, int]], weights: str) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    if len(set(a) | set(b)) < 2:
        assert math.isnan(stats.cohen_kappa(a, b, weights=weights))  # type: ignore[arg-type]
        return
    expected = direct_kappa(a, b, weights)
    got = stats.cohen_kappa(a, b, weights=weights)  # type: ignore[arg-type]
    assert got == pytest.approx(expected)


NAN = float("nan")
# Krippendorff (2011), section C: 4 coders, 12 units, missing values
RELIABILITY = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
).T


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_of_krippendorffs_worked_example(level: str, published: float) -> None:
    got = stats.krippendorff_alpha(RELIABILITY, level=level)  # type: ignore[arg-type]
    assert round(got, 3) == published
    assert got == pytest.approx(direct_alpha(RELIABILITY.tolist(), level))


@given(
    st.lists(
        st.lists(st.one_of(st.integers(0, 3).map(float), st.just(NAN)), min_size=3, max_size=3),
        min_size=2,
        max_size=25,
    ),
    st.sampled_from(["nominal", "ordinal", "interval"]),
)
@settings(max_examples=200, deadline=None)
def test_alpha_matches_the_enumeration(units: list[list[float]], level: str) -> None:
    pairable = [v for u in units if sum(not math.isnan(x) for x in u) >= 2 for v in u]
    distinct = {v for v in pairable if not math.isnan(v)}
    got = stats.krippendorff_alpha(units, level=level)  # type: ignore[arg-type]
    if len(distinct) < 2:
        assert math.isnan(got)
        return
    assert got == pytest.approx(direct_alpha(units, level))


def _stacked(**qrels: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([frame.with_columns(qrels=pl.lit(name)) for name, frame in qrels.items()])


def test_label_agreement_reads_the_shared_judgments() -> None:
    human = pl.DataFrame(
        {"query": ["1"] * 6, "doc": list("abcdef"), "relevance": [0, 1, 2, 2, 0, 1]}
    )
    llm = pl.DataFrame({"query": ["1"] * 5, "doc": list("abcdg"), "relevance": [0, 2, 2, 1, 1]})
    third = human.with_columns(relevance=pl.Series([0, 1, 2, 1, 0, 0]))
    table = stats.label_agreement(_stacked(human=human, llm=llm, third=third), reference="human")
    assert table["qrels_b"].to_list() == ["llm", "third", "*"]
    row = table.row(0, named=True)
    assert row["n_shared"] == 4  # a, b, c, d
    for weights in ("none", "linear", "quadratic"):
        column = "kappa" if weights == "none" else f"kappa_{weights}"
        assert row[column] == pytest.approx(direct_kappa([0, 1, 2, 2], [0, 2, 2, 1], weights))
    units = [[0, 0, 0], [1, 2, 1], [2, 2, 2], [2, 1, 1], [0, NAN, 0], [1, NAN, 0], [NAN, 1, NAN]]
    assert table.row(2, named=True)["alpha_ordinal"] == pytest.approx(
        direct_alpha(units, "ordinal")
    )


def test_label_agreement_errors() -> None:
    human = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
    with pytest.raises(SchemaError, match="with_columns"):
        stats.label_agreement(human)
    with pytest.raises(InputError, match="two or more"):
        stats.label_agreement(_stacked(human=human))
    with pytest.raises(InputError, match="reference='crowd' is none of the qrels"):
        stats.label_agreement(_stacked(human=human, llm=human), reference="crowd")


# --- the report on per-query frames -----------------------------------------------------------


@pytest.fixture(scope="module")
def track() -> dict[str, pl.DataFrame]:
    demo = lf.datasets.demo_track()
    llm = stats.simulated_judge(
        demo.qrels, demo.run, seed=7, bias=0.4, noise=0.7, favoured={"sys005": 1.0}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        metrics = pl.concat(
            [
                lf.evaluate(demo.run, q, ["AP", "nDCG@10"]).with_columns(pl.lit(n).alias("qrels"))
                for n, q in (("human", demo.qrels), ("llm", llm))
            ]
        )
        prefs = pl.concat(
            [
                lf.preferences(lf.positions(demo.run, q), ["sgnLP"]).with_columns(
                    pl.lit(n).alias("qrels")
                )
                for n, q in (("human", demo.qrels), ("llm", llm))
            ]
        )
    judgments = _stacked(human=demo.qrels, llm=llm)
    return {"run": demo.run, "metrics": metrics, "prefs": prefs, "judgments": judgments}


def _common_queries(metrics: pl.DataFrame) -> pl.DataFrame:
    queries = set.intersection(*(set(part["query"]) for part in metrics.partition_by("qrels")))
    return metrics.filter(pl.col("query").is_in(sorted(queries)))


def test_report_matches_independent_computations(track: dict[str, pl.DataFrame]) -> None:
    report = stats.qrels_agreement(
        [track["metrics"], track["prefs"]],
        ["AP", "nDCG@10", "sgnLP"],
        run=track["run"],
        judgments=track["judgments"],
        k=3,
        top_docs=5,
    )
    metrics = _common_queries(track["metrics"])
    for measure in ("AP", "nDCG@10"):
        means = {
            name: dict(
                metrics.filter(pl.col("qrels") == name)
                .group_by("system")
                .agg(pl.col(measure).mean())
                .iter_rows()
            )
            for name in ("human", "llm")
        }
        systems = sorted(means["human"])
        x = [means["human"][s] for s in systems]
        y = [means["llm"][s] for s in systems]
        row = report.summary.filter(pl.col("measure") == measure).row(0, named=True)
        assert row["tau"] == pytest.approx(scipy_stats.kendalltau(x, y).statistic)
        rank_x = scipy_stats.rankdata([-v for v in x], method="ordinal").tolist()
        rank_y = scipy_stats.rankdata([-v for v in y], method="ordinal").tolist()
        assert row["tau_ap"] == pytest.approx(direct_tau_ap(rank_x, rank_y))
        top_x = {s for s, r in zip(systems, rank_x, strict=True) if r <= 3}
        top_y = {s for s, r in zip(systems, rank_y, strict=True) if r <= 3}
        assert row["top_k_overlap"] == pytest.approx(len(top_x & top_y) / 3)
        per_system = report.systems.filter(pl.col("measure") == measure).sort("system")
        assert per_system["mean_difference"].to_list() == pytest.approx(
            [means["llm"][s] - means["human"][s] for s in systems]
        )
        # significance: the paired t-test per pair, Holm within each qrels, counted here
        decisions = {}
        for name in ("human", "llm"):
            part = metrics.filter(pl.col("qrels") == name)
            scores = {
                s: part.filter(pl.col("system") == s).sort("query")[measure].to_numpy()
                for s in systems
            }
            pvalues = {
                (a, b): scipy_stats.ttest_rel(scores[a], scores[b]).pvalue
                for a, b in itertools.combinations(systems, 2)
            }
            order = sorted(pvalues, key=pvalues.__getitem__)
            adjusted, running = {}, 0.0
            for index, pair in enumerate(order):
                running = max(running, min(1.0, (len(order) - index) * pvalues[pair]))
                adjusted[pair] = running
            decisions[name] = {
                pair: (
                    adjusted[pair] < 0.05,
                    np.sign(scores[pair[0]].mean() - scores[pair[1]].mean()),
                )
                for pair in pvalues
            }
        pairs = list(decisions["human"])
        sig_a = [decisions["human"][p][0] for p in pairs]
        sig_b = [decisions["llm"][p][0] for p in pairs]
        same = [decisions["human"][p][1] == decisions["llm"][p][1] for p in pairs]
        assert row["test"] == "paired_t" and row["correction"] == "holm"
        assert row["n_significant_a"] == sum(sig_a)
        assert row["n_significant_b"] == sum(sig_b)
        assert row["n_both"] == sum(
            a and b and s for a, b, s in zip(sig_a, sig_b, same, strict=True)
        )
        assert row["n_b_only"] == sum(b and not a for a, b in zip(sig_a, sig_b, strict=True))
        assert row["false_positive_rate"] == pytest.approx(
            row["n_b_only"] / (len(pairs) - sum(sig_a))
        )
        holes = per_system["hole"].to_numpy()
        assert row["hole_spearman"] == pytest.approx(
            scipy_stats.spearmanr(holes, per_system["mean_difference"].to_numpy()).statistic
        )
    preference = report.summary.filter(pl.col("measure") == "sgnLP").row(0, named=True)
    assert preference["test"] == "sign"
    assert report.labels is not None and report.labels.height == 1


def test_the_favoured_system_moves_up(track: dict[str, pl.DataFrame]) -> None:
    report = stats.qrels_agreement(track["metrics"], "nDCG@10")
    shifts = dict(report.systems.select("system", "rank_shift").iter_rows())
    differences = dict(report.systems.select("system", "mean_difference").iter_rows())
    assert max(differences, key=differences.__getitem__) == "sys005"
    assert shifts["sys005"] == max(shifts.values()) > 0


def test_hole_size_matches_a_loop(track: dict[str, pl.DataFrame]) -> None:
    run, judgments = track["run"], track["judgments"].filter(pl.col("qrels") == "human")
    judged = set(judgments.select("query", "doc").iter_rows())
    queries = set(judgments["query"])
    table = stats.hole_size(run, judgments, k=[1, 5])
    for (system, cut), hole in zip(
        table.select("system", "k").iter_rows(), table["hole"], strict=True
    ):
        shares = []
        for query in sorted(queries):
            ranking = run.filter((pl.col("system") == system) & (pl.col("query") == query))
            if ranking.height == 0:
                continue
            top = ranking.sort(["score", "doc"], descending=True).head(cut)["doc"].to_list()
            shares.append(sum((query, d) not in judged for d in top) / len(top))
        assert hole == pytest.approx(sum(shares) / len(shares))


def test_reference_pairs_and_three_qrels(track: dict[str, pl.DataFrame]) -> None:
    third = track["metrics"].filter(pl.col("qrels") == "llm").with_columns(qrels=pl.lit("crowd"))
    frame = pl.concat([track["metrics"], third])
    report = stats.qrels_agreement(frame, "AP", reference="llm")
    assert report.summary.select("qrels_a", "qrels_b").rows() == [
        ("llm", "human"),
        ("llm", "crowd"),
    ]
    crowd = report.summary.row(1, named=True)
    assert crowd["tau"] == pytest.approx(1.0) and crowd["tau_ap"] == pytest.approx(1.0)
    assert crowd["n_a_only"] == crowd["n_b_only"] == 0 and crowd["agreement"] == 1.0
    every = stats.qrels_agreement(frame, "AP")
    assert every.summary.height == 3


def test_report_errors(track: dict[str, pl.DataFrame]) -> None:
    metrics = track["metrics"]
    with pytest.raises(SchemaError, match=r"concat_qrels\(\{'human': human, 'llm': llm\}\)"):
        stats.qrels_agreement(metrics.drop("qrels"), "AP")
    with pytest.raises(InputError, match="no per-query frame has a column 'RR'"):
        stats.qrels_agreement(metrics, "RR")
    with pytest.raises(InputError, match="two or more"):
        stats.qrels_agreement(metrics.filter(pl.col("qrels") == "human"), "AP")
    with pytest.raises(InputError, match="ordering method"):
        stats.qrels_agreement(metrics, "AP", method="copeland")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="alpha"):
        stats.qrels_agreement(metrics, "AP", alpha=5)
    with pytest.raises(InputError, match="pass judgments="):
        stats.qrels_agreement(metrics, "AP", run=track["run"])


@given(st.integers(0, 2**32 - 1), st.integers(3, 7), st.integers(3, 9))
@settings(max_examples=25, deadline=None)
def test_swapping_the_qrels_swaps_the_report(seed: int, n_systems: int, n_queries: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.random((n_systems, n_queries))
    frames = [
        pl.DataFrame(
            {
                "system": np.repeat([f"s{i}" for i in range(n_systems)], n_queries),
                "query": np.tile([f"q{j}" for j in range(n_queries)], n_systems),
                "AP": (truth + noise * rng.random(truth.shape)).ravel(),
                "qrels": name,
            }
        )
        for name, noise in (("a", 0.0), ("b", 0.5))
    ]
    forward = stats.qrels_agreement(pl.concat(frames), "AP", k=2).summary.row(0, named=True)
    backward = stats.qrels_agreement(pl.concat(frames[::-1]), "AP", k=2).summary.row(0, named=True)
    assert (backward["qrels_a"], backward["qrels_b"]) == ("b", "a")
    assert backward["tau"] == pytest.approx(forward["tau"])
    assert backward["tau_ap_symmetric"] == pytest.approx(forward["tau_ap_symmetric"])
    assert backward["top_k_overlap"] == forward["top_k_overlap"]
    assert (backward["n_a_only"], backward["n_b_only"]) == (
        forward["n_b_only"],
        forward["n_a_only"],
    )
    assert backward["mean_bias"] == pytest.approx(-forward["mean_bias"])
    decided = sum(forward[c] for c in ("n_both", "n_a_only", "n_b_only", "n_opposite"))
    assert decided <= forward["n_pairs"] == n_systems * (n_systems - 1) // 2
    same = stats.qrels_agreement(
        pl.concat([frames[0], frames[0].with_columns(qrels=pl.lit("c"))]), "AP", k=2
    ).summary.row(0, named=True)
    assert same["tau_ap"] == pytest.approx(1.0) and same["top_k_overlap"] == 1.0
    assert same["agreement"] == 1.0 and same["mean_bias"] == 0.0


# --- the simulated judge ----------------------------------------------------------------------


def test_simulated_judge_is_reproducible_and_has_its_bias(track: dict[str, pl.DataFrame]) -> None:
    demo = lf.datasets.demo_track()
    first = stats.simulated_judge(demo.qrels, demo.run, seed=3, bias=0.5, noise=0.4)
    assert first.equals(stats.simulated_judge(demo.qrels, demo.run, seed=3, bias=0.5, noise=0.4))
    assert not first.equals(
        stats.simulated_judge(demo.qrels, demo.run, seed=4, bias=0.5, noise=0.4)
    )
    exact = stats.simulated_judge(demo.qrels, demo.run, seed=0, noise=0.0, bias=1.0)
    joined = demo.qrels.join(exact, on=["query", "doc"], suffix="_llm")
    assert (joined["relevance_llm"] == (joined["relevance"] + 1).clip(0, 2)).all()
    pooled = exact.join(demo.qrels, on=["query", "doc"], how="anti")
    assert pooled.height > 0 and (pooled["relevance"] == 1).all()  # unjudged: 0 + bias
    dropped = stats.simulated_judge(demo.qrels, demo.run, seed=0, unjudged=0.5)
    assert 0.4 < dropped.height / exact.height < 0.6


def test_simulated_judge_errors() -> None:
    demo = lf.datasets.demo_track()
    with pytest.raises(InputError, match="noise is a standard deviation"):
        stats.simulated_judge(demo.qrels, demo.run, seed=0, noise=-1.0)
    with pytest.raises(InputError, match="unjudged"):
        stats.simulated_judge(demo.qrels, demo.run, seed=0, unjudged=2.0)
    with pytest.raises(SchemaError, match=r"lf\.read_run"):
        stats.simulated_judge(demo.qrels, demo.run.drop("score"), seed=0)


# --- lexiframe compare-qrels --------------------------------------------------------------------


@pytest.fixture(scope="module")
def track_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("compare-qrels")
    demo = lf.datasets.write_demo(folder)
    llm = stats.simulated_judge(
        lf.read_qrels(demo.qrels), lf.read_run(demo.runs), seed=2, bias=0.3, noise=0.6
    )
    lf.write_trec_qrels(llm, folder / "llm.txt")
    return {"runs": str(folder / "runs"), "human": str(demo.qrels), "llm": str(folder / "llm.txt")}


def test_compare_qrels_prints_and_writes_the_report(
    track_files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, systems = tmp_path / "summary.parquet", tmp_path / "systems.csv"
    arguments = ["compare-qrels", track_files["runs"], "--qrels", f"human={track_files['human']}",
                 "--qrels", f"llm={track_files['llm']}", "-m", "AP", "-m", "sgnLP",
                 "-o", str(summary), "--systems", str(systems)]  # fmt: skip
    assert main(arguments) == 0
    out = capsys.readouterr().out
    run = lf.read_run(track_files["runs"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedQueriesWarning)
        metrics = pl.concat(
            [
                lf.evaluate(run, lf.read_qrels(track_files[n]), ["AP"]).with_columns(
                    pl.lit(n).alias("qrels")
                )
                for n in ("human", "llm")
            ]
        )
    expected = stats.qrels_agreement(metrics, "AP").summary.row(0, named=True)
    written = pl.read_parquet(summary)
    assert written.filter(pl.col("measure") == "AP")["tau"][0] == pytest.approx(expected["tau"])
    assert written["measure"].to_list() == ["AP", "sgnLP"]
    assert f"| human | llm | AP | 8 | {round(expected['tau'], 4)} |" in out
    labels = stats.label_agreement(
        _stacked(**{n: lf.read_qrels(track_files[n]) for n in ("human", "llm")})
    ).row(0, named=True)
    assert f"| human | llm | {labels['n_shared']} | {round(labels['kappa'], 4)} |" in out
    assert pl.read_csv(systems).height == 16  # 8 systems, 2 measures


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--qrels", "human=H"], "needs two or more --qrels"),
        (["--qrels", "a=H", "--qrels", "a=L"], "names 'a' twice"),
        (["--qrels", "a=H", "--qrels", "b=L", "--reference", "c"], "--reference 'c' names none"),
        (["--qrels", "a=H", "--qrels", "=L"], "write NAME=FILE"),
        (["--qrels", "a=H", "--qrels", "b=L", "--test", "fisher"], "needs --seed, e.g. --seed 0"),
    ],
)
def test_compare_qrels_errors_are_one_line(
    track_files: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    message: str,
) -> None:
    flags = [f.replace("=H", f"={track_files['human']}").replace("=L", f"={track_files['llm']}")
             for f in flags]  # fmt: skip
    assert main(["compare-qrels", track_files["runs"], *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
