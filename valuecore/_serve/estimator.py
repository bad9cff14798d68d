"""A scikit-learn classifier that abstains as a stored policy says (``valuecore.serving``).

Imported only when ``valuecore.serving.RejectOptionClassifier`` is first used: the
decision runtime of ``valuecore.serving`` itself stays numpy-only.
"""

from __future__ import annotations

import weakref

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, column_or_1d

__all__ = ["RejectOptionClassifier"]

CONFIRM = "confirm"
SHORTLIST = "shortlist"

# How far below a tuned threshold ``fit`` stores it (relative), when the threshold is the confidence of a
# tuning item: ``predict`` recomputes that confidence, and sparse vs dense input, another BLAS kernel or a
# float32 model move it by a few rounding steps; an item tuned as accepted must not flip on that.
RECOMPUTATION_MARGIN = 1e-6


def _is_fitted(estimator) -> bool:
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


class RejectOptionClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A fitted classifier whose ``predict`` abstains where a valuecore policy says so.

    Shaped like scikit-learn's ``FixedThresholdClassifier``: the wrapped
    ``estimator`` gives the probabilities (``predict_proba`` is passed
    through), the policy gives the decision, with the recalibration, the
    thresholds (one, or one per class), the expected-value rule or two
    tiers, exactly as ``python -m valuecore apply`` scores it.

    Parameters
    ----------
    estimator : classifier with ``predict_proba`` and ``classes_``
        Used as it is when fitted (wrap it in ``sklearn.frozen.FrozenEstimator``
        to keep it fitted through ``clone``, e.g. in a grid search); otherwise
        :meth:`fit` fits a clone first, and then the policy is tuned on the very
        data the model learnt (optimistic).
    policy : path, dict, PolicyDocument or ServingPolicy, optional
        A stored policy to apply. Without one, :meth:`fit` tunes it.
    model : str, optional
        Which model of a several-model document (default: its recommendation).
    abstain_label : default -1
        What ``predict`` returns for an item handed to a person (and, for a
        ``two_tier`` policy, for an item a person confirms). Must not be a class,
        compared as a value and as text (``True`` is the class ``1``, ``"1"`` too).
    use_case : UseCase or ValueMatrix, optional
        The values :meth:`fit` tunes the policy for (``fit(..., use_case=...)``
        overrides it). Class names are ``str(c)`` of ``classes_``.
    kind : str, default "threshold"
        The policy kind :meth:`fit` tunes (``valuecore.policy_json.ALL_POLICY_KINDS``).
    calibration : {"none", "temperature", "isotonic", "platt"}, default "none"
        The recalibration :meth:`fit` fits before tuning.
    assisted : dict, optional
        The values of the confirmed tier, for ``kind="two_tier"``.
    segment : str or callable, optional
        For a policy with a threshold per segment (schema version 3): where each row's segment comes from,
        the name of a column of X (a DataFrame) or a function of X giving one label per row. Default: the
        column the document names. A segment column the estimator was not fitted on (not in its
        ``feature_names_in_``) is dropped before the estimator reads X.

    Attributes
    ----------
    estimator_ : the classifier used
    classes_ : ndarray, the estimator's classes
    document_ : PolicyDocument, the policy applied (tuned by :meth:`fit`, or read); a threshold :meth:`fit`
        tunes on an item's confidence is stored a hair lower (``RECOMPUTATION_MARGIN``).
    """

    def __init__(self, estimator, policy=None, model=None, abstain_label=-1, *, use_case=None, kind="threshold",
                 calibration="none", assisted=None, segment=None):
        self.estimator = estimator
        self.policy = policy
        self.model = model
        self.abstain_label = abstain_label
        self.use_case = use_case
        self.kind = kind
        self.calibration = calibration
        self.assisted = assisted
        self.segment = segment

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y, *, use_case=None, kind=None, calibration=None, sample_weight=None, name="model"):
        """Tune the policy on labelled validation data ``(X, y)`` with valuecore's pipeline.

        The values come from ``use_case`` (here or in the constructor), else
        from the stored ``policy`` document (whose kind and calibration method
        are then the defaults). Returns self.
        """
        from .._pipeline.pipeline import Pipeline
        from .._model.predictions import Predictions
        from .._io.runfiles import ModelRun

        from .._model.predictions import _label_text

        y = column_or_1d(y, warn=True)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight is not None and not sample_weight.sum() > 0:
            raise ValueError("sample_weight must not be all zero: no item would count")
        estimator = self.estimator
        if not _is_fitted(estimator):
            weight = {} if sample_weight is None else {"sample_weight": sample_weight}
            estimator = clone(estimator).fit(X, y, **weight)
        classes = np.asarray(estimator.classes_)
        names = tuple(_label_text(c) for c in classes)  # labels compare as text, as in run files
        stored = self._stored_policy() if self.policy is not None else None
        if stored is not None and stored.segment_policy is not None:
            raise ValueError(f"the stored policy of model {stored.model!r} sets a threshold per segment, which fit "
                             "does not tune (it tunes one rule for all items): tune the segments with "
                             "valuecore.constraints.fit_segments or 'report --segment', and wrap a fitted "
                             "estimator with that policy")
        values = use_case if use_case is not None else self.use_case
        if values is None and stored is not None:
            values = stored.values
        if values is None:
            raise ValueError("fit needs the values to tune for: use_case=UseCase(...) or a ValueMatrix, "
                             "here or in the constructor, or a stored policy")
        kind = kind or (stored.kind if stored is not None and self.use_case is None else self.kind)
        method = calibration or (stored.policy.calibration.get("method", "none")
                                 if stored is not None and self.use_case is None else self.calibration)
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        if y.shape[0] != proba.shape[0]:
            raise ValueError(f"y must have one label per row of X ({proba.shape[0]}), got {y.shape[0]}")
        predictions = Predictions.from_proba(proba, y_true=y.astype(object), classes=names,
                                             sample_weight=sample_weight)
        run = ModelRun(name, "<validation data given to fit>", None, names, {"val": predictions})
        constraints = {"assisted": self.assisted} if kind == "two_tier" else {}
        pipeline = Pipeline({name: run}, "val", "val", method)
        document, self.notes_ = pipeline.document([name], kind, _aligned(values, names),
                                                  with_interval=False, **constraints)
        self.document_ = _below_the_tuning_items(document, proba)
        self.estimator_ = estimator
        self._check_abstain_label(classes)
        return self

    def _stored_policy(self):
        from .policy import ServingPolicy

        if isinstance(self.policy, ServingPolicy):
            return self.policy
        return self._loaded(self.policy, self.model)

    def _loaded(self, source, model):
        """``load_policy(source, model)``, read again only when the source may have changed: another object,
        a file of another size or modification time, a mapping no longer equal to the one read (each
        ``predict`` would otherwise read and check the whole document again)."""
        import copy

        from .policy import load_policy

        kept = _LOADED.get(self)
        stamp = _file_stamp(source)
        if (kept is not None and kept[0] is source and kept[1] == model and kept[2] == stamp
                and (kept[3] is None or kept[3] == source)):
            return kept[4]
        served = load_policy(source, model)
        snapshot = copy.deepcopy(source) if isinstance(source, dict) else None
        _LOADED[self] = (source, model, stamp, snapshot, served)  # not in the estimator: predict changes none of it
        return served

    # ----------------------------------------------------------------- decisions
    def __sklearn_is_fitted__(self) -> bool:
        if hasattr(self, "document_"):
            return True
        return self.policy is not None and _is_fitted(self.estimator)

    def _served(self):
        """(the fitted estimator, the ServingPolicy) of the tuned policy, or of the stored one on a fitted estimator."""
        if hasattr(self, "document_"):
            return self.estimator_, self._loaded(self.document_, self.document_.models[0])
        check_is_fitted(self)
        return self.estimator, self._stored_policy()

    def _check_abstain_label(self, classes) -> None:
        from .policy import _same_label

        if any(_same_label(self.abstain_label, c) for c in classes):
            raise ValueError(f"abstain_label {self.abstain_label!r} is one of the classes {list(classes)} (labels "
                             "compare as values and as text): choose a label that no class has")

    def _check_served(self, estimator, served, *, tiers: bool = False) -> np.ndarray:
        """The estimator's classes, once they are the policy's (in order) and ``abstain_label`` is none of them
        (nor, with ``tiers``, the labels ``decide`` gives a confirmed or listed item)."""
        from .._model.predictions import _label_text
        from .policy import check_action_labels

        classes = np.asarray(estimator.classes_)
        if tuple(_label_text(c) for c in classes) != served.classes:
            raise ValueError(f"the policy of model {served.model!r} is for classes {list(served.classes)} but the "
                             f"estimator has classes {[str(c) for c in classes]} (in this order)")
        self._check_abstain_label(classes)
        if tiers:
            check_action_labels(classes.tolist(), {"abstain": self.abstain_label,
                                                   **({"confirm": CONFIRM} if served.kind == "two_tier" else {}),
                                                   **({"shortlist": SHORTLIST} if served.kind == "shortlist" else {})},
                                served.model, "decide() could not tell them apart: use predict(), where such an "
                                "item is abstain_label")
        return classes

    @property
    def n_features_in_(self) -> int:
        """The wrapped estimator's number of input features (AttributeError before it is fitted)."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError(f"{type(self).__name__} is not fitted: it has no n_features_in_")
        return self._served()[0].n_features_in_

    @property
    def classes_(self) -> np.ndarray:
        return np.asarray(self._served()[0].classes_)

    def predict_proba(self, X):
        """The wrapped estimator's probabilities, as it gives them."""
        return self._served()[0].predict_proba(X)

    def _codes(self, X, *, segments=None):
        estimator, served = self._served()
        classes = self._check_served(estimator, served)
        if served.segment_policy is not None and segments is None:
            X, segments = self._segments_of(X, estimator, served)
        return classes, served.decisions(np.asarray(estimator.predict_proba(X), dtype=np.float64), segments=segments)

    def _labelled(self, X, labels_of, *, tiers: bool = False) -> np.ndarray:
        """The label of each row's action, ``labels_of(classes)`` giving the label of each action code: in one
        pass over the probabilities where the policy allows (``ServingPolicy._fused``), else from the codes;
        no recalibrated matrix is made either way."""
        estimator, served = self._served()
        labels = labels_of(self._check_served(estimator, served, tiers=tiers))
        segments = None
        if served.segment_policy is not None:
            X, segments = self._segments_of(X, estimator, served)
        proba = np.asarray(estimator.predict_proba(X))
        # float32 probabilities are read as they are: their checks, maxima and comparisons are those of their
        # float64 copy, exactly; the copy is made only for the general path, as before.
        if segments is None and proba.dtype in (np.float32, np.float64):
            fused, proba = served._fused(proba, labels)
            if fused is not None:
                return fused
        return labels[served._actions(np.asarray(proba, dtype=np.float64), None, None, None, segments)]

    def _segments_of(self, X, estimator, served):
        """(the features the estimator reads, each row's segment) for a per-segment policy."""
        source = self.segment if self.segment is not None else served.segment_column
        if callable(source):
            return X, source(X)
        columns = getattr(X, "columns", None)
        if columns is None or source not in list(columns):
            raise ValueError(f"the policy of model {served.model!r} sets a threshold per segment, read from the "
                             f"column {source!r} of X, which X does not have: give a DataFrame with that column, "
                             "or segment= a column name or a function of X")
        segments = X[source].to_numpy()
        known = getattr(estimator, "feature_names_in_", None)
        if known is None or source not in [str(name) for name in known]:
            X = X.drop(columns=[source])
        return X, segments

    def decisions(self, X):
        """:class:`valuecore.serving.Decisions` (action codes, predicted class, calibrated confidence) of X."""
        return self._codes(X)[1]

    def decide(self, X) -> np.ndarray:
        """Per row: its class, ``abstain_label``, (two tiers) ``"confirm"`` or (a shortlist) ``"shortlist"``;
        an object array."""
        return self._labelled(X, self._decide_labels, tiers=True)

    def _decide_labels(self, classes) -> np.ndarray:
        labels = np.empty(len(classes) + 3, dtype=object)
        labels[:] = [*classes.tolist(), self.abstain_label, CONFIRM, SHORTLIST]
        return labels

    def predict(self, X) -> np.ndarray:
        """Per row: the class acted on, or ``abstain_label`` (a confirmed tier counts as abstaining)."""
        return self._labelled(X, self._predict_labels)

    def _predict_labels(self, classes) -> np.ndarray:
        """``predict``'s label of each action code: the classes, then ``abstain_label`` for abstain, confirm
        and shortlist alike."""
        dtype = np.result_type(classes.dtype, np.asarray(self.abstain_label).dtype)
        # Numbers are gathered as numbers (the same values as objects converted after); others as objects.
        labels = np.empty(len(classes) + 3, dtype=dtype if dtype.kind in "iufb" else object)
        labels[:] = [*classes.tolist(), *[self.abstain_label] * 3]
        return labels

    def _predicted(self, classes, action) -> np.ndarray:
        """``predict``'s labels from the classes and the action codes."""
        return self._predict_labels(classes)[action]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse  # only predict_proba reads X
        return tags


