"""The choice study: a seeded simulation with known truth that scores how a (model, rule) is chosen.

A *chooser* sees what a user has (a :class:`valuecore.Pipeline` over runs with a tuning split
``"val"`` and an evaluated split ``"test"``, and the values) and names one model and decision rule to
deploy, or none ("hand every item to a person"). The study then scores that choice on 100,000 new
items whose true posterior is known exactly, against the best choice that could have been made on those
new items themselves.

The world (:func:`draw_world`)
    ``n_classes`` in {2, 3, 5, 10}; class priors uniform, or one class rare at 2% (the others share the
    rest equally); 3-6 models. Model ``m`` observes its own ``z_m = s_m onehot(y) + N(0, I_K)`` with a
    signal strength ``s_m`` in [0.5, 3.5], so its true posterior is exactly
    ``p_m(y | z) = softmax(s_m z + log priors)`` (the likelihood of ``z`` given ``y`` is proportional to
    ``exp(s_m z_y)``). It reports the miscalibrated ``q = softmax(a_m s_m z + b_m)``: a temperature
    ``a_m`` log-uniform in [0.4, 2.5] and a prior term ``b_m`` that is the true log priors, uniform
    (zeros), or the log priors shifted by N(0, 1) per class (one third each).

The items (:func:`make_scenario`)
    A tuning split ``"val"`` and an evaluated split ``"test"`` of ``n`` items each, then ``n_new`` new
    items; every model sees the same items (the same ``y`` and ``id``), each through its own ``z``, so
    comparisons between models are paired. The new items are used for the truth only.

The values (:class:`Cell`)
    ``use_case``: ``UseCase(1, 0, -omega)``. ``rare_costly``: a value matrix where the rare class (the
    world always has one) predicted as any other class costs ``omega``, every other error -1, a correct
    answer +1, a hand-off 0. ``binary_asymmetric``: two classes, class 1 the rare or positive one,
    ``[[1, -5, -0.5], [-50, 10, -0.5]]`` (true class x predicted, then abstain): a miss costs 50, a false
    alarm 5, and a hand-off costs 0.5 (so the baseline is not 0).

The truth (:class:`Truth`)
    The true value of a policy is the mean over new items of its expected value under the true posterior
    of the model it uses: ``baseline + mean_i gain_i``, where ``gain_i = sum_y p_m(y | z_i)
    (V[y, a_i] - V[y, abstain])`` (0 for an item handed over) and ``baseline = sum_y prior_y
    V[y, abstain]`` is exactly the value of handing every item over ("no model"). Its standard error is
    that of the mean gain over the new items. The actions come from the product's own
    ``Policy.decide`` on ``Predictions.from_proba(q_new)`` (the policy's recorded calibration applies
    inside).

The oracle (:func:`oracle`)
    The best choice made on the new items: the largest true value among the baseline, every candidate
    (model, rule) ``vc.recommend`` fitted, and for each model the best single threshold and the best
    per-class thresholds chosen on the new items themselves (exact: every distinct confidence is a cut;
    equal confidences are never split). **Regret** = oracle - the chosen policy's true value. A choice
    **loses money** when its true value is below the baseline by more than 2 standard errors.

The choosers (:data:`CHOOSERS`)
    A chooser is a callable ``(pipeline, values, context) -> (model or None, Policy or None, extra
    dict)``; ``context`` (:class:`ChoiceContext`) caches the product's recommendation and gives a seeded
    ``rng``, never the truth. ``product`` is ``vc.recommend``; ``naive`` tunes one threshold per model on
    the tuning split and takes the best on the evaluated one (no model when that is not above handing
    over); ``best_on_test`` takes the product's candidate with the highest value on the evaluated split.
    A chooser named ``module:function`` is imported.

Every scenario is determined by its cell and seed (``numpy.random.default_rng([seed, cell.code])``);
``benchmarks/bench_choice.py`` prints the tables, ``tests/core/test_choice_study_slow.py`` checks the
instrument itself.
"""

