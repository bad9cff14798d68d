"""Bootstrap re-tuning of the global threshold without touching the items.

A bootstrap resample of ``N`` frequency-weighted items (``N = sum w``) draws
``N`` copies with probability ``w_i / N``. Re-tuning one global threshold
reads only the resampled counts per *cell* (distinct confidence, gain of the
item): summed over a cell, the item counts are multinomial with the cell's
share of the weight, exactly (a multinomial aggregates into a multinomial).

The cells are the leaves of a binary tree over the distinct confidences
(decreasing), with one count per gain category. A node's counts split into
its children's by one binomial draw per category, with the left child's
share of the node's weight: conditionally on the node, exactly the
multinomial of its leaves. The search goes down from the root and stops
where the tuning rule cannot look: a node whose best possible prefix (every
item of positive gain first) stays below a value already reached, or that
drew nothing, is never split. So a resample costs about ``log2(groups)``
levels of a few nodes each, not one pass over the items; the thresholds it
finds are those :func:`fit_policy` finds on the resample itself, ties
included (the first maximiser, i.e. the highest threshold, and "accept
nothing" when no prefix gains).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._engine.sorting import SortedRun

# More gain categories than this (a value matrix over many classes) and the
# per-node count vectors stop paying for themselves: the item bootstrap is used.
MAX_CATEGORIES = 8
# Resamples searched together; fixed, so that results never depend on a batch size.
_RESAMPLES_PER_CHUNK = 256


@dataclass(frozen=True, eq=False)
class GroupTree:
    """The cells of a presorted run as the leaves of a complete binary tree (heap order).

    Attributes
    ----------
    gains : ndarray of shape (K,)
        Gain over abstaining of one item of each category.
    left_share : ndarray of shape (P, K)
        For internal node ``v`` (``1 <= v < P``), the share of its weight of
        each category held by its left child ``2 v`` (0 where it holds none).
    root_share : ndarray of shape (K,) or (K + 1,)
        Share of the whole weight held by each category; with items the model
        declined, their share last (they are resampled, and hand off whatever
        the threshold, so they hold no leaf).
    n_draws : int
        Items a resample draws: the total weight, declined items included.
    n_groups : int
        Distinct confidences; leaf ``P + g`` is group ``g``.
    depth : int
        ``P = 2 ** depth`` leaves.
    """

    gains: np.ndarray
    left_share: np.ndarray
    root_share: np.ndarray
    n_draws: int
    n_groups: int
    depth: int


def group_tree(run: SortedRun, values) -> GroupTree | None:
    """The tree of ``run`` for ``values`` (frequency weights), or None when the gains have too many categories."""
    p = run.predictions
    use_case = values.use_case
    if use_case is not None:
        # Categories in fit_policy's order: correct, then wrong.
        gains = np.array([use_case.gain_correct, use_case.gain_wrong])
        if not p.has_model_abstentions:
            # The run's cumulative counts per group hold the same whole numbers (exact: the frequency weights
            # this serves total at most 2**53): O(groups), not a pass over the items.
            weight = np.column_stack([np.diff(run.cum_correct), np.diff(run.cum_wrong)]).ravel()
        else:
            weight = _cell_weights(run, (~p.correct).astype(np.intp), 2)
    else:
        import pandas as pd

        item_gain = values.for_classes(p.classes).gains[p.y_true, p.y_pred]
        answered = ~p.model_abstained if p.has_model_abstentions else None
        # Only answered items' gains are categories: a declined item's would be a category of no cell.
        codes, distinct = pd.factorize(item_gain if answered is None else item_gain[answered], sort=True)
        if distinct.shape[0] > MAX_CATEGORIES:
            return None
        if answered is not None:
            codes = _spread(codes, answered)
        gains = np.asarray(distinct, dtype=np.float64)
        weight = _cell_weights(run, codes.astype(np.intp), gains.shape[0])
    n_categories, n_groups = gains.shape[0], run.n_groups
    depth = max(0, int(np.ceil(np.log2(n_groups))))
    size = 1 << depth
    node = np.zeros((2 * size, n_categories))
    node[size:size + n_groups] = weight.reshape(n_groups, n_categories)
    for level in range(depth - 1, -1, -1):  # integer weights: the sums are exact
        first, stop = 1 << level, 2 << level
        node[first:stop] = node[2 * first:2 * stop:2] + node[2 * first + 1:2 * stop:2]
    left_share = np.divide(node[2:2 * size:2], node[1:size], out=np.zeros((size - 1, n_categories)),
                           where=node[1:size] > 0)  # fmt: skip
    root = node[1]
    if p.has_model_abstentions:
        root = np.r_[root, p.sample_weight[p.model_abstained].sum()]
    total = root.sum()
    return GroupTree(
        gains=gains,
        left_share=np.vstack([np.zeros((1, n_categories)), left_share]),
        root_share=root / total if total > 0 else root,
        n_draws=int(round(total)),
        n_groups=n_groups,
        depth=depth,
    )


def _cell_weights(run: SortedRun, category: np.ndarray, n_categories: int) -> np.ndarray:
    """Weight of each (group, category) cell, flat, group-major; items the model declined are in no cell."""
    p = run.predictions
    cell = _item_groups(run) * n_categories + category
    weight = p.sample_weight
    if p.has_model_abstentions:
        answered = ~p.model_abstained
        cell, weight = cell[answered], weight[answered]
    return np.bincount(cell, weights=weight, minlength=run.n_groups * n_categories)


def _spread(codes: np.ndarray, answered: np.ndarray) -> np.ndarray:
    """The answered items' codes at their places among all items; 0 for a declined item (in no cell)."""
    every = np.zeros(answered.shape[0], dtype=np.intp)
    every[answered] = codes
    return every