# Each wrapper's last loaded policy: (source, model, file stamp, copy of a mapping, ServingPolicy).
_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _file_stamp(source):
    """(path, size, modification time) of a policy given as a file; None for anything else (or no such file)."""
    import os

    if not isinstance(source, (str, os.PathLike)):
        return None
    try:
        status = os.stat(source)
    except OSError:
        return None
    return os.fspath(source), status.st_size, status.st_mtime_ns


def _below_the_tuning_items(document, proba):
    """``document`` with each threshold that is a (recalibrated) tuning confidence lowered a hair.

    Lowered by ``RECOMPUTATION_MARGIN`` relative, but at most halfway to the next lower tuning
    confidence: every tuning item is decided as tuned (the exact search and its value stand), and
    stays so when ``predict`` recomputes its confidence a few rounding steps off.
    """
    import dataclasses

    from .policy import load_policy

    (entry,) = document.entries
    seen = np.unique(load_policy(document, entry.model).decisions(proba).confidence)

    def lowered(threshold):
        k = np.searchsorted(seen, threshold) if threshold is not None else len(seen)
        if k == len(seen) or seen[k] != threshold:
            return threshold
        margin = threshold * (1 - RECOMPUTATION_MARGIN)
        if k == 0:
            return float(margin)
        halfway = seen[k - 1] + (threshold - seen[k - 1]) / 2
        if not halfway > seen[k - 1]:  # two neighbouring floats: no number between them
            return threshold
        return float(max(margin, halfway))

    policy = entry.policy
    changes = {"threshold": lowered(policy.threshold), "assist_threshold": lowered(policy.assist_threshold)}
    if policy.class_thresholds is not None:
        changes["class_thresholds"] = tuple((c, lowered(t)) for c, t in policy.class_thresholds)
    entry = dataclasses.replace(entry, policy=dataclasses.replace(policy, **changes))
    return dataclasses.replace(document, entries=(entry,))


def _aligned(values, names):
    from .._pipeline.policy_json import align_values

    return align_values(values, names)