from __future__ import annotations

import importlib
import json
import math
import time
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

import valuecore as vc

N_NEW = 100_000
OMEGAS = (0, 1, 4, 20, 100, 1000)
SIZES = (300, 1000, 3000)
COSTLY = (20, 100, 1000)
N_CLASSES = (2, 3, 5, 10)
RARE_PRIOR = 0.02
BINARY_ASYMMETRIC = ((1.0, -5.0, -0.5), (-50.0, 10.0, -0.5))


# ------------------------------------------------------------------ cells
@dataclass(frozen=True)
class Cell:
    """The values and split size of a group of scenarios.

    Attributes
    ----------
    kind : {"use_case", "rare_costly", "binary_asymmetric"}
    cost : float
        ``omega`` of the use case, or the cost of the rare class's confusion; NaN for binary_asymmetric.
    n : int
        Items in each of the tuning and evaluated splits.
    """

    kind: str
    cost: float
    n: int

    @property
    def label(self) -> str:
        if self.kind == "use_case":
            return f"omega={self.cost:g}"
        if self.kind == "rare_costly":
            return f"rare x{self.cost:g}"
        return "binary"

    @property
    def code(self) -> int:
        """A stable integer naming the cell, the second half of each scenario's seed."""
        return zlib.crc32(f"{self.kind}/{self.cost:g}/{self.n}".encode())

    @property
    def costly(self) -> bool:
        """Where errors are costly: a use case with omega >= 20, or a rare class whose miss costs >= 20."""
        return self.kind in ("use_case", "rare_costly") and self.cost >= 20


def default_cells(omegas: Iterable[float] = OMEGAS, sizes: Iterable[int] = SIZES,
                  costly: Iterable[float] = COSTLY, binary: bool = True) -> list[Cell]:
    """Use cases, then the rare costly matrices, then the binary asymmetric one, each at every size."""
    sizes = tuple(sizes)
    cells = [Cell("use_case", float(w), n) for w in omegas for n in sizes]
    cells += [Cell("rare_costly", float(c), n) for c in costly for n in sizes]
    if binary:
        cells += [Cell("binary_asymmetric", math.nan, n) for n in sizes]
    return cells


# ------------------------------------------------------------------ world
@dataclass(frozen=True)
class ModelSpec:
    """How one model sees the items: signal strength ``s``, temperature ``a``, prior term ``b`` (shape (K,))."""

    name: str
    strength: float
    temperature: float
    bias: np.ndarray
    bias_kind: str


@dataclass(frozen=True)
class World:
    """Classes, priors (shape (K,)), the rare class (index or None) and the models."""

    classes: tuple
    priors: np.ndarray
    rare: int | None
    models: tuple

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def draw_world(rng: np.random.Generator, *, n_classes: int | None = None, rare: bool | None = None,
               rare_class: int | None = None) -> World:
    """A world: its classes and priors, and 3-6 models (see the module docstring).

    ``n_classes`` and ``rare`` are drawn unless given; ``rare_class`` fixes which class is rare.
    """
    k = int(rng.choice(N_CLASSES)) if n_classes is None else int(n_classes)
    is_rare = bool(rng.random() < 0.5) if rare is None else bool(rare)
    which = int(rng.integers(k)) if rare_class is None else int(rare_class)
    if is_rare:
        priors = np.full(k, (1 - RARE_PRIOR) / (k - 1))
        priors[which] = RARE_PRIOR
    else:
        priors = np.full(k, 1.0 / k)
    log_priors = np.log(priors)
    models = []
    for m in range(int(rng.integers(3, 7))):
        strength = float(rng.uniform(0.5, 3.5))
        temperature = float(np.exp(rng.uniform(np.log(0.4), np.log(2.5))))
        bias_kind = ("true", "uniform", "shifted")[int(rng.integers(3))]
        shift = rng.normal(0.0, 1.0, k)  # drawn for every model, so a model's kind does not move the others
        bias = {"true": log_priors, "uniform": np.zeros(k), "shifted": log_priors + shift}[bias_kind]
        models.append(ModelSpec(f"m{m}", strength, temperature, bias.copy(), bias_kind))
    return World(tuple(f"c{j}" for j in range(k)), priors, which if is_rare else None, tuple(models))