def _item_groups(run: SortedRun) -> np.ndarray:
    """Group (index into ``run.thresholds``) of each item, in the run's order."""
    if run._rank is not None:
        return run._rank.astype(np.intp)
    groups = np.zeros(run.predictions.n, dtype=np.intp)  # declined items (in no group, last in the order): 0
    answered = int(run.group_end[-1]) if run.n_groups else 0
    groups[run.order[:answered]] = np.repeat(np.arange(run.n_groups), np.diff(np.r_[0, run.group_end]))
    return groups


def _value(tree: GroupTree, counts: np.ndarray) -> np.ndarray:
    """Gain of item counts (shape (m, K)), summed category by category as fit_policy sums them."""
    value = tree.gains[0] * counts[:, 0]
    for c in range(1, tree.gains.shape[0]):
        value = value + tree.gains[c] * counts[:, c]
    return value


def _drew_any(counts: np.ndarray) -> np.ndarray:
    """Rows of (non-negative) counts that are not all zero; a column loop beats ``any(axis=1)`` on narrow rows."""
    total = counts[:, 0].copy()
    for c in range(1, counts.shape[1]):
        total += counts[:, c]
    return total > 0


def best_groups(tree: GroupTree, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The group whose confidence a re-tuned threshold takes, per resample; -1 for "accept nothing"."""
    left_share, binomial = tree.left_share, rng.binomial
    n_categories = tree.gains.shape[0]  # a resample's declined items, drawn last at the root, are dropped there

    def split(_, node, counts):
        # np.take: fancy indexing of rows copies them element by element, several times slower
        return binomial(counts, np.take(left_share, node, axis=0))

    best = np.empty(n_resamples, dtype=np.intp)
    for start in range(0, n_resamples, _RESAMPLES_PER_CHUNK):
        size = min(_RESAMPLES_PER_CHUNK, n_resamples - start)
        root = rng.multinomial(tree.n_draws, tree.root_share, size=size)[:, :n_categories]
        best[start:start + size] = search(tree, root, split)
    return best


def search(tree: GroupTree, root: np.ndarray, split) -> np.ndarray:
    """Best group per resample from the root counts (shape (R, K)); ``split(resample, node, counts)``
    gives the left children's counts. -1 where no prefix gains more than accepting nothing.

    The nodes of a level are the kept left children of the level above, in order, then its kept right
    children: the order in which ``split`` draws them, on which the random stream depends.
    """
    n_resamples = root.shape[0]
    resample = np.arange(n_resamples)
    node = np.ones(n_resamples, dtype=np.intp)
    counts = root.astype(np.int64)
    before = np.zeros_like(counts)
    positive = np.maximum(tree.gains, 0.0)
    before_value = _value(tree, before)  # of the items before each node
    end_value = _value(tree, counts)  # of the items up to each node's end
    # The best value reached so far, a lower bound of each resample's optimum (0: accept nothing).
    reached = np.maximum(end_value, 0.0)
    slack = 1e-9 * (float(np.abs(tree.gains).max(initial=0.0)) + np.abs(reached))
    for _ in range(tree.depth):
        left = np.asarray(split(resample, node, counts), dtype=np.int64)
        n_parents = resample.shape[0]
        # A left child starts where its parent starts and a right child ends where its parent ends: the only
        # new values are the left children's ends (the right ones', their parents', are already in ``reached``).
        after_left = before + left
        left_end = _value(tree, after_left)
        np.maximum.at(reached, resample, left_end)
        children = np.concatenate([left, counts - left])
        starts = np.concatenate([before_value, left_end])
        # A prefix ending inside a node is worth at most its items of positive gain taken first.
        upper = starts + children @ positive
        lowest = np.take(reached - slack, resample)
        keep = upper >= np.concatenate([lowest, lowest])
        keep &= _drew_any(children)
        kept = np.flatnonzero(keep)
        is_right = kept >= n_parents
        parent = kept - n_parents * is_right
        resample = np.take(resample, parent)
        node = 2 * np.take(node, parent) + is_right
        counts = np.take(children, kept, axis=0)
        before = np.take(np.concatenate([before, after_left]), kept, axis=0)
        end_value = np.take(np.concatenate([left_end, end_value]), kept)
        before_value = np.take(starts, kept)
    # Leaves: the drawn groups that can still be best. The first maximiser wins; it must gain.
    group = node - (1 << tree.depth)
    top = np.full(n_resamples, -np.inf)
    np.maximum.at(top, resample, end_value)
    first = np.full(n_resamples, np.iinfo(np.intp).max)
    at_top = end_value == top[resample]
    np.minimum.at(first, resample[at_top], group[at_top])
    return np.where(top > 0, first, -1)
