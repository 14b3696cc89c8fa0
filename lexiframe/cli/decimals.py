"""C's ``printf("%6.4f")`` of a whole column at once, digit for digit.

trec_eval prints every value with ``%6.4f``: the exact binary value rounded to 4 decimals,
a tie (a value exactly half-way, such as 0.21875) to the even digit. Multiplying by 10,000
in floating point rounds once more and can move a value across the half-way point, so the
product's rounding error is recovered exactly (Dekker's two-product) and the digit is
decided on the exact value.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

_SCALE = 10_000.0
_SPLIT = 134_217_729.0  # 2**27 + 1: Dekker's split of a double into two 26-bit halves
_EXACT_BELOW = 2.0**32  # above, the digits are Python's (a handful of values, if any)


def fixed4(values: pl.Series) -> pl.Series:
    """Each value as ``%6.4f`` prints it (``nan`` and ``inf`` padded to 6 characters).

    Example:
        >>> import polars as pl
        >>> fixed4(pl.Series([0.21875, 0.00005, 1 / 3, -0.0, 2.5])).to_list()
        ['0.2188', '0.0001', '0.3333', '-0.0000', '2.5000']
        >>> fixed4(pl.Series([float("nan"), -float("nan"), -float("inf")])).to_list()
        ['   nan', '  -nan', '  -inf']
        >>> f"{0.00005:6.4f}"  # 0.00005 is stored a little above the half-way point
        '0.0001'
    """
    x = values.cast(pl.Float64).to_numpy()
    negative = np.signbit(x)
    magnitude = np.abs(x)
    finite = np.isfinite(magnitude) & (magnitude < _EXACT_BELOW)
    safe = np.where(finite, magnitude, 0.0)
    units = _rounded_units(safe)
    whole, fraction = np.divmod(units, 10_000)
    text = pl.DataFrame({"negative": negative, "whole": whole, "fraction": fraction}).select(
        pl.concat_str(
            pl.when("negative").then(pl.lit("-")).otherwise(pl.lit("")),
            pl.col("whole").cast(pl.String),
            pl.lit("."),
            # 10,000 + the digits, less its leading 1: the 4 digits with their zeros
            (pl.col("fraction") + 10_000).cast(pl.String).str.slice(1),
        )
    )
    out = text.to_series().rename(values.name)
    if not finite.all():  # nan, inf and the very large: Python's digits, which are C's
        odd = np.flatnonzero(~finite)
        out = out.scatter(odd, [_c_text(float(x[i])) for i in odd])
    return out


def _c_text(value: float) -> str:
    """``%6.4f`` of a value that is not finite or very large: Python's digits, and C's
    ``-nan`` for a NaN whose sign bit is set (Python prints every NaN as ``nan``)."""
    if math.isnan(value) and math.copysign(1.0, value) < 0:
        return "  -nan"
    return f"{value:6.4f}"


def _rounded_units(x: np.ndarray) -> np.ndarray:
    """round(x · 10⁴) on the exact product, ties to even, for 0 ≤ x < 2³²."""
    product = x * _SCALE
    # Dekker: x = high + low with 26-bit halves; high·10⁴ and low·10⁴ are exact, and so is
    # the product's rounding error below.
    split = _SPLIT * x
    high = split - (split - x)
    low = x - high
    error = (high * _SCALE - product) + low * _SCALE  # exact product = product + error
    floor = np.floor(product)
    rest = product - floor  # exact: both are doubles of one binade or nearly
    # Compare rest + error with ½ without adding them: rest − ½ is exact where it matters.
    above = rest - 0.5
    up = above > -error
    tie = above == -error
    odd = np.fmod(floor, 2.0) == 1.0
    units = floor + (up | (tie & odd))
    counted: np.ndarray = units.astype(np.int64)
    return counted