def _softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    return logits


def draw_items(world: World, n: int, rng: np.random.Generator):
    """(y of shape (n,), {model: reported q (n, K)}, {model: true posterior (n, K)}) for n fresh items."""
    k = world.n_classes
    y = rng.choice(k, size=n, p=world.priors)
    log_priors = np.log(world.priors)
    reported, posterior = {}, {}
    for spec in world.models:
        signal = spec.strength * (rng.standard_normal((n, k)))
        signal[np.arange(n), y] += spec.strength * spec.strength  # s * z with z = s onehot(y) + noise
        posterior[spec.name] = _softmax(signal + log_priors)
        reported[spec.name] = _softmax(spec.temperature * signal + spec.bias)
    return y, reported, posterior


def values_of(cell: Cell, world: World):
    """The cell's values for the world's classes: a UseCase, or a ValueMatrix in the world's class order."""
    if cell.kind == "use_case":
        return vc.UseCase(1.0, 0.0, -cell.cost)
    k = world.n_classes
    if cell.kind == "rare_costly":
        matrix = np.full((k, k + 1), -1.0)
        matrix[np.arange(k), np.arange(k)] = 1.0
        matrix[:, k] = 0.0
        costly = np.arange(k) != world.rare
        matrix[world.rare, :k][costly] = -cell.cost
        return vc.ValueMatrix(world.classes, matrix)
    if cell.kind == "binary_asymmetric":
        return vc.ValueMatrix(world.classes, np.array(BINARY_ASYMMETRIC))
    raise ValueError(f"unknown cell kind {cell.kind!r}")


def value_array(values, classes) -> np.ndarray:
    """``values`` as an array (K, K + 1) in the order of ``classes``."""
    return np.asarray(values.for_classes(tuple(classes)).values, dtype=np.float64)


# --------------------------------------------------------------- scenario
@dataclass
class Truth:
    """What the new items say, per model; never shown to a chooser.

    Attributes
    ----------
    y : ndarray (n_new,)
        The new items' classes (for checks: the posterior's expectations should match them).
    predictions : dict of model -> Predictions
        The reported probabilities of the new items (no labels), what a deployed policy decides on.
    posterior : dict of model -> ndarray (n_new, K)
        Each new item's true posterior ``p_m(y | z_i)`` given what model ``m`` observed.
    gains : dict of model -> ndarray (n_new, K)
        ``gains[m][i, a] = sum_y p_m(y | z_i) (V[y, a] - V[y, abstain])``: the true expected gain over
        handing item ``i`` over of acting on class ``a``.
    baseline : float
        ``sum_y prior_y V[y, abstain]``: the true value per item of handing every item over.
    """

    y: np.ndarray
    predictions: dict
    posterior: dict
    gains: dict
    baseline: float
    _actions: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.y)

    def actions(self, model: str, policy, values) -> np.ndarray:
        """``policy.decide`` on the new items of ``model`` (cached per policy)."""
        key = (model, policy)
        if key not in self._actions:
            self._actions[key] = np.asarray(policy.decide(self.predictions[model], values), dtype=np.int64)
        return self._actions[key]

    def item_gains(self, model: str | None, actions: np.ndarray | None) -> np.ndarray:
        """Each new item's true gain over handing it over, shape (n_new,); zeros for no model."""
        if model is None or actions is None:
            return np.zeros(self.n)
        gains = self.gains[model]
        acted = np.flatnonzero(actions < gains.shape[1])
        out = np.zeros(self.n)
        out[acted] = gains[acted, actions[acted]]
        return out

    def value(self, item_gains: np.ndarray) -> tuple[float, float]:
        """(true value per item, its standard error over the new items)."""
        se = float(item_gains.std(ddof=1) / math.sqrt(len(item_gains))) if len(item_gains) > 1 else 0.0
        return self.baseline + float(item_gains.mean()), se


