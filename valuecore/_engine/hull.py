"""The best threshold for a new value in O(log n): the upper concave hull of the cumulative counts.

A threshold rule that accepts the ``k`` most confident groups gains ``a * C_k + b * W_k`` over
abstaining (``a = v_correct - v_abstain``, ``b = v_wrong - v_abstain``; ``C_k``, ``W_k`` the weighted
correct and wrong items accepted, non-decreasing in ``k``). For ``a > 0 > b`` the best ``k`` maximises
``C_k - omega * W_k``: a vertex of the upper concave hull of the points ``(W_k, C_k)``. The hull is
built once per run (vectorised pruning, then an exact chain in integers where floats could round);
a new value is a binary search over the hull's slopes.

Bit for bit the linear scan's answer. The scan takes the first maximum of the *rounded* gains
``fl(fl(a * C_k) + fl(b * W_k))`` (minus a class's base, for per-class thresholds), which may tie or
order points differently from their exact values. So the hull only narrows the candidates: every
rounded gain is within ``E`` of its exact value (``E`` bounds the rounding of the whole formula), every
point lies under the line through any hull edge, and so any point whose rounded gain could reach the
gain found at the hull vertex lies in an interval of ``W`` read off the two hull edges beside it.
Within it the points with equal ``W`` form runs whose rounded gains never decrease (``C`` does not),
so the rounded gains are computed at each run's end and the first maximum found by bisection in its
run, with the scan's own arithmetic. Near a tie between two vertices (a value on a hull edge's slope)
the interval spans that edge: the move then costs its points, never more than the scan.

``a`` and ``b`` of one sign make the gain monotone in ``k`` (bisection, or ``k = 0``); ``a < 0 < b``
uses the hull of the points ``(C_k, W_k)``.

Consecutive segments of one pair of counts (the per-class thresholds) are searched together by
:class:`Segments`: each vertex keeps, from its build, an interval of ``b / a`` within which the scan's
answer is provably its own (see there); one ``searchsorted`` over every segment's intervals answers a move
(with few enough ends, one ``bisect`` of one value and a row of a table kept with them), and a segment whose
value falls outside its vertex's interval takes its own search above.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from .sorting import run_cache  # noqa: F401  (kept here by name: where a run keeps its hulls)

__all__ = ["Chain", "Segments", "first_best", "choose_one", "segments_of", "chain_of", "run_cache"]

_U = 2.0**-53  # unit roundoff of float64
_TINY = 2.0**-1000  # covers underflow in the products (at most 2**-1075 each)
_SLACK = 2.0**-40  # relative margin on the bounds' own arithmetic (a few ulps)
_EXACT_CROSS = 2.0**26  # whole numbers up to this: every cross product is exact in float64
_ROUNDS = 64  # vectorised pruning rounds before the exact chain takes the survivors
_EXACT_CHAIN_MAX = 1 << 20  # survivors beyond this: no hull (the scan answers)
# Segments searched together (see Segments): a move with a < _A_MIN or a * C + |b| * W above _SUM_MAX takes each
# segment's own search; _K and _T bound twice the rounding of a gain, divided by a; _FUDGE widens the build's own
# rounding (a few ulps each) many times over.
_A_MIN = 2.0**-500
_SUM_MAX = 2.0**1000
_K = 16 * _U
_T = 2.0**-571  # 2**-1071 / _A_MIN: underflow in the two products
_FUDGE = 2.0**-45
# Segments keep a table of every segment's position per place among all their ends (Segments._table) up to this
# many entries (2 bytes each below 2**15 ends, else 4): 50 classes of a 10^6-row run need about 600,000.
_TABLE_MAX = 1 << 21


def _pruned(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, bool]:
    """Indices of points that may be upper-hull vertices (x strictly increasing), and whether they are exactly
    the strict vertices.

    A middle point is dropped when it lies on or under the chord of its current neighbours, all at once
    (a run of dropped points is locally convex, so under the chord of the points kept around it). With
    whole numbers up to ``_EXACT_CROSS`` the cross products are exact; otherwise a point is dropped only
    when its computed cross product is below minus its rounding bound, so only points truly under a
    chord go, and every hull vertex stays.
    """
    exact = bool(x.size == 0 or (max(x[-1], y[-1]) <= _EXACT_CROSS and np.array_equal(x, np.rint(x))
                                 and np.array_equal(y, np.rint(y)) and x[0] >= 0 and y[0] >= 0))
    keep = None  # every point, until a round drops some
    xs, ys = x, y
    for _ in range(_ROUNDS):
        if xs.size < 3:
            break
        # The cross product of the two edges at each middle point: <= 0 when it lies on or under the chord.
        dx, dy = np.diff(xs), np.diff(ys)
        rise, run = dx[1:] * dy[:-1], dy[1:] * dx[:-1]
        kept = np.ones(xs.size, dtype=bool)
        if exact:
            np.greater(rise, run, out=kept[1:-1])
        else:
            np.greater_equal(rise - run, -(8 * _U * (np.abs(rise) + np.abs(run)) + _TINY), out=kept[1:-1])
        if kept.all():
            break
        keep = np.flatnonzero(kept) if keep is None else keep[kept]
        xs, ys = xs[kept], ys[kept]
    else:
        exact = False  # not settled in so many rounds: the exact chain finishes
    return (np.arange(x.size) if keep is None else keep), exact


def _exact_chain(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Strict upper-hull vertices of points with strictly increasing x, in exact integer arithmetic."""
    xr = [v.as_integer_ratio() for v in x.tolist()]
    yr = [v.as_integer_ratio() for v in y.tolist()]
    scale = max(q for _, q in xr + yr)  # powers of two: every coordinate times it is a whole number
    xs = [p * (scale // q) for p, q in xr]
    ys = [p * (scale // q) for p, q in yr]
    hull: list[int] = []
    for p in range(len(xs)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (xs[p] - xs[a]) * (ys[b] - ys[a]) - (ys[p] - ys[a]) * (xs[b] - xs[a]) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


class Chain:
    """Upper hull of the points ``(x[k], y[k])`` for ``k`` in ``[start, stop)``; x and y non-decreasing (n,).

    Attributes
    ----------
    run_ends : ndarray of shape (R,)
        The last ``k`` of each run of equal ``x``: the only points that can be hull vertices.
    vertex : list of int, shape (V,)
        The hull's strict vertices (values of ``k``), by increasing x.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, start: int, stop: int):
        self.x, self.y, self.start, self.stop = x, y, start, stop
        seg = x[start:stop]
        ends = np.r_[np.flatnonzero(seg[1:] != seg[:-1]), seg.size - 1] + start
        self.run_ends = ends.astype(np.int32) if stop < 2**31 else ends  # kept with the run: 4 bytes a run
        # Of run ends of equal y only the first can be a vertex (the next point is as high, and further right),
        # and the last point: the others go before any arithmetic.
        ys = y[self.run_ends]
        first = np.ones(ys.size, dtype=bool)
        np.not_equal(ys[1:-1], ys[:-2], out=first[1:-1])
        rising = np.flatnonzero(first)
        points = self.run_ends[rising]
        px, py = x[points], ys[rising]
        keep, exact = _pruned(px, py)
        if not exact:
            if keep.size > _EXACT_CHAIN_MAX:
                raise OverflowError("too many points near the hull for the exact chain")
            keep = keep[_exact_chain(px[keep], py[keep])]
        vertex = points[keep]
        self.vertex = vertex.tolist()
        self.vx, self.vy = px[keep].tolist(), py[keep].tolist()
        # Each vertex's run of equal x, [run_start, vertex], and the x just outside it: a move whose bounds fall
        # within those needs no search of x (most moves).
        run_start = np.maximum(x.searchsorted(px[keep], side="left"), start)
        self._run_start = run_start.tolist()
        self._x_before = np.where(run_start > start, x[np.maximum(run_start - 1, 0)], -math.inf).tolist()
        self._x_after = np.where(vertex + 1 < stop, x[np.minimum(vertex + 1, x.size - 1)], math.inf).tolist()
        # In that run, the first point as high as the vertex, and how far below it the point before it lies
        # (inf: none before it): with a gain that gap apart, no rounding lets an earlier point reach the vertex.
        first_equal = np.maximum(y.searchsorted(py[keep], side="left"), run_start)
        self._first_equal = first_equal.tolist()
        self._gap = np.where(first_equal > run_start, py[keep] - y[np.maximum(first_equal - 1, 0)], math.inf).tolist()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slopes = np.diff(py[keep]) / np.diff(px[keep])
        self._neg_slopes = (-slopes).tolist()  # increasing: the hull is concave
        self._x_last, self._y_last = float(x[stop - 1]), float(y[stop - 1])

    def first_best(self, cy: float, cx: float, base: float) -> int | None:
        """First ``k`` in ``[start, stop)`` maximising ``(cy * y[k] + cx * x[k]) - base`` as float64 computes it,
        for ``cy > 0 > cx``; None when the bounds overflow (then the scan answers)."""
        x, y, vx, vy = self.x, self.y, self.vx, self.vy
        last = self.stop - 1
        # Bounds the rounding of every gain of the segment (and of the few sums of gains below), with room.
        bound = 32 * _U * (cy * self._y_last - cx * self._x_last + abs(base)) + _TINY
        if not math.isfinite(bound * 8):  # gains near overflow: the scan answers
            return None
        i = bisect.bisect_left(self._neg_slopes, cx / cy)  # the edges steeper than omega = -cx / cy come first
        found = (cy * vy[i] + cx * vx[i]) - base
        left, right = self._left(i, found, bound, cy, cx, base), self._right(i, found, bound, cy, cx, base)
        at_x, run_start, vertex = vx[i], self._run_start[i], self.vertex[i]
        if (at_x >= left and (self._x_before[i] < left or run_start == self.start)
                and at_x <= right and (right < self._x_after[i] or vertex == last)):
            # The searches below would find vertex i's run: the first point of it reaching its end's gain.
            if cy * self._gap[i] * (1 - _SLACK) > 4 * bound:  # every point before the vertex's height falls short
                return self._first_equal[i]
            return self._first_reaching(run_start, vertex, at_x, found, bound, cy, cx, base)
        low = max(int(x.searchsorted(left, side="left")), self.start)
        high = min(int(x.searchsorted(right, side="right")) - 1, last)
        at_x = float(x[high])
        if float(x[low]) == at_x:  # one run: from its first point to its last
            return self._first_reaching(low, high, at_x, (cy * float(y[high]) + cx * at_x) - base, bound, cy, cx,
                                        base)
        ends = self.run_ends
        first_run, last_run = int(ends.searchsorted(low)), int(ends.searchsorted(high))
        if last_run - first_run < 8:
            gains = [(cy * float(y[k]) + cx * float(x[k])) - base for k in ends[first_run:last_run + 1].tolist()]
            best = max(gains)
            run = first_run + gains.index(best)
        else:
            at = ends[first_run:last_run + 1]
            values = (cy * y[at] + cx * x[at]) - base
            run = first_run + int(np.argmax(values))
            best = float(values[run - first_run])
        hi = int(ends[run])
        return self._first_reaching(int(ends[run - 1]) + 1 if run > 0 else self.start, hi, float(x[hi]), best, bound,
                                    cy, cx, base)

    def _first_reaching(self, lo: int, hi: int, at_x: float, best: float, bound: float, cy: float, cx: float,
                        base: float) -> int:
        """The first point of the run ``[lo, hi]`` (x = ``at_x``) whose rounded gain reaches ``best``, its end's."""
        y = self.y
        # In a run x is constant and y never decreases, so neither does the rounded gain: bisect for the first
        # point reaching the best.
        if hi - lo > 16:  # a long run: start from the first point whose exact gain is within the bound
            need = ((best - 2 * bound) + base - cx * at_x) / cy
            lo = max(int(y.searchsorted(need - abs(need) * _SLACK - _TINY, side="left")), lo)
        while lo < hi:
            mid = (lo + hi) // 2
            if (cy * float(y[mid]) + cx * at_x) - base >= best:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _left(self, i: int, found: float, bound: float, cy: float, cx: float, base: float) -> float:
        """An x below which no point's rounded gain reaches ``found`` (vertex ``i``'s gain): from the line through
        the first hull edge left of vertex ``i`` along which the gain surely rises (every point lies under it)."""
        vx, vy = self.vx, self.vy
        margin = 3 * bound
        gain = found  # vertex i's, as computed below for the others
        for j in range(i, 0, -1):
            before = (cy * vy[j - 1] + cx * vx[j - 1]) - base
            if (gain - before) - margin > 0:  # the gain surely rises along the edge
                need = (found - margin) - gain  # the gain a point must add to vertex j's, at least
                if need > 0:
                    step = need / (((gain - before) + margin) / (vx[j] - vx[j - 1]) * (1 + _SLACK))
                else:
                    step = need / (((gain - before) - margin) / (vx[j] - vx[j - 1]) * (1 - _SLACK))
                step -= abs(step) * _SLACK
                return vx[j] + step - (abs(vx[j]) + abs(step)) * _SLACK - _TINY
            gain = before
        return -math.inf

    def _right(self, i: int, found: float, bound: float, cy: float, cx: float, base: float) -> float:
        """An x above which no point's rounded gain reaches ``found`` (the mirror of :meth:`_left`)."""
        vx, vy = self.vx, self.vy
        margin = 3 * bound
        gain = found
        for j in range(i, len(vx) - 1):
            after = (cy * vy[j + 1] + cx * vx[j + 1]) - base
            if (gain - after) - margin > 0:  # the gain surely falls along the edge
                room = (gain + margin) - found  # what vertex j's gain may lose, at most
                if room >= 0:
                    step = room / (((gain - after) - margin) / (vx[j + 1] - vx[j]) * (1 - _SLACK))
                else:
                    step = room / (((gain - after) + margin) / (vx[j + 1] - vx[j]) * (1 + _SLACK))
                step += abs(step) * _SLACK
                return vx[j] + step + (abs(vx[j]) + abs(step)) * _SLACK + _TINY
            gain = after
        return math.inf


def _monotone_first_best(cy: float, y: np.ndarray, cx: float, x: np.ndarray, start: int, stop: int,
                         base: float) -> int:
    """First maximum of ``(cy * y[k] + cx * x[k]) - base`` over ``[start, stop)`` when both coefficients are
    >= 0: the rounded gain never decreases, so the first k reaching the last one's."""
    def gain(k):
        return (cy * float(y[k]) + cx * float(x[k])) - base

    best = gain(stop - 1)
    lo, hi = start, stop - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if gain(mid) >= best:
            hi = mid
        else:
            lo = mid + 1
    return lo


def chain_of(cache: dict, key, x: np.ndarray, y: np.ndarray, start: int, stop: int) -> Chain | None:
    """The :class:`Chain` of ``(x, y)`` on ``[start, stop)``, built once into ``cache[key]``; None when it cannot
    be built exactly (then the scan answers)."""
    if key not in cache:  # two threads may both build it: equal, so either one does
        try:
            cache[key] = Chain(x, y, start, stop)
        except OverflowError:
            cache[key] = None
    return cache[key]


def kept_chain(cache: dict, key, start: int, stop: int) -> Chain | None:
    """The hull of ``(wrong, correct)`` on ``[start, stop)`` that :func:`first_best` built under ``key`` for
    ``a > 0 > b``, when it did (None otherwise): ``chain.first_best(a, b, base)`` is then its answer."""
    chain = cache.get((key, "wrong-correct", start, stop))
    return chain if isinstance(chain, Chain) else None


def first_best(cache: dict, key, a: float, correct: np.ndarray, b: float, wrong: np.ndarray, start: int,
               stop: int, base: float = 0.0) -> int | None:
    """First ``k`` in ``[start, stop)`` maximising ``(a * correct[k] + b * wrong[k]) - base`` as numpy computes
    it elementwise (``np.argmax`` of that array, plus ``start``), in O(log n) after one hull build.

    ``correct`` and ``wrong``: cumulative weighted counts, shape (n,), non-decreasing (checked when the hull is
    built). ``cache``: where the hulls are kept (per run), under ``key`` and the bounds, so that a hull of one
    range never answers for another. None when the answer needs the scan (counts that decrease, bounds that
    overflow, a hull that cannot be built exactly).
    """
    if a > 0 > b:  # the usual values: a hull kept from an earlier move (built below) answers at once
        chain = cache.get((key, "wrong-correct", start, stop), False)
        if chain is None:  # could not be built exactly
            return None
        if chain is not False:
            return chain.first_best(a, b, base)
    if stop <= start or not _ordered(cache, key, correct, wrong):
        return None
    if a >= 0 and b >= 0:
        return _monotone_first_best(a, correct, b, wrong, start, stop, base)
    if a <= 0 and b <= 0:  # the gain never increases: the first is a maximum
        return start
    if a > 0:  # and b < 0: the upper hull of (wrong, correct)
        chain = chain_of(cache, (key, "wrong-correct", start, stop), wrong, correct, start, stop)
        return None if chain is None else chain.first_best(a, b, base)
    chain = chain_of(cache, (key, "correct-wrong", start, stop), correct, wrong, start, stop)
    return None if chain is None else chain.first_best(b, a, base)


def choose_one(cache: dict, key, a: float, correct: np.ndarray, b: float, wrong: np.ndarray, start: int, stop: int,
               labels: np.ndarray) -> float | None:
    """``labels[k]`` of the first ``k`` in ``[start, stop)`` maximising the gain over the counts before ``start``,
    ``(a * correct[k] + b * wrong[k]) - (a * correct[start - 1] + b * wrong[start - 1])``, when that gain is
    above 0 (a tie with accepting none of the segment abstains), else NaN; None when the scan must answer.
    One segment's own search: what :meth:`Segments.choose` answers for every segment at once."""
    base = a * float(correct[start - 1]) + b * float(wrong[start - 1]) if start else 0.0
    best = first_best(cache, key, a, correct, b, wrong, start, stop, base)
    if best is None:
        return None
    return float(labels[best]) if (a * float(correct[best]) + b * float(wrong[best])) - base > 0 else math.nan


class Segments:
    """The hulls of consecutive segments of one pair of cumulative counts, searched together: one move answers
    every segment with one ``searchsorted`` whatever their number (:meth:`choose`).

    Why a vertex's interval is safe. Take ``a > 0 > b``, ``omega = -b / a``, a segment ``[start, stop)``, its
    last counts ``(X, Y)`` (wrong, correct), a vertex ``v`` of its hull, its run of equal x ``[r, v]`` and ``f``
    its first point as high as ``v``. The scan's gains ``fl(fl(fl(a * C) + fl(b * W)) - base)`` differ from the
    exact ``a * C + b * W - base`` (``base`` the float subtracted, the same for every point) by at most ``E <=
    4.1 u (a Y + |b| X) + 2**-1072`` (``u`` the unit roundoff; ``|base| <= 1.01 (a Y + |b| X)``; no overflow
    below ``_SUM_MAX``), so ``2 E / a <= _K (Y + omega X) + _T`` once ``a >= _A_MIN``. The scan answers ``f``
    (every point of ``[f, v]`` has the same counts, so the same rounded gain) when every other point's exact
    gain is more than ``2 E`` below ``v``'s:

    - points before the run (``x <= x_before``): the hull's gain is concave in x, with slope ``a (s_left -
      omega)`` on the edge left of ``v``, so they fall short by ``a (s_left - omega) (x_v - x_before)`` at least;
    - points after it (``x >= x_after``): by ``a (omega - s_right) (x_after - x_v)``;
    - points of the run below ``v``'s height: by ``a * gap``.

    ``f``'s gain over the counts before the segment, ``a dC + b dW``, is above 0 as rounded when its exact
    value is above ``2 E`` (both sums round by ``E`` at most), and not above when below ``-2 E``. Each
    condition is linear in omega: per vertex an interval of ``b / a`` where ``f`` answers, split where its
    gain surely is not above 0 (the answer: NaN), not sure (the segment's own search), surely above (the
    answer: ``labels[f]``), computed at the build with every quantity rounded toward the safe side
    (``_FUDGE``, far above the build's own rounding and ``fl(b / a)``'s). The keys ``(segment, b / a)`` of
    these ends, in order, make one sorted array: a move's position in it is odd inside a sure part. Elsewhere
    (near a tie, counts so small that the rounding bounds are not negligible, ``a < _A_MIN``), the segment's
    own search answers (:func:`choose_one`), as it does for every segment with other signs of a and b.

    Parameters
    ----------
    cache, key : where the segments' hulls are kept (the keys :func:`first_best` uses)
    correct, wrong : ndarray of shape (n,), cumulative counts (finite, >= 0, non-decreasing: checked by
        :func:`segments_of`)
    spans : list of (start, stop), consecutive non-empty segments, shape (S,)
    labels : ndarray of shape (n,), what :meth:`choose` answers for a chosen point (a threshold)
    chains : list of :class:`Chain`, each span's hull of ``(wrong, correct)``
    """

    def __init__(self, cache: dict, key, correct: np.ndarray, wrong: np.ndarray, spans: list, labels: np.ndarray,
                 chains: list):
        self.cache, self.key, self.correct, self.wrong = cache, key, correct, wrong
        self.spans, self.labels = spans, labels
        keys, answers = [], []
        for slot, ((start, stop), chain) in enumerate(zip(spans, chains)):
            before = (float(correct[start - 1]), float(wrong[start - 1])) if start else (0.0, 0.0)
            ends = self._ends(chain, correct, wrong, before)
            key_of = np.empty(ends.size, complex)  # (segment, b / a): compared in that order
            key_of.real, key_of.imag = slot, ends
            keys.append(key_of)
            first = np.asarray(chain._first_equal)
            answer = np.full((first.size, 4), np.nan)  # position 4 i + 1: NaN; 4 i + 3: the label; others unsure
            answer[:, 3] = labels[first]
            answers.append(answer.ravel())
        self._keys = np.concatenate(keys)
        self._answers = np.concatenate(answers + [np.full(1, np.nan)])  # the last position: past every key
        self._slots = np.arange(len(spans)) + 0j
        # Each position's parity (odd: inside a sure part), and what every segment's sure reads as: a move checks
        # its positions by one take and one comparison of bytes.
        self._odd = (np.arange(self._answers.size) & 1).astype(np.int8)
        self._all_odd = bytes(len(spans) * [1])
        self._y_max, self._x_max = float(correct[spans[-1][1] - 1]), float(wrong[spans[-1][1] - 1])
        self._table()

    def _table(self) -> None:
        """With few enough segments and ends (``_TABLE_MAX`` entries), every segment's position for each place
        of ``b / a`` among all the ends at once: a move is then one search of one value, and its row.

        ``self._ends_sorted``: every end, ascending (a list of P - 1 floats); ``self._rows[m]``: each segment's position
        (what the search of :meth:`_positions` finds) for a value with ``m`` ends below it, shape (P, S); those
        ends are the ``m`` first in that order whatever the order of equal ends, so the row counts, per segment,
        its own ends below the value: its position past the segments before it. ``self._sure_rows[m]``: 1 when
        every position of row ``m`` is odd. None when the table would be larger (the search answers)."""
        keys, n_segments = self._keys, len(self.spans)
        self._ends_sorted = self._rows = self._sure_rows = None
        if keys.size * n_segments > _TABLE_MAX:
            return
        order = np.argsort(keys.imag, kind="stable")
        kind = np.int16 if keys.size < 2**15 else np.int32  # positions up to keys.size
        rows = np.zeros((keys.size + 1, n_segments), dtype=kind)
        rows[np.arange(1, keys.size + 1), keys.real[order].astype(np.intp)] = 1
        np.cumsum(rows, axis=0, out=rows)
        rows += np.searchsorted(keys.real, np.arange(n_segments), side="left").astype(kind)  # the segments before
        self._ends_sorted, self._rows = keys.imag[order].tolist(), rows  # a list: bisect searches one value fastest
        self._sure_rows = bytes((rows & 1).all(axis=1).astype(np.uint8).tolist())

    def _positions(self, q: float) -> tuple[np.ndarray, bool]:
        """Every segment's position among the keys for ``b / a = q`` (``searchsorted`` of ``(segment, q)``), and
        whether each is odd (sure)."""
        if self._rows is not None:
            m = bisect.bisect_left(self._ends_sorted, q)
            return self._rows[m], self._sure_rows[m] == 1
        p = self._keys.searchsorted(self._slots + complex(0.0, q))
        return p, self._odd.take(p).tobytes() == self._all_odd

    @staticmethod
    def _ends(chain: Chain, correct: np.ndarray, wrong: np.ndarray, before: tuple) -> np.ndarray:
        """Per vertex the values ``low <= no <= yes <= high`` of ``b / a``: in ``(low, no]`` the scan answers NaN
        (its first point as high surely gains nothing), in ``(yes, high]`` that point; (V * 4,), non-decreasing;
        all four equal where neither is sure."""
        vx, vy = np.asarray(chain.vx), np.asarray(chain.vy)
        x_before, x_after, gap = np.asarray(chain._x_before), np.asarray(chain._x_after), np.asarray(chain._gap)
        first = np.asarray(chain._first_equal)
        y_last, x_last = chain._y_last, chain._x_last
        floor, spread = _K * y_last + _T, _K * x_last
        down, up = 1 - _FUDGE, 1 + _FUDGE
        with np.errstate(all="ignore"):
            slopes = np.diff(vy) / np.diff(vx)
            # Before the run: omega below (s_left d - floor) / (d + K X), s_left and d rounded down.
            s_left = np.r_[np.nan, np.minimum(slopes, 2.0**1000) * down]
            d = (vx - x_before) * down
            rise = s_left * d
            top = (rise - floor) - _FUDGE * (rise + floor)
            omega_high = _clean(np.where(top > 0, top / ((d + spread) * up) * down, -np.inf), -np.inf)
            omega_high[np.isinf(x_before)] = np.inf
            # Below the vertex's height in the run: omega below (gap - floor) / (K X).
            low_gap = gap * down
            top = (low_gap - floor) - _FUDGE * (low_gap + floor)
            by_gap = _clean(np.where(top > 0, top / (spread * up) * down, -np.inf), -np.inf)
            by_gap[np.isinf(gap)] = np.inf
            omega_high = np.minimum(omega_high, by_gap)
            # After the run: omega above (s_right d + floor) / (d - K X), s_right rounded up, d down.
            s_right = np.r_[slopes * up, np.nan]
            d = (x_after - vx) * down
            bottom = (d - spread) - _FUDGE * (d + spread)
            omega_low = _clean(np.where(bottom > 0, (s_right * d + floor) * up / bottom * up, np.inf), np.inf)
            omega_low[np.isinf(x_after)] = -np.inf
            # The first point's gain over the counts before the segment, a (dC - omega dW): surely above 0 for
            # omega below (dC - floor) / (dW + K X), surely not for omega above (dC + floor) / (dW - K X).
            d_correct, d_wrong = correct[first] - before[0], wrong[first] - before[1]
            top = (d_correct * down - floor) - _FUDGE * (d_correct + floor)
            omega_yes = _clean(np.where(top > 0, top / ((d_wrong * up + spread) * up) * down, -np.inf), -np.inf)
            bottom = (d_wrong * down - spread) - _FUDGE * (d_wrong + spread)
            omega_no = _clean(np.where(bottom > 0, (d_correct * up + floor) * up / bottom * up, np.inf), np.inf)
            # As b / a = -omega (fl(b / a) is within an ulp: each end moves inward by far more).
            low, high = -(omega_high * down), -(omega_low * up)
            no, yes = -(omega_no * up), -(omega_yes * down)
        safe = low < high  # False with a NaN
        low, high = np.where(safe, low, -np.inf), np.where(safe, high, -np.inf)
        no = np.minimum(np.maximum(no, low), high)
        ends = np.column_stack([low, no, np.minimum(np.maximum(yes, no), high), high])
        # Non-decreasing, as searchsorted needs: a vertex whose interval an earlier one overlaps (rounding at a
        # near tie) gets none; lowering it leaves every other end where it was.
        ordered = np.maximum.accumulate(ends.ravel()).reshape(ends.shape)
        ends[(ordered != ends).any(axis=1)] = -np.inf
        return np.maximum.accumulate(ends.ravel())

    @property
    def answers(self) -> np.ndarray:
        """What a position in the intervals' ends answers when it is sure (odd), shape (P,); with
        :attr:`answer_slots`, for a caller's own table of answers (:meth:`sure_take`)."""
        return self._answers

    @property
    def answer_slots(self) -> np.ndarray:
        """The segment of each position of :attr:`answers` that can be sure, shape (P,) (-1: none can)."""
        slots = np.full(self._answers.size, -1)
        slots[:-1] = self._keys.real
        return slots

    @property
    def sure_rows(self) -> list | None:
        """Per row of the table (:meth:`_table`), every segment's position when each is sure (shape (S,)), else
        None; None without a table. A caller's answers read off its rows are :meth:`sure_row`'s."""
        if self._rows is None:
            return None
        return [self._rows[m] if sure else None for m, sure in enumerate(self._sure_rows)]

    def sure_row(self, a: float, b: float) -> int | None:
        """The table's row for ``a``, ``b`` when every segment's position in it is sure (:attr:`sure_rows`), else
        None (no table, values outside the usual ones, a segment not sure: then :meth:`choose`)."""
        if self._rows is not None and a > 0 > b and a >= _A_MIN and a * self._y_max - b * self._x_max <= _SUM_MAX:
            m = bisect.bisect_left(self._ends_sorted, b / a)
            if self._sure_rows[m] == 1:
                return m
        return None

    def sure_take(self, a: float, b: float, table: np.ndarray) -> np.ndarray | None:
        """``table`` (parallel to :attr:`answers`) at every segment's position when each one is sure, shape (S,):
        what :meth:`choose` answers, read from another table; None when a segment is not sure (then
        :meth:`choose`) or the values are outside the usual ones."""
        if a > 0 > b and a >= _A_MIN and a * self._y_max - b * self._x_max <= _SUM_MAX:
            p, sure = self._positions(b / a)
            if sure:
                return table.take(p)
        return None

    def choose(self, a: float, b: float) -> np.ndarray | None:
        """Per segment, :func:`choose_one` of ``a``, ``b``: shape (S,) floats; None when the scan must answer."""
        if a > 0 > b and a >= _A_MIN and a * self._y_max - b * self._x_max <= _SUM_MAX:
            p, sure = self._positions(b / a)
            chosen = self._answers.take(p)
            if sure:
                return chosen
            others = np.flatnonzero(self._odd.take(p) == 0).tolist()  # 0: outside a vertex's sure part
        else:
            chosen, others = np.empty(len(self.spans)), range(len(self.spans))
        for slot in others:
            start, stop = self.spans[slot]
            one = choose_one(self.cache, self.key, a, self.correct, b, self.wrong, start, stop, self.labels)
            if one is None:
                return None
            chosen[slot] = one
        return chosen


def _clean(values: np.ndarray, instead: float) -> np.ndarray:
    """``values`` with NaN replaced by ``instead`` (the safe side)."""
    values[np.isnan(values)] = instead
    return values


def segments_of(cache: dict, key, correct: np.ndarray, wrong: np.ndarray, spans: list,
                labels: np.ndarray) -> Segments | None:
    """:class:`Segments` of the spans, or None when a segment's hull cannot be built (then the scan answers); its
    hulls kept in ``cache`` under the keys :func:`first_best` uses. Build it for ``a > 0 > b``: it builds the
    hulls of ``(wrong, correct)``."""
    if not spans or not _ordered(cache, key, correct, wrong):
        return None
    chains = [chain_of(cache, (key, "wrong-correct", start, stop), wrong, correct, start, stop)
              for start, stop in spans]
    if any(chain is None for chain in chains):
        return None
    return Segments(cache, key, correct, wrong, spans, labels, chains)


def _ordered(cache: dict, key, correct: np.ndarray, wrong: np.ndarray) -> bool:
    """Whether both cumulative counts are finite, >= 0 and non-decreasing (what every path above relies on)."""
    ok_key = (key, "ordered")
    if ok_key not in cache:
        cache[ok_key] = all(bool(v.size == 0 or (v[0] >= 0 and np.isfinite(v[-1]) and np.all(v[1:] >= v[:-1])))
                            for v in (correct, wrong))
    return cache[ok_key]

