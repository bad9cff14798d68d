"""``Policy``'s dataclass methods, written out in ``policy.py`` (the decorator's generated ones are compiled at
import, about 0.6 ms of a fresh process), against those the decorator generates for the same fields and checks:
construction, repr, equality, hash, the refusal to assign or delete a field, ``dataclasses.replace``, ``fields``,
``asdict``, pickling and the refusals of bad fields."""

from __future__ import annotations

import dataclasses
import inspect
import math
import pickle

import pytest

from valuecore._engine.policy import Policy

WRITTEN_OUT = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "_fields")
DECORATOR_MADE = ("__dict__", "__weakref__", "__dataclass_fields__", "__dataclass_params__", "__match_args__")


def generated() -> type:
    """A class with Policy's fields, defaults and checks, its methods made by ``@dataclass(frozen=True)``."""
    namespace = {name: value for name, value in vars(Policy).items() if name not in WRITTEN_OUT + DECORATOR_MADE}
    for f in dataclasses.fields(Policy):
        namespace.pop(f.name, None)
        if f.default is not dataclasses.MISSING:
            namespace[f.name] = dataclasses.field(default=f.default)
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f.name] = dataclasses.field(default_factory=f.default_factory)
    return dataclasses.dataclass(frozen=True)(type("Policy", (), namespace))


Generated = generated()

FIELDS = [
    dict(kind="threshold", threshold=0.5),
    dict(kind="threshold"),
    dict(kind="threshold", threshold=1),
    dict(kind="accept_all"),
    dict(kind="expected_value", calibration={"method": "temperature", "temperature": 1.5}),
    dict(kind="calibrated_threshold", threshold=0.25, calibration=None),
    dict(kind="class_thresholds", class_thresholds=(("a", 0.5), ("b", None))),
    dict(kind="class_thresholds", class_thresholds={"a": 0.25, "b": 1}),
    dict(kind="calibrated_class_thresholds", class_thresholds=[("x", 0.1)]),
    dict(kind="two_tier", threshold=0.9, assist_threshold=0.6,
         assisted={"v_confirmed_correct": 1.0, "v_confirmed_wrong": -1.0, "cost": 0.2}),
    dict(kind="two_tier", threshold=0.9, assist_threshold=0.5,
         assisted={"v_confirmed_correct": 1.0, "v_confirmed_wrong": -1.0, "cost": 0.2}),
    dict(kind="shortlist", threshold=0.8, shortlist={"rule": "top_k", "k": 2, "level": None, "list_threshold": 0.4,
                                                     "values": {2: [0.5, -1.0]}}),
    dict(kind="shortlist", threshold=0.8, shortlist={"rule": "top_k", "k": 3, "level": None, "list_threshold": 0.4,
                                                     "values": {3: [0.5, -1.0]}}),
]


def made(cls, fields: dict, positional: bool):
    if positional:
        names = [f.name for f in dataclasses.fields(Policy)]
        return cls(*[fields.get(name, None if name != "calibration" else None) for name in names])
    return cls(**fields)


@pytest.mark.parametrize("positional", [False, True])
@pytest.mark.parametrize("fields", FIELDS)
def test_policy_behaves_as_the_generated_dataclass(fields, positional):
    mine, theirs = made(Policy, fields, positional), made(Generated, fields, positional)
    assert repr(mine) == repr(theirs)
    assert list(vars(mine).items()) == list(vars(theirs).items())
    assert hash(mine) == hash(theirs)
    assert mine == made(Policy, fields, not positional) and not (mine != made(Policy, fields, positional))
    assert mine.__eq__(theirs) is NotImplemented and theirs.__eq__(mine) is NotImplemented
    assert mine != theirs and mine.__eq__(fields) is NotImplemented
    for name in ("threshold", "kind", "other"):
        for action in (lambda p: setattr(p, name, 0.5), lambda p: delattr(p, name)):
            with pytest.raises(dataclasses.FrozenInstanceError) as refused_mine:
                action(mine)
            with pytest.raises(dataclasses.FrozenInstanceError) as refused_theirs:
                action(theirs)
            assert str(refused_mine.value) == str(refused_theirs.value)
    assert pickle.loads(pickle.dumps(mine)) == mine and hash(pickle.loads(pickle.dumps(mine))) == hash(mine)
    assert dataclasses.asdict(mine) == dataclasses.asdict(theirs)
    assert repr(dataclasses.replace(mine)) == repr(mine)
    assert repr(dataclasses.replace(mine, calibration={"method": "isotonic"})) == repr(
        dataclasses.replace(theirs, calibration={"method": "isotonic"}))


def test_every_other_pair_of_policies_differs_as_the_generated_ones_do():
    mine = [Policy(**fields) for fields in FIELDS]
    theirs = [Generated(**fields) for fields in FIELDS]
    for i in range(len(FIELDS)):
        for j in range(len(FIELDS)):
            assert (mine[i] == mine[j]) == (theirs[i] == theirs[j]), (FIELDS[i], FIELDS[j])
            assert (hash(mine[i]) == hash(mine[j])) == (hash(theirs[i]) == hash(theirs[j]))


def test_the_dataclass_description_is_the_generated_ones():
    assert dataclasses.is_dataclass(Policy)
    assert [(f.name, f.type, f.default) for f in dataclasses.fields(Policy)] == [
        (f.name, f.type, f.default) for f in dataclasses.fields(Generated)]
    assert Policy.__match_args__ == Generated.__match_args__
    mine, theirs = inspect.signature(Policy).parameters, inspect.signature(Generated).parameters
    assert [(p.name, p.kind) for p in mine.values()] == [(p.name, p.kind) for p in theirs.values()]
    # Every default the same but the calibration's: None, which __post_init__ makes what the factory makes.
    assert [p.default for p in mine.values() if p.name != "calibration"] == [
        p.default for p in theirs.values() if p.name != "calibration"]
    assert Policy("threshold").calibration == Generated("threshold").calibration == {"method": "none"}


class Subclass(Policy):
    pass


def test_a_subclass_may_hold_other_attributes_as_with_the_generated_methods():
    sub = Subclass("threshold", threshold=0.5)
    sub.note = "kept"
    del sub.note
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'threshold'"):
        sub.threshold = 0.25
    assert repr(sub).startswith("Subclass(kind='threshold', threshold=0.5,") and sub != Policy("threshold", 0.5)


@pytest.mark.parametrize("fields", [
    dict(kind="threshold", threshold=math.nan),
    dict(kind="threshold", threshold="0.5"),
    dict(kind="thresholds"),
    dict(kind="class_thresholds"),
    dict(kind="class_thresholds", class_thresholds=(0.5, 0.25)),
    dict(kind="accept_all", threshold=0.5),
    dict(kind="threshold", calibration={"temperature": 2.0}),
    dict(kind="two_tier", threshold=0.5),
    dict(kind="threshold", assist_threshold=0.5),
    dict(kind="shortlist", threshold=0.5),
])
def test_refusals_are_the_generated_ones(fields):
    with pytest.raises(ValueError) as mine:
        Policy(**fields)
    with pytest.raises(ValueError) as theirs:
        Generated(**fields)
    assert str(mine.value) == str(theirs.value)


def test_no_method_of_policy_is_compiled_at_import():
    # The decorator's generated methods are compiled from strings (their file "<string>"): none here.
    for name in WRITTEN_OUT:
        assert getattr(Policy, name).__code__.co_filename == inspect.getfile(Policy), name
    compiled = [name for name, value in vars(Policy).items()
                if inspect.isfunction(value) and value.__code__.co_filename != inspect.getfile(Policy)]
    assert compiled == []