@dataclass
class Scenario:
    cell: Cell
    seed: int
    world: World
    values: object
    runs: dict
    truth: Truth

    @property
    def key(self) -> tuple:
        return (self.cell.kind, self.cell.cost, self.cell.n, self.seed)


def scenario_rng(cell: Cell, seed: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), cell.code])


def make_scenario(cell: Cell, seed: int, n_new: int = N_NEW) -> Scenario:
    """The world, the runs (splits "val" and "test" of ``cell.n`` items) and the truth on ``n_new`` new items."""
    rng = scenario_rng(cell, seed)
    if cell.kind == "rare_costly":
        world = draw_world(rng, rare=True)
    elif cell.kind == "binary_asymmetric":
        world = draw_world(rng, n_classes=2, rare_class=1)
    else:
        world = draw_world(rng)
    values = values_of(cell, world)
    labels = np.asarray(world.classes, dtype=object)
    splits = {}
    for split in ("val", "test"):
        y, reported, _ = draw_items(world, cell.n, rng)
        splits[split] = {m: vc.Predictions.from_proba(q, y_true=labels[y], classes=world.classes,
                                                      ids=np.arange(cell.n)) for m, q in reported.items()}
    runs = {spec.name: vc.runs.ModelRun(spec.name, f"{spec.name}.csv", f"{seed}-{cell.code}-{spec.name}", world.classes,
                                   {split: splits[split][spec.name] for split in ("val", "test")})
            for spec in world.models}
    y_new, reported, posterior = draw_items(world, n_new, rng)
    matrix = value_array(values, world.classes)
    differences = matrix[:, :-1] - matrix[:, -1:]  # (K, K): true x acted on, less handing over
    truth = Truth(
        y=y_new,
        predictions={m: vc.Predictions.from_proba(q, classes=world.classes) for m, q in reported.items()},
        posterior=posterior,
        gains={m: p @ differences for m, p in posterior.items()},
        baseline=float(world.priors @ matrix[:, -1]),
    )
    return Scenario(cell, seed, world, values, runs, truth)


# ------------------------------------------------------------------ oracle
def best_cut(confidence: np.ndarray, gain: np.ndarray) -> tuple[float, np.ndarray]:
    """The best single threshold on these items: (total gain, mask of the items it acts on).

    Exact: every distinct confidence is a cut, equal confidences are never split, acting on nothing
    (gain 0) is allowed.
    """
    if len(confidence) == 0:
        return 0.0, np.zeros(0, dtype=bool)
    order = np.argsort(-confidence, kind="stable")
    ranked = confidence[order]
    totals = np.cumsum(gain[order])
    ends = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True))  # last item of each group of equal ones
    best = int(np.argmax(totals[ends]))
    mask = np.zeros(len(confidence), dtype=bool)
    if totals[ends[best]] <= 0:
        return 0.0, mask
    mask[order[:ends[best] + 1]] = True
    return float(totals[ends[best]]), mask


def threshold_oracles(truth: Truth, model: str) -> dict[str, np.ndarray]:
    """The item gains of the best single threshold and the best per-class thresholds chosen on the new items."""
    predictions = truth.predictions[model]
    confidence, y_pred = predictions.confidence, predictions.y_pred
    top = truth.gains[model][np.arange(truth.n), y_pred]
    _, mask = best_cut(confidence, top)
    single = np.where(mask, top, 0.0)
    per_class = np.zeros(truth.n)
    for c in range(predictions.n_classes):
        items = np.flatnonzero(y_pred == c)
        _, mask = best_cut(confidence[items], top[items])
        per_class[items[mask]] = top[items[mask]]
    return {"threshold*": single, "class_thresholds*": per_class}


