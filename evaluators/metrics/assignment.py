"""Maximum-weight one-to-one assignment (scipy's ``linear_sum_assignment``), imported only when needed.

Most real alignment problems are conflict-free: every row has at most one eligible column
and every column at most one eligible row (the predicted events copy the GT segmentation,
the characters match by name).  Then the eligible pairs *are* the optimal assignment and no
solver is needed.  Otherwise :func:`scipy.optimize.linear_sum_assignment` solves it; scipy's
optimize package is imported on that first call only, which keeps the dashboard's cold start
(about 0.6 s of imports here) off the common path.
"""

from __future__ import annotations

from collections.abc import Sequence


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """One-to-one pairs ``(row, col)`` maximising the total weight over entries > 0.

    Parameters
    ----------
    weights : 2-D sequence of float, shape (n_rows, n_cols)
        Non-negative weights; 0 means "not allowed".

    Returns
    -------
    list of (int, int)
        Pairs with a positive weight, sorted by row.  Equal to the positive pairs of
        ``scipy.optimize.linear_sum_assignment(weights, maximize=True)`` up to ties.
    """
    rows_of_col: dict[int, int] = {}
    pairs: list[tuple[int, int]] = []
    conflict = False
    for r, row in enumerate(weights):
        cols = [c for c, w in enumerate(row) if w > 0]
        if len(cols) > 1:
            conflict = True
            break
        if cols:
            c = cols[0]
            if c in rows_of_col:
                conflict = True
                break
            rows_of_col[c] = r
            pairs.append((r, c))
    if not conflict:
        return pairs
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415 - deferred on purpose

    rr, cc = linear_sum_assignment(weights, maximize=True)
    return sorted((int(r), int(c)) for r, c in zip(rr, cc) if weights[r][c] > 0)
