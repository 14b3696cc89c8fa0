"""The measures of the papers and the classic metrics researchers compare them with (RR,
AP, nDCG, DCG, IDCG, P@k, R@k, R-precision, RBP, ERR, TSE, SL3, RecallError, ASL): their
declarations (docs/definitions.md §2)."""

from __future__ import annotations

from lexiframe.metrics import converters, expected, exprs, ties
from lexiframe.metrics.catalogue import builders
from lexiframe.metrics.spec import Family, Needs

FAMILIES: tuple[Family, ...] = (
    Family(
        name="RR",
        reads_to_cutoff=True,
        method="rr",
        summary="Reciprocal rank of the first relevant document (0 if none above the cutoff).",
        formula=r"\mathrm{RR} = 1/p_1",
        source="trec_eval recip_rank; lexiprecision paper §1",
        build=lambda m, c: exprs.rr(c.positions, k=m.rank),
        expected_over_ties=lambda m, c: ties.rr(c.positions, k=m.rank),
        expectation=lambda m, c: expected.rr(c.gain_positions, c.grades, k=m.rank),
        cutoff="optional",
        aliases=("MRR", "recip_rank", "RecipRank"),
        params=builders.AT_LEVEL,
        example="RR@10",
    ),
    Family(
        name="AP",
        reads_to_cutoff=True,
        method="ap",
        trec_eval_cutoff="map_cut",
        summary="Average precision over the m relevant documents (map_cut_k with a cutoff).",
        formula=r"\mathrm{AP} = \frac{1}{m} \sum_{i \le r} \frac{i}{p_i}",
        source="trec_eval map",
        build=lambda m, c: exprs.ap(c.positions, n_rel=c.n_rel, k=m.rank),
        expected_over_ties=lambda m, c: ties.ap(c.positions, n_rel=c.n_rel, k=m.rank),
        cutoff="optional",
        aliases=("MAP", "map"),
        params=builders.AT_LEVEL,
        example="AP",
    ),
    Family(
        name="nDCG",
        reads_to_cutoff=True,
        method="ndcg",
        trec_eval_gains="ndcg",
        trec_eval_cutoff="ndcg_cut",
        summary="Normalised DCG with log2(rank+1) discounts; the gains are the grades, as in "
        "trec_eval (positions frames of graded qrels keep them). gains= maps grades to gains "
        "as trec_eval's ndcg.1=1,2=3 (read as nDCG(gains={1: 1, 2: 3})): unlisted grades "
        "keep their grade, negative gains count, the ideal DCG takes the positive ones; "
        "nDCG(gains={1: 1, 2: 1}) is binary nDCG on grades 1 and 2. trec_eval sorts gains by "
        "their difference cut to a whole number: gains it would take out of order in the "
        "ideal DCG (less than 1 apart, e.g. {1: 2.5, 2: 2}) are refused. gains='exp' gives "
        "grade g the gain 2^g - 1 (Burges et al.): ir_measures' nDCG(dcg='exp-log2'), ranx's "
        "ndcg_burges.",
        formula=r"\mathrm{nDCG} = \frac{\sum_{i \le r} g_i / \log_2(p_i + 1)}"
        r"{\sum_{j \le m} g^*_j / \log_2(j + 1)}",
        source="trec_eval ndcg, ndcg_cut_k; Järvelin and Kekäläinen (2002)",
        build=builders.graded_ndcg,
        expected_over_ties=builders.expected_ndcg,
        cutoff="optional",
        aliases=("NDCG", "ndcg"),
        **builders.NDCG_GAINS,
        scale_free=True,
        needs=builders.reads_gains,
        example="nDCG@10",
    ),
    Family(
        name="DCG",
        reads_to_cutoff=True,
        method="dcg",
        trec_eval_gains="dcg",
        summary="Discounted cumulative gain, not normalised: each retrieved document's gain "
        "over log2(rank+1), the gains as nDCG's (the grades, or gains= as trec_eval's "
        "dcg.1=1,2=3; gains='exp' is ranx's dcg_burges). trec_eval 10.0's dcg (of the whole "
        "ranking; DCG@k cuts it at k, as ranx's dcg@k). Under labels='probability' a "
        "relevant document gains 1: the expectation is the sum of each document's "
        "probability over log2(rank+1).",
        formula=r"\mathrm{DCG} = \sum_{i \le r} g_i / \log_2(p_i + 1)",
        source="trec_eval 10.0 dcg; Järvelin and Kekäläinen (2002)",
        build=builders.graded_dcg,
        expected_over_ties=builders.expected_dcg,
        expectation=builders.probable_dcg,
        cutoff="optional",
        aliases=("dcg",),
        **{**builders.NDCG_GAINS, "check_frame": None},  # no ideal ranking to order
        needs=builders.reads_gains,
        example="DCG@10",
    ),
    Family(
        name="IDCG",
        method="idcg",
        trec_eval_gains="ideal_dcg",
        summary="The ideal DCG, nDCG's denominator: the DCG of the query's positive gains "
        "(m gains of 1 on binary qrels) in descending order, whatever the run retrieved; "
        "gains= as DCG's. trec_eval 10.0's ideal_dcg (uncut; IDCG@k cuts it at k). It has no "
        "expectation under labels='probability': the ideal order is that of a random set.",
        formula=r"\mathrm{IDCG} = \sum_{j \le m} g^*_j / \log_2(j + 1)",
        source="trec_eval 10.0 ideal_dcg; Järvelin and Kekäläinen (2002)",
        build=builders.graded_idcg,
        expected_over_ties=builders.order_free,
        cutoff="optional",
        aliases=("ideal_dcg", "IdealDCG"),
        **builders.NDCG_GAINS,
        needs=builders.reads_gains,
        example="IDCG@10",
    ),
    Family(
        name="P",
        reads_to_cutoff=True,
        method="precision",
        trec_eval_cutoff="P",
        summary="Precision at k.",
        formula=r"\mathrm{P}@k = \#\{i : p_i \le k\} / k",
        source="trec_eval P_k",
        build=lambda m, c: exprs.precision(c.positions, k=builders.required(m.rank)),
        expected_over_ties=lambda m, c: exprs.precision(
            c.positions, k=builders.required(m.rank), at_most=ties.count_at_most
        ),
        expectation=lambda m, c: expected.precision(
            c.gain_positions, c.grades, k=builders.required(m.rank)
        ),
        cutoff="required",
        aliases=("Precision",),
        params=builders.AT_LEVEL,
        example="P@10",
    ),
    Family(
        name="R",
        reads_to_cutoff=True,
        method="recall",
        trec_eval_cutoff="recall",
        summary="Recall at k.",
        formula=r"\mathrm{R}@k = \#\{i : p_i \le k\} / m",
        source="trec_eval recall_k",
        build=lambda m, c: exprs.recall(c.positions, k=builders.required(m.rank), n_rel=c.n_rel),
        expected_over_ties=lambda m, c: exprs.recall(
            c.positions, k=builders.required(m.rank), n_rel=c.n_rel, at_most=ties.count_at_most
        ),
        cutoff="required",
        aliases=("Recall",),
        params=builders.AT_LEVEL,
        example="R@1000",
    ),
    Family(
        name="RP",
        method="r_precision",
        summary="R-precision: precision at rank m.",
        formula=r"\mathrm{RP} = \#\{i : p_i \le m\} / m",
        source="trec_eval Rprec",
        build=lambda m, c: exprs.r_precision(c.positions, n_rel=c.n_rel),
        expected_over_ties=lambda m, c: exprs.r_precision(
            c.positions, n_rel=c.n_rel, at_most=ties.count_at_most
        ),
        aliases=("Rprec", "RPrec"),
        params=builders.AT_LEVEL,
        example="RP",
    ),
    Family(
        name="RBP",
        method="rbp",
        summary="Rank-biased precision with persistence p (its residual is RBPResid); on graded "
        "qrels the gains are the grades scaled to [0, 1] by the query's top grade, as trec_eval's "
        "rbp. trec_eval's names rbp (its default p = 0.9) and rbp_p=0.8 read as RBP(p=0.9) and "
        "RBP(p=0.8). RBP(rel=2) is binary: each document graded 2 or more gains 1 (ir_measures' "
        "RBP(rel=2)).",
        formula=r"\mathrm{RBP} = (1 - p) \sum_{i \le r} g_i\, p^{\,p_i - 1},\ "
        r"g_i = \mathrm{grade}_i / \max(1, \text{top grade})",
        source="Moffat and Zobel (2008); trec_eval rbp; lexirecall paper §2",
        build=builders.graded_rbp,
        expected_over_ties=builders.expected_rbp,
        # Probabilities are gains of at most 1, which graded RBP takes unscaled: the sum of
        # each document's chance of relevance times its weight, RBP's expected value.
        expectation=builders.graded_rbp,
        params={**builders.RBP_P, **builders.AT_LEVEL},
        converters=builders.P_CONVERTER,
        needs=Needs(grades=True),
        example="RBP(p=0.5)",
    ),
    Family(
        name="ERR",
        method="err",
        summary="Expected reciprocal rank: the cascade user stops at a document of grade g "
        "with probability (2^g - 1)/2^G (G = max_grade, gdeval's 4); the expected reciprocal "
        "of the rank where they stop. Non-relevant documents take ranks but stop no one; a "
        "grade above max_grade is refused.",
        formula=r"\mathrm{ERR} = \sum_{i \le r} \frac{R_i}{p_i} \prod_{j < i} (1 - R_j),\ "
        r"R_i = \frac{2^{g_i} - 1}{2^G}",
        source="Chapelle, Metzler, Zhang and Grinspan (CIKM 2009); TREC Web track gdeval "
        "(ir_measures ERR@k)",
        build=lambda m, c: exprs.err(
            c.gain_positions,
            grades=c.grades,
            k=m.rank,
            max_grade=m.whole("max_grade"),
        ),
        cutoff="optional",
        aliases=("err",),
        params={"max_grade": exprs.ERR_MAX_GRADE},
        converters={"max_grade": converters.max_grade},
        expectation=lambda m, c: expected.err(
            c.gain_positions, c.grades, k=m.rank, max_grade=m.whole("max_grade")
        ),
        needs=Needs(grades=True, requires_grades=True),
        check_frame=builders.check_max_grade,
        example="ERR@10",
    ),
    Family(
        name="TSE",
        method="tse",
        summary="Total search efficiency: the exposure of the last relevant document.",
        formula=r"\mathrm{TSE}_e = e(\hat p_m),\quad e(x) = \begin{cases} 1/x & "
        r"\mathrm{rr}, \mathrm{ap} \\ 1/\log_2(x + 1) & \mathrm{ndcg} \\ "
        r"(1 - p)\,p^{\,x - 1} & \mathrm{rbp} \\ 1 - x/n & \mathrm{linear} \end{cases}",
        source="lexirecall paper §3.2, eq. 3 (the exposures of §2.3.1, Definition 2.1)",
        build=lambda m, c: exprs.tse(
            c.positions,
            n_rel=c.n_rel,
            exposure=m.param("exposure"),  # type: ignore[arg-type]
            n=c.n,
            p=m.number("p"),
        ),
        params={"exposure": "rr", **builders.RBP_P},
        converters=builders.P_CONVERTER,
        choices={"exposure": ("rr", "ap", "ndcg", "rbp", "linear")},
        example="TSE(exposure='ndcg')",
        needs=lambda m: Needs(n=m.param("exposure") == "linear"),
    ),
    Family(
        name="SL3",
        method="sl3",
        summary="Cooper's type 3 search length (lower is better; needs n when r < m).",
        formula=r"\mathrm{SL3} = \hat p_m - m",
        source="lexirecall paper §3.2",
        build=lambda m, c: exprs.sl3(c.positions, n_rel=c.n_rel, n=c.n),
        lower_is_better=True,
        example="SL3",
        needs=Needs(n=True),
    ),
    Family(
        name="RecallError",
        method="recall_error",
        summary="Rocchio's recall error (lower is better; needs n when r < m).",
        formula=r"\mathrm{RecallError} = \frac{1}{m} \sum_{i \le m} \hat p_i - \frac{m + 1}{2}",
        source="lexirecall paper §3.2",
        build=lambda m, c: exprs.recall_error(c.positions, n_rel=c.n_rel, n=c.n),
        aliases=("RE",),
        lower_is_better=True,
        example="RecallError",
        needs=Needs(n=True),
    ),
    Family(
        name="ASL",
        method="asl_mean",
        summary="Atomized search length: mean over relevant documents of the irrelevant "
        "documents above each, plus one (lower is better); @g1-k averages the first k. A "
        "skipped query scores the depth (ñ = depth).",
        formula=r"\mathrm{ASL} = \frac{1}{m} \Big[\sum_{i \le r} (p_i - i + 1)"
        r" + (m - r)(\tilde n - r)\Big]",
        source="atomized search length paper §3.1, eq. 1–5",
        build=lambda m, c: exprs.asl_mean(
            c.positions, n_rel=c.n_rel, n_ret=c.n_ret, first=m.rank, depth=c.depth
        ),
        cutoff="optional",
        cutoff_prefix="g1-",
        lower_is_better=True,
        needs=Needs(columns=("n_ret",)),
        example="ASL@g1-10",
    ),
)