@dataclass(frozen=True)
class Oracle:
    """The best choice made on the new items: its name, true value and item gains (for paired errors)."""

    name: str
    value: float
    se: float
    item_gains: np.ndarray


def oracle(truth: Truth, values, candidates: Sequence) -> Oracle:
    """Max of the baseline, every candidate ``(model, policy)``, and each model's threshold oracles."""
    options = [("no model", truth.item_gains(None, None))]
    for model, policy in candidates:
        options.append((f"{model}/{policy.kind}", truth.item_gains(model, truth.actions(model, policy, values))))
    for model in truth.predictions:
        options += [(f"{model}/{name}", gains) for name, gains in threshold_oracles(truth, model).items()]
    means = [g.mean() for _, g in options]
    best = int(np.argmax(means))  # the first of equal ones: no model, then the candidates
    value, se = truth.value(options[best][1])
    return Oracle(options[best][0], value, se, options[best][1])


# ---------------------------------------------------------------- choosers
class StudyPipeline(vc.Pipeline):
    """Sorts and recalibrates each split once, as the dashboard's cached workspace does (the same numbers)."""

    def __init__(self, runs, calibration: str = "none"):
        super().__init__(runs, calibration=calibration)
        self._sorted_memo: dict = {}
        self._calibrated_memo: dict = {}

    def calibrated(self, model, split):
        if (model, split) not in self._calibrated_memo:
            self._calibrated_memo[model, split] = super().calibrated(model, split)
        return self._calibrated_memo[model, split]

    def sorted(self, model, split):
        if (model, split) not in self._sorted_memo:
            self._sorted_memo[model, split] = super().sorted(model, split)
        return self._sorted_memo[model, split]


class ChoiceContext:
    """What a chooser may use besides the pipeline and the values: never the truth.

    Attributes
    ----------
    rng : numpy.random.Generator
        Seeded by the scenario, for choosers that draw (a cross-fitting's folds...).
    tune_split, eval_split : str
    """

    def __init__(self, pipeline, values, rng: np.random.Generator):
        self.pipeline = pipeline
        self.values = values
        self.rng = rng
        self.tune_split, self.eval_split = "val", "test"
        self._recommendation = None

    def recommendation(self):
        """``vc.recommend(pipeline, values)``, computed once per scenario."""
        if self._recommendation is None:
            self._recommendation = vc.recommend(self.pipeline, self.values)
        return self._recommendation

    def baseline(self, split: str | None = None) -> float:
        """Value per item of handing every item over, on a labelled split (default the evaluated one)."""
        model = next(iter(self.pipeline.runs))
        predictions = self.pipeline.predictions(model, split or self.eval_split)
        return vc.evaluate(vc.Policy("threshold", threshold=None), predictions,
                           self.pipeline.values_for(model, self.values)).value_per_item


Choice = tuple  # (model or None, Policy or None, extra dict)
Chooser = Callable[[object, object, ChoiceContext], Choice]


def choose_product(pipeline, values, context: ChoiceContext) -> Choice:
    """``vc.recommend``: the product's recommendation as it stands."""
    r = context.recommendation()
    return r.model, r.policy, {"choice": r.choice, "recommendation": r}


def choose_naive(pipeline, values, context: ChoiceContext) -> Choice:
    """One threshold per model tuned on the tuning split, the best on the evaluated split; none unless above
    handing over there."""
    best = None
    for model in pipeline.runs:
        matrix = pipeline.values_for(model, values)
        tune = pipeline.predictions(model, context.tune_split)
        policy = vc.fit_policy("threshold", vc.presort(tune), matrix)
        per_item = vc.evaluate(policy, pipeline.predictions(model, context.eval_split), matrix).value_per_item
        if best is None or per_item > best[2]:
            best = (model, policy, per_item)
    if best[2] <= context.baseline():
        return None, None, {"per_item": best[2]}
    return best[0], best[1], {"per_item": best[2]}


