"""The model comparison table of seed 003 (Tables 3-6): accuracy-style metrics vs value.

Each column ranks the models; the point of the table is to show where
accuracy, macro F1 or cost-sensitive error rank models differently than value
does at a given cost factor ``k`` (= omega).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is built, so that importing the module stays light

from .._model.choices import DEFAULT_KS
from .fitting import fit_policy
from .sorting import SortedRun
from .._model.values import UseCase

__all__ = ["ComparisonTable", "comparison_table", "DEFAULT_KS"]



@dataclass(frozen=True, eq=False)
class ComparisonTable:
    """Metrics per model (rows) and each model's rank per metric.

    Attributes
    ----------
    metrics : DataFrame
        Index ``model``; columns ``accuracy``, ``macro_f1``, then per ``k``:
        ``cost_error_k{k}`` (binary runs only), ``value_tuned_k{k}`` and
        ``value_calibrated_k{k}`` (dimensionless value per item with
        ``omega = k``; tuned on the tuning split, or the calibrated threshold
        ``k / (k + 1)``).
    ranks : DataFrame
        Same shape; 1 is best (lowest cost error, highest everything else);
        ties share the best rank.
    """

    metrics: pd.DataFrame
    ranks: pd.DataFrame

    def best(self) -> pd.Series:
        """The best model per column."""
        return self.ranks.idxmin()

    def disagreements(self) -> list[str]:
        """Columns whose best model differs from the most accurate model."""
        best = self.best()
        return [column for column in best.index if best[column] != best["accuracy"]]

    def to_frame(self) -> pd.DataFrame:
        """One frame with ``<metric>`` and ``<metric>_rank`` columns side by side."""
        import pandas as pd
        ranked = self.ranks.add_suffix("_rank")
        columns = [c for pair in zip(self.metrics.columns, ranked.columns) for c in pair]
        return pd.concat([self.metrics, ranked], axis=1)[columns]


def comparison_table(
    eval_runs: dict[str, SortedRun],
    tune_runs: dict[str, SortedRun] | None = None,
    ks=DEFAULT_KS,
) -> ComparisonTable:
    """Seed 003's table for several models evaluated on the same split.

    Parameters
    ----------
    eval_runs : dict of model name -> SortedRun (labelled)
    tune_runs : dict of model name -> SortedRun, optional
        Where thresholds are tuned; defaults to the evaluated runs (an
        optimistic, "oracle" choice).
    ks : sequence of float
        Cost factors (omega). Cost-sensitive error uses ``k_fn = k``,
        ``k_fp = 1`` with ``classes[1]`` as the positive class.
    """
    import pandas as pd
    tune_runs = tune_runs or eval_runs
    rows = {}
    for model, run in eval_runs.items():  # loop over models, not items
        predictions = run.predictions
        predictions.require_labels(f"the comparison table ({model})")
        weight = predictions.sample_weight
        row = {
            "accuracy": predictions.accuracy,
            "macro_f1": predictions.macro_f1,
        }
        binary = predictions.n_classes == 2
        if binary:
            false_neg = float(weight[(predictions.y_true == 1) & (predictions.y_pred == 0)].sum())
            false_pos = float(weight[(predictions.y_true == 0) & (predictions.y_pred == 1)].sum())
        for k in ks:
            use_case = UseCase.from_omega(k)
            if binary:
                row[f"cost_error_k{k:g}"] = (false_neg * k + false_pos) / max(run.total_weight, 1e-300)
            tuned = fit_policy("threshold", tune_runs[model], use_case).threshold
            row[f"value_tuned_k{k:g}"] = run.value_at(tuned, k)
            row[f"value_calibrated_k{k:g}"] = run.value_at(use_case.calibrated_threshold, k)
        rows[model] = row
    metrics = pd.DataFrame.from_dict(rows, orient="index")
    metrics.index.name = "model"
    lower_is_better = [c for c in metrics.columns if c.startswith("cost_error")]
    ranks = metrics.rank(ascending=False, method="min")
    if lower_is_better:
        ranks[lower_is_better] = metrics[lower_is_better].rank(ascending=True, method="min")
    return ComparisonTable(metrics=metrics, ranks=ranks.astype("Int64"))
