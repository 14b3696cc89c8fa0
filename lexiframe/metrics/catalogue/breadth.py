"""The rest of what researchers take from trec_eval and ir_measures: Success@k, the counts
and set measures, interpolated precision, Bpref, infAP, judged shares, utility, G and the
nDCG variants, RBP's residual: their declarations (docs/definitions.md §2)."""

from __future__ import annotations

from lexiframe.metrics import converters, expected, judged, sets, ties
from lexiframe.metrics import gain as gain_measures
from lexiframe.metrics.catalogue import builders
from lexiframe.metrics.spec import Family, Needs

FAMILIES: tuple[Family, ...] = (
    Family(
        name="Success",
        reads_to_cutoff=True,
        method="success",
        trec_eval_cutoff="success",
        summary="1 when a relevant document is ranked at the cutoff or above, else 0.",
        formula=r"\mathrm{Success@}k = [\, r > 0 \wedge p_1 \le k \,]",
        source="trec_eval success_k",
        build=lambda m, c: sets.success(c.positions, k=builders.required(m.rank)),
        expected_over_ties=lambda m, c: ties.success(c.positions, k=builders.required(m.rank)),
        expectation=lambda m, c: expected.success(
            c.gain_positions, c.grades, k=builders.required(m.rank)
        ),
        cutoff="required",
        aliases=("success",),
        params=builders.AT_LEVEL,
        example="Success@10",
    ),
    Family(
        name="NumRet",
        summary="How many documents the ranking returned (after depth=).",
        formula=r"\mathrm{NumRet} = \tilde{n}",
        source="trec_eval num_ret",
        build=lambda m, c: sets.num_ret(c.n_ret),
        expected_over_ties=builders.order_free,
        aliases=("num_ret",),
        example="NumRet",
    ),
    Family(
        name="NumRel",
        method="num_rel",
        summary="How many relevant documents the query has.",
        formula=r"\mathrm{NumRel} = m",
        source="trec_eval num_rel",
        build=lambda m, c: sets.num_rel(c.n_rel),
        expected_over_ties=builders.order_free,
        aliases=("num_rel",),
        params=builders.AT_LEVEL,
        example="NumRel",
    ),
    Family(
        name="NumRelRet",
        reads_to_cutoff=True,
        method="num_rel_ret",
        summary="How many relevant documents the ranking returned; with a cutoff, how many "
        "it ranked in the top k (ranx's hits@k).",
        formula=r"\mathrm{NumRelRet} = r,\quad \mathrm{NumRelRet}@k = \#\{i : p_i \le k\}",
        source="trec_eval num_rel_ret; ranx hits",
        build=lambda m, c: sets.num_rel_ret(c.positions, k=m.rank),
        cutoff="optional",
        expected_over_ties=lambda m, c: sets.num_rel_ret(
            c.positions, k=m.rank, at_most=ties.count_at_most
        ),
        aliases=("num_rel_ret",),
        params=builders.AT_LEVEL,
        example="NumRelRet",
    ),
    Family(
        name="SetP",
        method="set_precision",
        summary="Precision of the whole retrieved set (0 when nothing was returned).",
        formula=r"\mathrm{SetP} = r / \tilde{n}",
        source="trec_eval set_P",
        build=lambda m, c: sets.set_precision(c.positions),
        expected_over_ties=builders.order_free,
        aliases=("set_P",),
        params=builders.AT_LEVEL,
        example="SetP",
    ),
    Family(
        name="SetR",
        method="set_recall",
        summary="Recall of the whole retrieved set.",
        formula=r"\mathrm{SetR} = r / m",
        source="trec_eval set_recall",
        build=lambda m, c: sets.set_recall(c.positions, n_rel=c.n_rel),
        expected_over_ties=builders.order_free,
        aliases=("set_recall", "SetRecall"),
        params=builders.AT_LEVEL,
        example="SetR",
    ),
    Family(
        name="SetF",
        method="set_f",
        summary="F of the retrieved set; beta weighs recall as trec_eval's set_F does. With a "
        "cutoff, the F of P@k and R@k (ranx's f1@k).",
        formula=r"\mathrm{SetF}_\beta = \frac{(\beta + 1)\, \mathrm{SetP} \cdot \mathrm{SetR}}"
        r"{\beta\, \mathrm{SetP} + \mathrm{SetR}}",
        source="trec_eval set_F; ranx f1",
        build=lambda m, c: sets.set_f(c.positions, n_rel=c.n_rel, beta=m.number("beta"), k=m.rank),
        cutoff="optional",
        expected_over_ties=lambda m, c: sets.set_f(
            c.positions, n_rel=c.n_rel, beta=m.number("beta"), k=m.rank, at_most=ties.count_at_most
        ),
        params={"beta": 1.0, **builders.AT_LEVEL},
        converters={"beta": converters.number("beta=0.5")},
        aliases=("set_F",),
        example="SetF(beta=0.5)",
    ),
    Family(
        name="IPrec",
        method="interpolated_precision",
        trec_eval_cutoff="iprec_at_recall",
        summary="Interpolated precision at a recall level: the best precision at or below "
        "the rank where the ranking reaches that recall (0 if it never does).",
        formula=r"\mathrm{IPrec@}x = \max_{i \ge \max(c, 1)} i / p_i,\ "
        r"c = \operatorname{round}(x\, m)",
        source="trec_eval iprec_at_recall_x",
        build=lambda m, c: builders.empty_nan(
            sets.interpolated_precision(
                c.positions, recall=m.level_cutoff, n_rel=c.n_rel, rule=c.rules.level_cutoff
            ),
            m.level_cutoff,
            c,
        ),
        cutoff="required",
        fractional_cutoff=True,
        aliases=("iprec_at_recall",),
        params=builders.AT_LEVEL,
        example="IPrec@0.5",
    ),
    Family(
        name="Bpref",
        summary="Binary preference: how many judged non-relevant documents rank above each "
        "relevant one, out of min(N, R); unjudged documents are ignored.",
        formula=r"\mathrm{Bpref} = \frac{1}{R} \sum_{i \le r} \Big(1 - "
        r"\frac{\min(n_i, R)}{\min(N, R)}\Big)",
        source="Buckley and Voorhees (SIGIR 2004); trec_eval bpref",
        build=lambda m, c: judged.bpref(),
        expected_over_ties=lambda m, c: ties.bpref(),
        aliases=("bpref",),
        needs=Needs(judged=True),
        example="Bpref",
    ),
    Family(
        name="infAP",
        summary="Inferred average precision: AP estimated from a sample of the pool; the "
        "pooled documents left unjudged (negative grades) are assumed relevant in the "
        "proportion of the judged ones.",
        formula=r"\mathrm{infAP} = \frac{1}{R} \sum_{i \le r} \Big(\frac{1}{p_i} + "
        r"\frac{a_i + b_i + u_i}{p_i} \cdot \frac{a_i + \epsilon}{a_i + b_i + 2\epsilon}\Big)",
        source="Yilmaz and Aslam (CIKM 2006); trec_eval infAP",
        build=lambda m, c: judged.inf_ap(),
        aliases=("infap", "InfAP"),
        needs=Needs(judged=True),
        example="infAP",
    ),
    Family(
        name="Judged",
        summary="The share of the top min(k, ñ) documents that the qrels judge, whatever the "
        "grade (0 for an empty ranking).",
        formula=r"\mathrm{Judged@}k = \#\{\text{judged in the top } \min(k, \tilde n)\} / "
        r"\min(k, \tilde n)",
        source="ir_measures Judged",
        build=lambda m, c: judged.judged_at(k=m.rank),
        expected_over_ties=lambda m, c: judged.judged_at(k=m.rank, at_most=ties.count_at_most),
        cutoff="optional",
        aliases=("judged",),
        needs=Needs(judged=True),
        example="Judged@10",
    ),
    Family(
        name="Unjudged",
        trec_eval_cutoff="unj",
        summary="The share of the top k ranks that hold an unjudged document (outside the "
        "qrels, or pooled with a negative grade); ranks past the ranking's end count as judged.",
        formula=r"\mathrm{Unjudged@}k = \#\{\text{unjudged in the top } k\} / k",
        source="trec_eval unj",
        build=lambda m, c: judged.unjudged_at(k=builders.required(m.rank)),
        expected_over_ties=lambda m, c: judged.unjudged_at(
            k=builders.required(m.rank), at_most=ties.count_at_most
        ),
        cutoff="required",
        aliases=("unj",),
        needs=Needs(judged=True),
        lower_is_better=True,
        example="Unjudged@10",
    ),
    Family(
        name="NumNonRelJudgedRet",
        summary="How many judged non-relevant documents the ranking returned.",
        formula=r"\mathrm{NumNonRelJudgedRet} = \#\{\text{judged non-relevant retrieved}\}",
        source="trec_eval num_nonrel_judged_ret",
        build=lambda m, c: judged.num_nonrel_judged_ret(),
        expected_over_ties=builders.order_free,
        aliases=("num_nonrel_judged_ret",),
        needs=Needs(judged=True),
        example="NumNonRelJudgedRet",
    ),
    Family(
        name="SetRelativeP",
        method="set_relative_precision",
        summary="Precision of the retrieved set over the best a set of that size can reach "
        "(0 when nothing was returned or nothing is relevant).",
        formula=r"\mathrm{SetRelativeP} = r / \min(\tilde{n}, m)",
        source="trec_eval set_relative_P",
        build=lambda m, c: sets.set_relative_precision(c.positions, n_rel=c.n_rel),
        expected_over_ties=builders.order_free,
        aliases=("set_relative_P",),
        params=builders.AT_LEVEL,
        example="SetRelativeP",
    ),
    Family(
        name="SetAP",
        method="set_ap",
        summary="Unranked average precision of the retrieved set: every retrieved relevant "
        "document has the set's precision, every missed one 0 (SetP times SetR).",
        formula=r"\mathrm{SetAP} = \frac{r^2}{\tilde{n}\, m}",
        source="trec_eval set_map",
        build=lambda m, c: sets.set_ap(c.positions, n_rel=c.n_rel),
        expected_over_ties=builders.order_free,
        aliases=("set_map", "SetMAP"),
        params=builders.AT_LEVEL,
        example="SetAP",
    ),
    Family(
        name="Utility",
        method="utility",
        summary="A weighted count of the retrieved set's contingency table: relevant and "
        "non-relevant documents retrieved, and not retrieved; trec_eval's default weights "
        "(1, -1, 0, 0) give r - (ñ - r). A weight for the non-relevant documents not "
        "retrieved needs the corpus size n. trec_eval's utility.1,-1,0,0 reads as "
        "Utility(rel_ret=1, nonrel_ret=-1, rel_nonret=0, nonrel_nonret=0).",
        formula=r"\mathrm{Utility} = w_1 r + w_2 (\tilde n - r) + w_3 (m - r)"
        r" + w_4 (n - \tilde n - m + r)",
        source="trec_eval utility",
        build=builders.utility,
        expected_over_ties=builders.order_free,
        aliases=("utility",),
        params={
            "rel_ret": sets.UTILITY_WEIGHTS[0],
            "nonrel_ret": sets.UTILITY_WEIGHTS[1],
            "rel_nonret": sets.UTILITY_WEIGHTS[2],
            "nonrel_nonret": sets.UTILITY_WEIGHTS[3],
            **builders.AT_LEVEL,
        },
        converters={key: converters.weight for key in builders.UTILITY_PARAMS},
        example="Utility(nonrel_ret=-0.5)",
        needs=lambda m: Needs(n=m.param("nonrel_nonret") != 0.0),
    ),
    Family(
        name="RelativeP",
        method="relative_precision",
        trec_eval_cutoff="relative_P",
        summary="Precision at k over the best precision possible at k: precision while "
        "k <= m, recall beyond (0 when nothing is relevant).",
        formula=r"\mathrm{RelativeP@}k = \#\{i : p_i \le k\} / \min(k, m)",
        source="trec_eval relative_P_k",
        build=lambda m, c: sets.relative_precision(
            c.positions,
            k=builders.required(m.rank),
            n_rel=c.n_rel,
        ),
        expected_over_ties=lambda m, c: sets.relative_precision(
            c.positions,
            k=builders.required(m.rank),
            n_rel=c.n_rel,
            at_most=ties.count_at_most,
        ),
        cutoff="required",
        aliases=("relative_P",),
        params=builders.AT_LEVEL,
        example="RelativeP@10",
    ),
    Family(
        name="RPrecMult",
        method="r_precision_multiple",
        trec_eval_cutoff="Rprec_mult",
        summary="Precision at a multiple x of m, the rank c = floor(x m + 0.9) as trec_eval "
        "rounds it (0 when c = 0); RPrecMult@1.0 is R-precision.",
        formula=r"\mathrm{RPrecMult@}x = \#\{i : p_i \le c\} / c,\ "
        r"c = \lfloor x\, m + 0.9 \rfloor",
        source="trec_eval Rprec_mult_x",
        build=lambda m, c: sets.r_precision_multiple(
            c.positions,
            x=m.level_cutoff,
            n_rel=c.n_rel,
        ),
        expected_over_ties=lambda m, c: sets.r_precision_multiple(
            c.positions, x=m.level_cutoff, n_rel=c.n_rel, at_most=ties.count_at_most
        ),
        cutoff="required",
        fractional_cutoff=True,
        cutoff_max=None,
        aliases=("Rprec_mult", "RprecMult"),
        params=builders.AT_LEVEL,
        example="RPrecMult@2.0",
    ),
    Family(
        name="IPrecAvg",
        method="interpolated_precision_average",
        summary="Interpolated precision averaged over recall levels: by default the eleven "
        "levels 0, 0.1, ..., 1 (trec_eval's 11pt_avg); levels= takes others, in ascending "
        "order (11pt_avg.0.2,0.5,0.8 reads as IPrecAvg(levels=[0.2, 0.5, 0.8])).",
        formula=r"\mathrm{IPrecAvg} = \frac{1}{\lvert L \rvert} \sum_{x \in L} \mathrm{IPrec@}x,\ "
        r"L = \{0, 0.1, \dots, 1\}",
        source="trec_eval 11pt_avg",
        build=lambda m, c: builders.empty_nan(
            sets.interpolated_precision_average(
                c.positions,
                levels=m.param("levels"),  # type: ignore[arg-type]
                n_rel=c.n_rel,
                rule=c.rules.level_cutoff,
            ),
            min(m.param("levels")),  # type: ignore[call-overload]
            c,
        ),
        aliases=("11pt_avg",),
        params={"levels": sets.ELEVEN_POINTS, **builders.AT_LEVEL},
        converters={"levels": converters.recall_levels},
        param_text={"levels": converters.as_list},
        example="IPrecAvg",
    ),
    Family(
        name="BinG",
        method="binary_g",
        summary="Binary G: the mean over the m relevant documents of 1/log2(2 + the "
        "non-relevant documents above it), 0 for one not retrieved.",
        formula=r"\mathrm{BinG} = \frac{1}{m} \sum_{i \le r} \frac{1}{\log_2(2 + p_i - i)}",
        source="trec_eval binG",
        build=lambda m, c: gain_measures.binary_g(
            c.positions, n_rel=c.n_rel, running=c.rules.running_sums
        ),
        expected_over_ties=lambda m, c: ties.binary_g(c.positions, n_rel=c.n_rel),
        aliases=("binG",),
        params=builders.AT_LEVEL,
        example="BinG",
    ),
    Family(
        name="G",
        method="g",
        trec_eval_gains="G",
        summary="Normalised gain: each retrieved relevant document's gain, discounted by "
        "log2(2 + how far the gain gathered down to it lags the ideal ranking's, each ideal "
        "rank counting at least 1), over the query's total gain. Gains are the grades, as in "
        "trec_eval (binary qrels: G is BinG); G is not scale-free (grades 2 and 2 do not give "
        "the value of grades 1 and 1), so it reads the frame's grades on any qrels. gains= "
        "maps grades to gains as trec_eval's G.1=2,2=4 (read as G(gains={1: 2, 2: 4})), as "
        "nDCG's does: unlisted grades keep their grade, negative gains count, the ideal "
        "ranking takes the positive ones; a map trec_eval's sort would take out of order "
        "(gains less than 1 apart) is refused.",
        formula=r"\mathrm{G} = \frac{1}{\sum_j g^*_j} \sum_{i \le r} "
        r"\frac{g_i}{\log_2(2 + C(p_i) - \sum_{l \le i} g_l)},\ "
        r"C(p) = \sum_{j \le p} \max(1, g^*_j)",
        source="trec_eval G",
        build=builders.graded(gain_measures.g),
        **builders.GAIN_MAP,
        needs=Needs(grades=True, requires_grades=True),
        example="G",
    ),
    Family(
        name="nDCGRel",
        method="ndcg_rel",
        trec_eval_gains="ndcg_rel",
        summary="nDCG averaged over the relevant documents: at the rank of each retrieved "
        "one (the ideal cut at m at most), and the whole ranking's nDCG for each one missed. "
        "Gains are the grades, as in trec_eval's ndcg. gains= maps grades to gains as "
        "trec_eval's ndcg_rel.1=1,2=5 (read as nDCGRel(gains={1: 1, 2: 5})), as nDCG's "
        "does; the relevant documents are then those of positive gain, as in trec_eval.",
        formula=r"\mathrm{nDCGRel} = \frac{1}{m} \Big[\sum_{i \le r} "
        r"\frac{\mathrm{DCG}(p_i)}{\mathrm{IDCG}(\min(p_i, m))} + (m - r)\, "
        r"\frac{\mathrm{DCG}}{\mathrm{IDCG}}\Big]",
        source="trec_eval ndcg_rel",
        build=builders.graded(gain_measures.ndcg_rel),
        aliases=("ndcg_rel",),
        **builders.GAIN_MAP,
        scale_free=True,
        needs=builders.reads_gains,
        example="nDCGRel",
    ),
    Family(
        name="RnDCG",
        method="r_ndcg",
        trec_eval_gains="Rndcg",
        summary="nDCG averaged at the R levels: at each rank where the ideal ranking's gain "
        "drops (after each grade's documents, highest grade first), and for the whole ranking "
        "when it runs on more than one document past m. Gains are the grades, as in "
        "trec_eval's ndcg. gains= maps grades to gains as trec_eval's Rndcg.2=7 (read as "
        "RnDCG(gains={2: 7})), as nDCG's does; grades of one gain make one level.",
        formula=r"\mathrm{RnDCG} = \frac{1}{\lvert J \rvert + [\tilde n > m + 1]} "
        r"\Big[\sum_{j \in J} "
        r"\mathrm{nDCG@}j + [\tilde n > m + 1]\, \mathrm{nDCG}\Big]",
        source="trec_eval Rndcg",
        build=builders.r_ndcg,
        aliases=("Rndcg",),
        **builders.GAIN_MAP,
        scale_free=True,
        needs=builders.reads_gains,
        example="RnDCG",
    ),
    Family(
        name="RBPResid",
        summary="The residual of RBP(p): what RBP could still gain if the unjudged "
        "documents of the ranking, and the ranks past its end, were relevant (0 when every "
        "retrieved document is judged). trec_eval's rbp_resid (its default p = 0.9) reads as "
        "RBPResid(p=0.9).",
        formula=r"\mathrm{RBPResid} = p^{\tilde n} + (1 - p) "
        r"\sum_{i \le \tilde n \text{ unjudged}} p^{\,i - 1}",
        source="Moffat and Zobel (2008); trec_eval rbp_resid",
        build=lambda m, c: judged.rbp_residual(p=m.number("p")),
        expected_over_ties=lambda m, c: ties.rbp_residual(p=m.number("p")),
        aliases=("RBPResidual",),
        params=builders.RBP_P,
        converters=builders.P_CONVERTER,
        needs=Needs(judged=True),
        lower_is_better=True,
        example="RBPResid(p=0.9)",
    ),
)