def choose_best_on_test(pipeline, values, context: ChoiceContext) -> Choice:
    """The product's candidate with the highest value on the evaluated split; none unless above handing over."""
    candidates = context.recommendation().candidates
    if not candidates:
        return None, None, {}
    best = max(candidates, key=lambda c: c.per_item)  # the first of equal ones, in the verdict's order
    if best.per_item <= best.baseline:
        return None, None, {"per_item": best.per_item}
    return best.model, best.policy, {"per_item": best.per_item}


CHOOSERS: dict[str, Chooser] = {
    "product": choose_product,
    "naive": choose_naive,
    "best_on_test": choose_best_on_test,
}


def resolve_chooser(name: str) -> Chooser:
    """A registered chooser, or ``module:function`` imported (the module on ``sys.path``)."""
    if name in CHOOSERS:
        return CHOOSERS[name]
    if ":" in name:
        module, attribute = name.split(":", 1)
        return getattr(importlib.import_module(module), attribute)
    raise ValueError(f"unknown chooser {name!r}: one of {sorted(CHOOSERS)} or module:function")


# --------------------------------------------------------------- serving path
def served_actions(pipeline, recommendation, values, truth: Truth) -> tuple[str | None, np.ndarray]:
    """What the product's own path does with the new items: (the model served or None, action indices).

    The policy JSON as ``report --json`` builds it (every model with its recommended rule, the
    recommendation named), written to text, read back by ``valuecore.serving.load_policy`` (which serves
    the recommended model, or hands every item over when the document recommends none) and applied to the
    new items' reported probabilities.
    """
    from valuecore.serving import load_policy

    document, _ = pipeline.document(list(pipeline.runs), vc.RECOMMENDED_RULE, values, with_interval=False)
    reason = vc.wording.recommendation_reason(recommendation, "$")
    document, _ = vc.recommended_document(pipeline, document, recommendation, values, reason, with_interval=False)
    data = json.loads(document.to_json())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "recommends no model": the served policy then hands over
        served = load_policy(data)
    if served.model is None:  # the runtime's default for "no model (yet)": decide on the named model's outputs
        name = (data["recommendation"].get("would_settle") or {}).get("model") or data["models"][0]["model"]
        labels = served.decide(truth.predictions[name].proba, abstain=None)
    else:
        labels = served.decide(truth.predictions[served.model].proba, abstain=None)
    lookup = {c: i for i, c in enumerate(served.classes)}
    codes = np.array([len(served.classes) if a is None else lookup[a] for a in labels.tolist()], dtype=np.int64)
    return served.model, codes


def serving_mismatches(pipeline, recommendation, values, truth: Truth) -> int:
    """New items on which the JSON path acts otherwise than ``Policy.decide`` of the recommendation in memory
    (a served model other than the recommended one counts every item)."""
    served, actions = served_actions(pipeline, recommendation, values, truth)
    if served != recommendation.model:
        return truth.n
    if recommendation.model is None:  # every item handed over
        n_classes = next(iter(truth.predictions.values())).n_classes
        return int(np.sum(actions != n_classes))
    expected = truth.actions(recommendation.model, recommendation.policy, values)
    return int(np.sum(actions != expected))


# ----------------------------------------------------------------- scoring
ROW_FIELDS = ("kind", "cost", "n", "seed", "cell", "n_classes", "rare", "n_models", "chooser", "model", "rule",
              "value", "se", "baseline", "oracle", "oracle_se", "oracle_name", "regret", "regret_se",
              "loses_money", "no_model", "oracle_earns", "cautious_miss", "beats_oracle", "serving_mismatch",
              "note", "seconds")


