"""The ``.lexi`` expression methods of the measures, one per measure family, generated
from the catalogue (``lexiframe.metrics.catalogue``) by ``python docs/generate.py``:
edit the family's declaration, not this file.

Each method is the family's measure over the ranks of a positions list column, as
:func:`lexiframe.measures` computes it under the measure's name; a parameter left
``None`` takes the family's default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

from lexiframe._utils import IntoExpr
from lexiframe.metrics.expression import measure_expr
from lexiframe.metrics.parts import IntoCount


class MeasureMethods:
    """The measures of :mod:`lexiframe.metrics` as methods of ``Expr.lexi``."""

    _expr: pl.Expr

    def rr(
        self,
        k: int | None = None,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Reciprocal rank of the first relevant document (0 if none above the cutoff).

        The measure ``RR`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``RR@10``). Source: trec_eval recip_rank; lexiprecision paper §1;
        docs/measures/rr.md.
        """
        return measure_expr("RR", self._expr, k, n_rel=n_rel, rel=rel)

    def ap(
        self,
        k: int | None = None,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Average precision over the m relevant documents (map_cut_k with a cutoff).

        The measure ``AP`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``AP``). Source: trec_eval map; docs/measures/ap.md.
        """
        return measure_expr("AP", self._expr, k, n_rel=n_rel, rel=rel)

    def ndcg(
        self,
        k: int | None = None,
        *,
        gains: Mapping[int, float] | Literal["exp"] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """Normalised DCG with log2(rank+1) discounts; the gains are the grades, as in
        trec_eval (positions frames of graded qrels keep them).

        The measure ``nDCG`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``nDCG@10``). Source: trec_eval ndcg, ndcg_cut_k; Järvelin and
        Kekäläinen (2002); docs/measures/ndcg.md.
        """
        return measure_expr(
            "nDCG",
            self._expr,
            k,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            gains=gains,
        )

    def dcg(
        self,
        k: int | None = None,
        *,
        gains: Mapping[int, float] | Literal["exp"] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """Discounted cumulative gain, not normalised: each retrieved document's gain over
        log2(rank+1), the gains as nDCG's (the grades, or gains= as trec_eval's dcg.1=1,2=3;
        gains='exp' is ranx's dcg_burges).

        The measure ``DCG`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``DCG@10``). Source: trec_eval 10.0 dcg; Järvelin and Kekäläinen (2002);
        docs/measures/dcg.md.
        """
        return measure_expr(
            "DCG", self._expr, k, n_rel=n_rel, grades=grades, ideal_grades=ideal_grades, gains=gains
        )

    def idcg(
        self,
        k: int | None = None,
        *,
        gains: Mapping[int, float] | Literal["exp"] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """The ideal DCG, nDCG's denominator: the DCG of the query's positive gains (m gains of
        1 on binary qrels) in descending order, whatever the run retrieved; gains= as DCG's.

        The measure ``IDCG`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``IDCG@10``). Source: trec_eval 10.0 ideal_dcg; Järvelin and Kekäläinen
        (2002); docs/measures/idcg.md.
        """
        return measure_expr(
            "IDCG",
            self._expr,
            k,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            gains=gains,
        )

    def precision(
        self,
        k: int,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Precision at k.

        The measure ``P`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``P@10``). Source: trec_eval P_k; docs/measures/p.md.
        """
        return measure_expr("P", self._expr, k, n_rel=n_rel, rel=rel)

    def recall(
        self,
        k: int,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Recall at k.

        The measure ``R`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``R@1000``). Source: trec_eval recall_k; docs/measures/r.md.
        """
        return measure_expr("R", self._expr, k, n_rel=n_rel, rel=rel)

    def r_precision(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """R-precision: precision at rank m.

        The measure ``RP`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``RP``). Source: trec_eval Rprec; docs/measures/rp.md.
        """
        return measure_expr("RP", self._expr, None, n_rel=n_rel, rel=rel)

    def rbp(
        self,
        *,
        p: float | None = None,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """Rank-biased precision with persistence p (its residual is RBPResid); on graded qrels
        the gains are the grades scaled to [0, 1] by the query's top grade, as trec_eval's
        rbp.

        The measure ``RBP`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``RBP(p=0.5)``); defaults p=0.8. Source: Moffat and Zobel (2008); trec_eval
        rbp; lexirecall paper §2; docs/measures/rbp.md.
        """
        return measure_expr(
            "RBP",
            self._expr,
            None,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            p=p,
            rel=rel,
        )

    def err(
        self,
        k: int | None = None,
        *,
        max_grade: int | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """Expected reciprocal rank: the cascade user stops at a document of grade g with
        probability (2^g - 1)/2^G (G = max_grade, gdeval's 4); the expected reciprocal of
        the rank where they stop.

        The measure ``ERR`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``ERR@10``); defaults max_grade=4. Source: Chapelle, Metzler, Zhang and
        Grinspan (CIKM 2009); TREC Web track gdeval (ir_measures ERR@k);
        docs/measures/err.md.
        """
        return measure_expr(
            "ERR",
            self._expr,
            k,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            max_grade=max_grade,
        )

    def tse(
        self,
        *,
        exposure: Literal["rr", "ap", "ndcg", "rbp", "linear"] | None = None,
        p: float | None = None,
        n_rel: IntoCount = "n_rel",
        n: IntoCount | None = None,
    ) -> pl.Expr:
        """Total search efficiency: the exposure of the last relevant document.

        The measure ``TSE`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``TSE(exposure='ndcg')``); defaults exposure='rr', p=0.8. Source: lexirecall
        paper §3.2, eq. 3 (the exposures of §2.3.1, Definition 2.1); docs/measures/tse.md.
        """
        return measure_expr("TSE", self._expr, None, n_rel=n_rel, n=n, exposure=exposure, p=p)

    def sl3(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        n: IntoCount | None = None,
    ) -> pl.Expr:
        """Cooper's type 3 search length (lower is better; needs n when r < m).

        The measure ``SL3`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``SL3``). Source: lexirecall paper §3.2; docs/measures/sl3.md.
        """
        return measure_expr("SL3", self._expr, None, n_rel=n_rel, n=n)

    def recall_error(
        self,
        *,
        n_rel: IntoCount = "n_rel",
        n: IntoCount | None = None,
    ) -> pl.Expr:
        """Rocchio's recall error (lower is better; needs n when r < m).

        The measure ``RecallError`` of :func:`lexiframe.measures` over the ranks in this
        list column (e.g. ``RecallError``). Source: lexirecall paper §3.2;
        docs/measures/recallerror.md.
        """
        return measure_expr("RecallError", self._expr, None, n_rel=n_rel, n=n)

    def asl_mean(
        self,
        first: int | None = None,
        *,
        n_rel: IntoCount = "n_rel",
        n_ret: IntoCount = "n_ret",
        depth: IntoCount | None = None,
    ) -> pl.Expr:
        """Atomized search length: mean over relevant documents of the irrelevant documents
        above each, plus one (lower is better); @g1-k averages the first k.

        The measure ``ASL`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``ASL@g1-10``). Source: atomized search length paper §3.1, eq. 1–5;
        docs/measures/asl.md.
        """
        return measure_expr("ASL", self._expr, first, n_rel=n_rel, n_ret=n_ret, depth=depth)

    def success(
        self,
        k: int,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """1 when a relevant document is ranked at the cutoff or above, else 0.

        The measure ``Success`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``Success@10``). Source: trec_eval success_k; docs/measures/success.md.
        """
        return measure_expr("Success", self._expr, k, n_rel=n_rel, rel=rel)

    def num_rel(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """How many relevant documents the query has.

        The measure ``NumRel`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``NumRel``). Source: trec_eval num_rel; docs/measures/numrel.md.
        """
        return measure_expr("NumRel", self._expr, None, n_rel=n_rel, rel=rel)

    def num_rel_ret(
        self,
        k: int | None = None,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """How many relevant documents the ranking returned; with a cutoff, how many it ranked
        in the top k (ranx's hits@k).

        The measure ``NumRelRet`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``NumRelRet``). Source: trec_eval num_rel_ret; ranx hits;
        docs/measures/numrelret.md.
        """
        return measure_expr("NumRelRet", self._expr, k, n_rel=n_rel, rel=rel)

    def set_precision(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Precision of the whole retrieved set (0 when nothing was returned).

        The measure ``SetP`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``SetP``). Source: trec_eval set_P; docs/measures/setp.md.
        """
        return measure_expr("SetP", self._expr, None, n_rel=n_rel, rel=rel)

    def set_recall(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Recall of the whole retrieved set.

        The measure ``SetR`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``SetR``). Source: trec_eval set_recall; docs/measures/setr.md.
        """
        return measure_expr("SetR", self._expr, None, n_rel=n_rel, rel=rel)

    def set_f(
        self,
        k: int | None = None,
        *,
        beta: float | None = None,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """F of the retrieved set; beta weighs recall as trec_eval's set_F does.

        The measure ``SetF`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``SetF(beta=0.5)``); defaults beta=1.0. Source: trec_eval set_F; ranx
        f1; docs/measures/setf.md.
        """
        return measure_expr("SetF", self._expr, k, n_rel=n_rel, beta=beta, rel=rel)

    def interpolated_precision(
        self,
        cutoff: float,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Interpolated precision at a recall level: the best precision at or below the rank
        where the ranking reaches that recall (0 if it never does).

        The measure ``IPrec`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``IPrec@0.5``). Source: trec_eval iprec_at_recall_x;
        docs/measures/iprec.md.
        """
        return measure_expr("IPrec", self._expr, cutoff, n_rel=n_rel, rel=rel)

    def set_relative_precision(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Precision of the retrieved set over the best a set of that size can reach (0 when
        nothing was returned or nothing is relevant).

        The measure ``SetRelativeP`` of :func:`lexiframe.measures` over the ranks in this
        list column (e.g. ``SetRelativeP``). Source: trec_eval set_relative_P;
        docs/measures/setrelativep.md.
        """
        return measure_expr("SetRelativeP", self._expr, None, n_rel=n_rel, rel=rel)

    def set_ap(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Unranked average precision of the retrieved set: every retrieved relevant document
        has the set's precision, every missed one 0 (SetP times SetR).

        The measure ``SetAP`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``SetAP``). Source: trec_eval set_map; docs/measures/setap.md.
        """
        return measure_expr("SetAP", self._expr, None, n_rel=n_rel, rel=rel)

    def utility(
        self,
        *,
        rel_ret: float | None = None,
        nonrel_ret: float | None = None,
        rel_nonret: float | None = None,
        nonrel_nonret: float | None = None,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
        n: IntoCount | None = None,
    ) -> pl.Expr:
        """A weighted count of the retrieved set's contingency table: relevant and non-relevant
        documents retrieved, and not retrieved; trec_eval's default weights (1, -1, 0, 0)
        give r - (ñ - r).

        The measure ``Utility`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``Utility(nonrel_ret=-0.5)``); defaults rel_ret=1.0, nonrel_ret=-1.0,
        rel_nonret=0.0, nonrel_nonret=0.0. Source: trec_eval utility;
        docs/measures/utility.md.
        """
        return measure_expr(
            "Utility",
            self._expr,
            None,
            n_rel=n_rel,
            n=n,
            rel_ret=rel_ret,
            nonrel_ret=nonrel_ret,
            rel_nonret=rel_nonret,
            nonrel_nonret=nonrel_nonret,
            rel=rel,
        )

    def relative_precision(
        self,
        k: int,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Precision at k over the best precision possible at k: precision while k <= m, recall
        beyond (0 when nothing is relevant).

        The measure ``RelativeP`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``RelativeP@10``). Source: trec_eval relative_P_k;
        docs/measures/relativep.md.
        """
        return measure_expr("RelativeP", self._expr, k, n_rel=n_rel, rel=rel)

    def r_precision_multiple(
        self,
        cutoff: float,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Precision at a multiple x of m, the rank c = floor(x m + 0.9) as trec_eval rounds it
        (0 when c = 0); RPrecMult@1.0 is R-precision.

        The measure ``RPrecMult`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``RPrecMult@2.0``). Source: trec_eval Rprec_mult_x;
        docs/measures/rprecmult.md.
        """
        return measure_expr("RPrecMult", self._expr, cutoff, n_rel=n_rel, rel=rel)

    def interpolated_precision_average(
        self,
        *,
        levels: Sequence[float] | None = None,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Interpolated precision averaged over recall levels: by default the eleven levels 0,
        0.1, ..., 1 (trec_eval's 11pt_avg); levels= takes others, in ascending order
        (11pt_avg.0.2,0.5,0.8 reads as IPrecAvg(levels=[0.2, 0.5, 0.8])).

        The measure ``IPrecAvg`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``IPrecAvg``); defaults levels=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,
        0.8, 0.9, 1.0]. Source: trec_eval 11pt_avg; docs/measures/iprecavg.md.
        """
        return measure_expr("IPrecAvg", self._expr, None, n_rel=n_rel, levels=levels, rel=rel)

    def binary_g(
        self,
        *,
        rel: int | None = None,
        n_rel: IntoCount = "n_rel",
    ) -> pl.Expr:
        """Binary G: the mean over the m relevant documents of 1/log2(2 + the non-relevant
        documents above it), 0 for one not retrieved.

        The measure ``BinG`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``BinG``). Source: trec_eval binG; docs/measures/bing.md.
        """
        return measure_expr("BinG", self._expr, None, n_rel=n_rel, rel=rel)

    def g(
        self,
        *,
        gains: Mapping[int, float] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """Normalised gain: each retrieved relevant document's gain, discounted by log2(2 + how
        far the gain gathered down to it lags the ideal ranking's, each ideal rank counting
        at least 1), over the query's total gain.

        The measure ``G`` of :func:`lexiframe.measures` over the ranks in this list column
        (e.g. ``G``). Source: trec_eval G; docs/measures/g.md.
        """
        return measure_expr(
            "G",
            self._expr,
            None,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            gains=gains,
        )

    def ndcg_rel(
        self,
        *,
        gains: Mapping[int, float] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """nDCG averaged over the relevant documents: at the rank of each retrieved one (the
        ideal cut at m at most), and the whole ranking's nDCG for each one missed.

        The measure ``nDCGRel`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``nDCGRel``). Source: trec_eval ndcg_rel; docs/measures/ndcgrel.md.
        """
        return measure_expr(
            "nDCGRel",
            self._expr,
            None,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            gains=gains,
        )

    def r_ndcg(
        self,
        *,
        gains: Mapping[int, float] | None = None,
        n_rel: IntoCount = "n_rel",
        grades: IntoExpr | None = None,
        ideal_grades: IntoExpr | None = None,
    ) -> pl.Expr:
        """nDCG averaged at the R levels: at each rank where the ideal ranking's gain drops
        (after each grade's documents, highest grade first), and for the whole ranking when
        it runs on more than one document past m.

        The measure ``RnDCG`` of :func:`lexiframe.measures` over the ranks in this list
        column (e.g. ``RnDCG``). Source: trec_eval Rndcg; docs/measures/rndcg.md.
        """
        return measure_expr(
            "RnDCG",
            self._expr,
            None,
            n_rel=n_rel,
            grades=grades,
            ideal_grades=ideal_grades,
            gains=gains,
        )
