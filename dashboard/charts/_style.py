"""Colours and formats shared by all charts."""

from __future__ import annotations

import altair as alt

from valuecore import chartspecs

# One palette for the app and the report: valuecore.chartspecs owns it (Okabe & Ito, yellow last).
OKABE_ITO = chartspecs.PALETTE


model_palette = chartspecs.model_palette  # the colour of each model, in order


# ---------------------------------------------------------------------------
# Speed. Streamlit serialises every chart on every rerun, and two Altair steps
# dominate a rerun: ``.encode()`` re-parses each channel against the schema,
# and ``to_dict()`` validates the whole spec against the Vega-Lite JSON schema
# (30-50 ms per layered chart here). Every chart is therefore a plain spec of
# valuecore.chartspecs handed to :func:`from_spec`, whose charts keep the
# views as given and skip validation when serialised. The specs are validated
# where they are made: tests/test_charts_*.py and tests/app/test_chartspecs.py call
# ``to_dict(validate=True)`` on every chart function.


class _PlainRows:
    """Rows given as plain JSON-ready dicts (``_plain_datasets``, from :func:`from_spec`) join the output's
    ``datasets`` after serialisation: walking thousands of rows again tripled the time of ``to_dict``."""

    _plain_datasets: dict = {}

    def to_dict(self, validate: bool = False, *, format="vega-lite", ignore=None, context=None):  # noqa: A002
        out = super().to_dict(validate, format=format, ignore=ignore, context=context)
        if self._plain_datasets:
            out["datasets"] = {**out.get("datasets", {}), **self._plain_datasets}
        return out

    def copy(self, deep=True, ignore=None):  # .properties() and friends copy: keep the rows
        out = super().copy(deep=deep, ignore=ignore)
        object.__setattr__(out, "_plain_datasets", self._plain_datasets)
        return out


class LayerChart(_PlainRows, alt.LayerChart):
    """An ``alt.LayerChart`` whose ``to_dict`` does not validate unless asked to."""


class FacetChart(_PlainRows, alt.FacetChart):
    """An ``alt.FacetChart`` that serialises like :class:`LayerChart`."""


class Chart(_PlainRows, alt.Chart):
    """A single-view ``alt.Chart`` that serialises like :class:`LayerChart` (validated only when asked)."""


def _views(layers: list[dict]) -> list[alt.Chart]:
    return [alt.Chart(**{**view, "encoding": alt.FacetedEncoding(**view["encoding"])}) for view in layers]


def from_spec(spec: dict) -> LayerChart | FacetChart | Chart:
    """A Vega-Lite dict of :mod:`valuecore.chartspecs` as an Altair chart: the spec the report draws.

    The layers stay plain dicts and the data rows are attached as they are: ``LayerChart.from_dict`` parses
    every piece into schema objects, which took 35 ms for a VOC chart's skeleton (and over a second with 2,000
    inline rows), and ``FacetChart.from_dict`` 300 to 450 ms for the Calibration page's panels, where the spec
    is already checked (tests/app/test_charts_core.py and tests/app/test_chartspecs.py validate it).
    """
    top = {k: v for k, v in spec.items() if k not in ("$schema", "datasets", "layer", "spec")}
    if "facet" in spec:  # Altair wants a chart object as the panel: a layer of plain views
        inner = spec["spec"]
        panel = alt.LayerChart(layer=_views(inner["layer"]), **{k: v for k, v in inner.items() if k != "layer"})
        chart = FacetChart(spec=panel, **top)
    elif "layer" in spec:
        chart = LayerChart(layer=_views(spec["layer"]), **top)
    else:  # a single view
        chart = Chart(**{**top, "encoding": alt.FacetedEncoding(**spec["encoding"])})
    object.__setattr__(chart, "_plain_datasets", spec.get("datasets", {}))  # not a Vega-Lite property
    return chart