def score_choice(scenario: Scenario, best: Oracle, model, policy) -> dict:
    """The figures of one choice: true value and error, regret against the oracle, loses money, no model."""
    truth = scenario.truth
    actions = None if policy is None else truth.actions(model, policy, scenario.values)
    gains = truth.item_gains(model if policy is not None else None, actions)
    value, se = truth.value(gains)
    regret_gains = best.item_gains - gains
    regret_se = float(regret_gains.std(ddof=1) / math.sqrt(truth.n))
    no_model = policy is None
    oracle_earns = best.value > truth.baseline + 2 * best.se
    return {
        "model": model if policy is not None else None,
        "rule": None if policy is None else policy.kind,
        "value": value,
        "se": se,
        "regret": best.value - value,
        "regret_se": regret_se,
        "loses_money": bool(value < truth.baseline - 2 * se),
        "no_model": no_model,
        "oracle_earns": bool(oracle_earns),
        "cautious_miss": bool(no_model and oracle_earns),
        "beats_oracle": bool(value - best.value > max(2 * regret_se, 1e-9 * (1 + abs(best.value)))),
    }


def run_scenario(cell: Cell, seed: int, choosers: Sequence[str], *, n_new: int = N_NEW,
                 calibration: str = "none", serve_check: bool = False) -> list[dict]:
    """One scenario, every chooser scored: one row (a dict of :data:`ROW_FIELDS`) per chooser."""
    scenario = make_scenario(cell, seed, n_new)
    pipeline = StudyPipeline(scenario.runs, calibration)
    context = ChoiceContext(pipeline, scenario.values, np.random.default_rng([int(seed), cell.code, 1]))
    choices = {}
    for name in choosers:
        start = time.process_time()
        model, policy, extra = resolve_chooser(name)(pipeline, scenario.values, context)
        choices[name] = (model, policy, extra or {}, time.process_time() - start)
    recommendation = context.recommendation()  # the oracle weighs every candidate the product fitted
    best = oracle(scenario.truth, scenario.values, [(c.model, c.policy) for c in recommendation.candidates])
    world = scenario.world
    common = {"kind": cell.kind, "cost": cell.cost, "n": cell.n, "seed": seed, "cell": cell.label,
              "n_classes": world.n_classes, "rare": world.rare is not None, "n_models": len(world.models),
              "baseline": scenario.truth.baseline, "oracle": best.value, "oracle_se": best.se,
              "oracle_name": best.name}
    rows = []
    for name, (model, policy, extra, seconds) in choices.items():
        row = {**common, "chooser": name, **score_choice(scenario, best, model, policy), "seconds": seconds,
               "serving_mismatch": None, "note": extra.get("choice", "")}
        if serve_check and "recommendation" in extra:
            row["serving_mismatch"] = serving_mismatches(pipeline, extra["recommendation"], scenario.values,
                                                         scenario.truth)
        rows.append(row)
    return rows


def _run_task(task) -> list[dict]:
    cell, seed, choosers, options = task
    return run_scenario(cell, seed, choosers, **options)


