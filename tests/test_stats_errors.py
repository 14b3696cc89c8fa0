"""Errors of lexiframe.stats say what was wrong, where (column, example row) and what to do."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lexiframe import stats
from lexiframe.errors import InputError, SchemaError

POSITIONS_SCHEMA = {"positions": pl.List(pl.UInt32), "n_rel": pl.UInt32, "n_ret": pl.UInt32}


def metrics() -> pl.DataFrame:
    """3 systems x 4 queries of RR and AP."""
    return pl.DataFrame(
        {
            "system": [s for s in "xyz" for _ in range(4)],
            "query": list("1234") * 3,
            "RR": [1.0, 0.5, 1.0, 0.25, 0.5, 0.5, 0.2, 0.25, 1.0, 0.1, 0.5, 1.0],
            "AP": [0.9, 0.4, 0.8, 0.2, 0.3, 0.5, 0.1, 0.2, 0.7, 0.1, 0.4, 0.6],
        }
    )


def positions(docs: bool = False) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "system": ["x", "y", "x", "y"],
            "query": ["1", "1", "2", "2"],
            "positions": [[1, 3], [2], [1], [4]],
            "n_rel": [2, 2, 1, 1],
            "n_ret": [10, 10, 10, 10],
            "docs": [["a", "b"], ["b"], ["c"], ["c"]],
        },
        schema_overrides=POSITIONS_SCHEMA,
    )
    return frame if docs else frame.drop("docs")


# --- wrong table kind ---------------------------------------------------------------------------


def test_a_pandas_frame_says_how_to_convert_it():
    with pytest.raises(
        SchemaError, match=r"not pandas\.DataFrame; convert it with pl\.from_pandas"
    ):
        stats.significance(metrics().to_pandas(), "RR")


def test_a_positions_frame_where_measures_are_expected_says_what_to_compute():
    with pytest.raises(SchemaError, match=r"looks like a positions frame.*lexi\.measures"):
        stats.tie_fraction(positions())


def test_a_per_query_table_where_system_scores_are_expected_says_to_average_it():
    with pytest.raises(InputError, match=r"system='x'.*'query' column: average it first"):
        stats.kendall_tau(metrics(), "RR", ["AP"])


def test_rendering_a_table_that_is_not_a_report_says_how_to_build_one():
    with pytest.raises(SchemaError, match=r"no column 'label'.*stats\.report"):
        stats.to_markdown(metrics())


def test_a_preferences_table_without_first_difference_says_how_to_add_it():
    prefs = pl.DataFrame({"query": ["1"], "system_a": ["x"], "system_b": ["y"], "sgnLP": [1]})
    with pytest.raises(SchemaError, match=r"extra=\['first_difference'\]"):
        stats.first_difference_ecdf(prefs)


# --- missing column ----------------------------------------------------------------------------


def test_an_ordering_without_the_score_column_names_the_ordering_and_column_option():
    with pytest.raises(
        SchemaError, match=r"the 'MC4' ordering table has no column 'score'.*column="
    ):
        stats.system_scores({"MC4": metrics()})


def test_a_curve_without_fraction_says_how_to_build_it():
    with pytest.raises(SchemaError, match=r"no column 'fraction'.*degradation_curve"):
        stats.average_over_samples(metrics())


def test_a_missing_measure_in_a_pair_table_names_the_pair_table():
    pairs = stats.metric_pairs(metrics())
    with pytest.raises(SchemaError, match=r"the pair table has no column 'nDCG'.*preferences"):
        stats.tie_fraction(pairs, ["nDCG"])


# --- unknown names ----------------------------------------------------------------------------


def test_an_unknown_correction_suggests_the_nearest_name():
    with pytest.raises(InputError, match=r"unknown correction 'Holm'.*did you mean 'holm'"):
        stats.significance(metrics(), "RR", correction="Holm")


def test_an_unknown_test_suggests_the_nearest_name():
    with pytest.raises(InputError, match=r"unknown test 'paired-t'.*did you mean 'paired_t'"):
        stats.discriminative_power(metrics(), ["RR"], test="paired-t")


def test_an_unknown_weighting_suggests_the_nearest_name():
    qrels = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match=r"unknown weighting 'Uniform'.*'uniform'"):
        stats.degrade_labels(qrels, 0.5, seed=0, weighting="Uniform")


def test_an_unknown_kind_of_rrie_says_what_each_kind_is_for():
    with pytest.raises(InputError, match=r"'cost' \(a search length.*'gain'.*not 'loss'"):
        stats.rrie(metrics(), "RR", "x", kind="loss")


def test_an_unknown_system_lists_the_systems():
    with pytest.raises(InputError, match=r"system 'bm25' is not in .* include 'x', 'y'"):
        stats.asl_deltas(positions(docs=True), "x", "bm25")
    with pytest.raises(InputError, match=r"baseline 'bm25' .* 3 systems include 'x', 'y', 'z'"):
        stats.report(metrics(), ["RR"], baseline="bm25")


# --- fractions ---------------------------------------------------------------------------------


def test_a_fraction_outside_the_unit_interval_says_what_it_means():
    with pytest.raises(InputError, match=r"fraction \(the share of items to remove.*not 1\.5$"):
        stats.subsample_queries(metrics(), 1.5, seed=0)


def test_a_percentage_says_which_fraction_it_means():
    with pytest.raises(InputError, match=r"not 20; for 20 %, pass 0\.2"):
        stats.subsample_queries(metrics(), 20, seed=0)
    with pytest.raises(InputError, match=r"alpha \(the significance level.*pass 0\.05"):
        stats.discriminative_power(metrics(), ["RR"], alpha=5)


def test_a_bad_fraction_in_a_list_names_its_position():
    with pytest.raises(InputError, match=r"fractions\[1\] .* not -0\.2"):
        stats.degradation_curve(lambda f, rng: pl.DataFrame({"v": [f]}), [0.2, -0.2], seed=0)


def test_a_single_fraction_where_a_list_is_expected_says_to_wrap_it():
    with pytest.raises(InputError, match=r"fractions=\[0\.5\]"):
        stats.degradation_curve(lambda f, rng: pl.DataFrame({"v": [f]}), 0.5, seed=0)


def test_label_degradation_checks_its_fractions_before_working():
    run = pl.DataFrame({"system": ["x"], "query": ["1"], "doc": ["a"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match=r"fractions\[0\]"):
        stats.label_degradation(run, qrels, ["RR"], [1.2], seed=0)


# --- counts of the closed forms ----------------------------------------------------------------


def test_non_positive_counts_say_what_the_count_is():
    with pytest.raises(
        InputError, match=r"n \(the corpus size\) must be a positive integer, not 0"
    ):
        stats.tie_probability("TSE", n=0, m=1)
    with pytest.raises(InputError, match=r"m \(the number of relevant documents\) .* not -1"):
        stats.rr_tie_probability([1], n=10, m=-1)


def test_a_whole_float_count_says_which_integer_to_pass():
    with pytest.raises(InputError, match=r"not 2\.0; pass m=2"):
        stats.tie_probability("TSE", n=10, m=2.0)


def test_a_negative_number_of_pairs_is_named_as_such():
    with pytest.raises(InputError, match=r"n_pairs .* not -1"):
        stats.random_rankings(n=10, m=2, n_pairs=-1, seed=0)
    with pytest.raises(InputError, match=r"n_pairs .* not -1"):
        stats.simulate_ties(["TSE"], n=10, m=2, n_pairs=-1, seed=0)


# --- seeds ---------------------------------------------------------------------------------------


def test_a_legacy_random_state_says_what_to_pass_instead():
    with pytest.raises(InputError, match=r"RandomState; pass an integer .*default_rng"):
        stats.subsample_queries(metrics(), 0.5, seed=np.random.RandomState(0))


def test_a_randomised_test_without_a_seed_says_why_it_needs_one():
    with pytest.raises(InputError, match=r"needs an explicit seed=, e\.g\. seed=0, so that"):
        stats.significance(metrics(), "RR", test="randomized_hsd")


# --- measure columns that are not numeric --------------------------------------------------------


def test_a_string_measure_shows_an_example_row():
    table = metrics().with_columns(pl.col("RR").cast(pl.String))
    message = r"column 'RR' of the metrics table must be numeric, not String \(e\.g\. .*RR='"
    with pytest.raises(SchemaError, match=message):
        stats.significance(table, "RR")
    with pytest.raises(SchemaError, match=message):
        stats.sign_agreement(table, "AP", ["RR"])


def test_no_numeric_measure_names_the_non_numeric_columns():
    table = metrics().drop("AP").with_columns(pl.col("RR").cast(pl.String))
    with pytest.raises(SchemaError, match=r"no numeric measure column.*'RR' is String"):
        stats.tie_fraction(table)


# --- Tukey's HSD on an incomplete table --------------------------------------------------------


def test_hsd_with_missing_cells_counts_them_and_offers_ways_out():
    holes = metrics().filter(~((pl.col("system") == "y") & pl.col("query").is_in(["2", "3"])))
    message = (
        r"every system scored on every query of its group, but 2 of the 3 × 4 \(system, "
        r"query\) cells have no row, e\.g\. system='y' query='2'.*test='paired_t'"
    )
    with pytest.raises(InputError, match=message):
        stats.tukey_hsd(holes, "RR")
    with pytest.raises(InputError, match=message):
        stats.randomized_tukey_hsd(holes, "RR", seed=0, n_replicates=10)


def test_hsd_with_one_system_names_the_table_without_groups():
    with pytest.raises(InputError, match=r"the metrics table has 1 system and 4 queries"):
        stats.tukey_hsd(metrics().filter(pl.col("system") == "x"), "RR")


# --- elementary helpers --------------------------------------------------------------------------


def test_p_values_out_of_range_name_the_position():
    with pytest.raises(InputError, match=r"p_values\[1\] is 1\.5 \(1 of 2 out of range\)"):
        stats.adjust_p_values([0.5, 1.5])
    with pytest.raises(InputError, match=r"groups has 1 labels for 2 p-values; pass one"):
        stats.adjust_p_values([0.5, 0.1], groups=[1])


def test_negative_sign_test_counts_name_the_position():
    with pytest.raises(InputError, match=r"losses\[1\] is -2"):
        stats.sign_test([1, 2], [0, -2])


def test_an_analysis_that_returns_no_frame_says_where_and_how_to_wrap_it():
    with pytest.raises(InputError, match=r"fraction=0\.2, sample=0\); wrap a number"):
        stats.degradation_curve(lambda f, rng: f, [0.2], seed=0, n_samples=1)


def test_retrieved_weighting_without_a_run_says_what_to_pass():
    qrels = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match=r"pass the run as run=, or use weighting='uniform'"):
        stats.degrade_labels(qrels, 0.5, seed=0, weighting="retrieved")


def test_a_null_measure_value_says_how_to_fill_it():
    # SL3 is null without the corpus size: the fix is n=, not filling by hand.
    sl3 = metrics().rename({"RR": "SL3"}).with_columns(
        SL3=pl.when(pl.col("query") == "2").then(None).otherwise(pl.col("SL3"))
    )
    with pytest.raises(InputError, match=r"query='2'.*Pass the corpus size n="):
        stats.significance(sl3, "SL3")
    with pytest.raises(InputError, match=r"query='2'.*Fill or drop it first"):
        stats.significance(sl3.rename({"SL3": "score"}), "score")
