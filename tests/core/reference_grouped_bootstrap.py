"""The grouped bootstrap's tree and search as they were before issue 33's sixth pass (commit 7ba152c), verbatim
but for the names: the reference ``tests/core/test_grouped_bootstrap.py`` holds the faster ones to, bit for bit
(same trees, same calls to ``split`` in the same order, same random stream left behind, same groups)."""

from __future__ import annotations

import numpy as np

from valuecore._engine.sorting import SortedRun
from valuecore._stats.grouped_bootstrap import MAX_CATEGORIES, GroupTree

_RESAMPLES_PER_CHUNK = 256


def reference_group_tree(run: SortedRun, values) -> GroupTree | None:
    """The tree of ``run`` for ``values`` (frequency weights), or None when the gains have too many categories."""
    p = run.predictions
    use_case = values.use_case
    if use_case is not None:
        # Categories in fit_policy's order: correct, then wrong.
        gains = np.array([use_case.gain_correct, use_case.gain_wrong])
        category = (~p.correct).astype(np.intp)
    else:
        import pandas as pd

        codes, distinct = pd.factorize(values.for_classes(p.classes).gains[p.y_true, p.y_pred], sort=True)
        if distinct.shape[0] > MAX_CATEGORIES:
            return None
        gains, category = np.asarray(distinct, dtype=np.float64), codes.astype(np.intp)
    n_categories, n_groups = gains.shape[0], run.n_groups
    cell = _item_groups(run) * n_categories + category
    weight = np.bincount(cell, weights=p.sample_weight, minlength=n_groups * n_categories)
    depth = max(0, int(np.ceil(np.log2(n_groups))))
    size = 1 << depth
    node = np.zeros((2 * size, n_categories))
    node[size:size + n_groups] = weight.reshape(n_groups, n_categories)
    for level in range(depth - 1, -1, -1):  # integer weights: the sums are exact
        first, stop = 1 << level, 2 << level
        node[first:stop] = node[2 * first:2 * stop:2] + node[2 * first + 1:2 * stop:2]
    left_share = np.divide(node[2:2 * size:2], node[1:size], out=np.zeros((size - 1, n_categories)),
                           where=node[1:size] > 0)  # fmt: skip
    total = node[1].sum()
    return GroupTree(
        gains=gains,
        left_share=np.vstack([np.zeros((1, n_categories)), left_share]),
        root_share=node[1] / total if total > 0 else node[1],
        n_draws=int(round(total)),
        n_groups=n_groups,
        depth=depth,
    )


def _item_groups(run: SortedRun) -> np.ndarray:
    """Group (index into ``run.thresholds``) of each item, in the run's order."""
    if run._rank is not None:
        return run._rank.astype(np.intp)
    groups = np.empty(run.predictions.n, dtype=np.intp)
    groups[run.order] = np.repeat(np.arange(run.n_groups), np.diff(np.r_[0, run.group_end]))
    return groups


def _value(tree: GroupTree, counts: np.ndarray) -> np.ndarray:
    """Gain of item counts (shape (m, K)), summed category by category as fit_policy sums them."""
    value = tree.gains[0] * counts[:, 0]
    for c in range(1, tree.gains.shape[0]):
        value = value + tree.gains[c] * counts[:, c]
    return value


def reference_best_groups(tree: GroupTree, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The group whose confidence a re-tuned threshold takes, per resample; -1 for "accept nothing"."""
    def split(_, node, counts):
        return rng.binomial(counts, tree.left_share[node])

    best = np.empty(n_resamples, dtype=np.intp)
    for start in range(0, n_resamples, _RESAMPLES_PER_CHUNK):
        size = min(_RESAMPLES_PER_CHUNK, n_resamples - start)
        root = rng.multinomial(tree.n_draws, tree.root_share, size=size)
        best[start:start + size] = reference_search(tree, root, split)
    return best


def reference_search(tree: GroupTree, root: np.ndarray, split) -> np.ndarray:
    """Best group per resample from the root counts (shape (R, K)); ``split(resample, node, counts)``
    gives the left children's counts. -1 where no prefix gains more than accepting nothing.
    """
    n_resamples = root.shape[0]
    resample = np.arange(n_resamples)
    node = np.ones(n_resamples, dtype=np.intp)
    counts = root.astype(np.int64)
    before = np.zeros_like(counts)
    positive = np.maximum(tree.gains, 0.0)
    # The best value reached so far, a lower bound of each resample's optimum (0: accept nothing).
    reached = np.maximum(_value(tree, counts), 0.0)
    slack = 1e-9 * (float(np.abs(tree.gains).max(initial=0.0)) + np.abs(reached))
    end_value = _value(tree, counts)
    for _ in range(tree.depth):
        left = np.asarray(split(resample, node, counts), dtype=np.int64)
        resample = np.r_[resample, resample]
        node = np.r_[2 * node, 2 * node + 1]
        before = np.vstack([before, before + left])
        counts = np.vstack([left, counts - left])
        end_value = _value(tree, before + counts)
        np.maximum.at(reached, resample, end_value)
        # A prefix ending inside a node is worth at most its items of positive gain taken first.
        upper = _value(tree, before) + counts @ positive
        keep = (counts.sum(axis=1) > 0) & (upper >= reached[resample] - slack[resample])
        resample, node, counts, before, end_value = (a[keep] for a in (resample, node, counts, before, end_value))
    # Leaves: the drawn groups that can still be best. The first maximiser wins; it must gain.
    group = node - (1 << tree.depth)
    top = np.full(n_resamples, -np.inf)
    np.maximum.at(top, resample, end_value)
    first = np.full(n_resamples, np.iinfo(np.intp).max)
    at_top = end_value == top[resample]
    np.minimum.at(first, resample[at_top], group[at_top])
    return np.where(top > 0, first, -1)