def run_grid(cells: Sequence[Cell], seeds: Iterable[int], choosers: Sequence[str], *, n_new: int = N_NEW,
             calibration: str = "none", serve_every: int = 0, workers: int = 1,
             progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """Every (cell, seed) scenario, every chooser: the rows, in the order of ``cells`` then ``seeds``.

    ``serve_every``: check the JSON/serving path on the scenarios whose seed is a multiple of it (0: never).
    ``workers`` > 1 runs scenarios in that many processes (the rows are the same).
    """
    seeds = list(seeds)
    tasks = [(cell, seed, tuple(choosers), {"n_new": n_new, "calibration": calibration,
                                            "serve_check": bool(serve_every) and seed % serve_every == 0})
             for cell in cells for seed in seeds]
    rows = []
    if workers <= 1:
        for done, task in enumerate(tasks, 1):
            rows.extend(_run_task(task))
            if progress:
                progress(done, len(tasks))
        return rows
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        for done, result in enumerate(pool.map(_run_task, tasks), 1):
            rows.extend(result)
            if progress:
                progress(done, len(tasks))
    return rows


# ----------------------------------------------------------------- summary
SUMMARY_FIELDS = ("group", "chooser", "scenarios", "loses_money", "worst_loss", "mean_regret", "regret_se",
                  "regret_vs_naive", "no_model", "cautious_misses", "caution_lost", "beats_oracle",
                  "serving_checked", "serving_mismatched")


def _summary_row(group: str, chooser: str, rows: list[dict], naive: list[dict] | None) -> dict:
    regrets = np.array([r["regret"] for r in rows])
    misses = [r for r in rows if r["cautious_miss"]]
    served = [r for r in rows if r["serving_mismatch"] is not None]
    naive_regret = None if not naive else float(np.mean([r["regret"] for r in naive]))
    return {
        "group": group,
        "chooser": chooser,
        "scenarios": len(rows),
        "loses_money": sum(r["loses_money"] for r in rows) / len(rows),
        "worst_loss": min(r["value"] - r["baseline"] for r in rows),
        "mean_regret": float(regrets.mean()),
        "regret_se": float(regrets.std(ddof=1) / math.sqrt(len(rows))) if len(rows) > 1 else math.nan,
        "regret_vs_naive": (float(regrets.mean()) / naive_regret) if naive_regret else math.nan,
        "no_model": sum(r["no_model"] for r in rows) / len(rows),
        "cautious_misses": len(misses),
        "caution_lost": float(np.mean([r["oracle"] - r["baseline"] for r in misses])) if misses else 0.0,
        "beats_oracle": sum(r["beats_oracle"] for r in rows),
        "serving_checked": len(served),
        "serving_mismatched": sum(r["serving_mismatch"] > 0 for r in served),
    }


def summarize(rows: list[dict], choosers: Sequence[str] | None = None) -> list[dict]:
    """Per cell (values x n) and chooser, then the aggregates: all, the use cases, the matrices, and
    "costly" (use cases with omega >= 20 and the rare costly matrices)."""
    choosers = list(dict.fromkeys(r["chooser"] for r in rows)) if choosers is None else list(choosers)
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(f"{r['cell']}, n={r['n']}", []).append(r)
    costly = [r for r in rows if Cell(r["kind"], r["cost"], r["n"]).costly]
    aggregates = {
        "all": rows,
        "use cases": [r for r in rows if r["kind"] == "use_case"],
        "matrices": [r for r in rows if r["kind"] != "use_case"],
        "omega >= 20 (and rare x cost)": costly,
    }
    out = []
    for group, members in [*groups.items(), *aggregates.items()]:
        naive = [r for r in members if r["chooser"] == "naive"]
        for chooser in choosers:
            chosen = [r for r in members if r["chooser"] == chooser]
            if chosen:
                out.append(_summary_row(group, chooser, chosen, naive))
    return out


def format_table(summary: list[dict]) -> str:
    """The summary as fixed-width text, one line per (group, chooser)."""
    header = (f"{'cell':<30} {'chooser':<14} {'scen':>4} {'loses':>6} {'worst':>8} {'regret':>8} {'±se':>7} "
              f"{'/naive':>6} {'none':>5} {'miss':>4} {'lost':>7} {'>orc':>4} {'served':>7}")
    lines = [header, "-" * len(header)]
    previous = None
    for s in summary:
        if previous is not None and s["group"] != previous:
            lines.append("")
        previous = s["group"]
        ratio = "" if math.isnan(s["regret_vs_naive"]) else f"{s['regret_vs_naive']:.2f}"
        served = f"{s['serving_mismatched']}/{s['serving_checked']}" if s["serving_checked"] else ""
        lines.append(
            f"{s['group']:<30} {s['chooser']:<14} {s['scenarios']:>4} {s['loses_money']:>6.1%} "
            f"{s['worst_loss']:>8.3f} {s['mean_regret']:>8.4f} {s['regret_se']:>7.4f} {ratio:>6} "
            f"{s['no_model']:>5.0%} {s['cautious_misses']:>4} {s['caution_lost']:>7.4f} {s['beats_oracle']:>4} "
            f"{served:>7}")
    return "\n".join(lines)
