"""Colours and formats shared by all charts."""

from __future__ import annotations

import altair as alt

from valuecore import chartspecs

# One palette for the app and the report: valuecore.chartspecs owns it (Okabe & Ito, yellow last).
OKABE_ITO = chartspecs.PALETTE


def model_color(models, *, legend_title: str = "Model") -> alt.Color:
    """A colour encoding that gives each model the same colour on every chart.

    Parameters
    ----------
    models : sequence of str
        All loaded models, in a fixed order (the domain of the scale).
    """
    models = list(models)
    return alt.Color("model:N", scale=alt.Scale(domain=models, range=model_palette(models)), title=legend_title)


model_palette = chartspecs.model_palette  # the colour of each model, in order: the range of model_color's scale


def money_text(amounts, currency: str = "$", digits: int = 2) -> list[str]:
    """Amounts as text in the user's currency, as ``valuecore.wording.money`` writes them everywhere ("-$1.20",
    "1.20 CHF"), for tooltips and labels (Vega formats know only "$")."""
    from valuecore.wording import money

    return [money(amount, currency.strip(), digits) for amount in amounts]


def model_domain(models, frame=None) -> list[str]:
    """The colour domain: all loaded models in order, plus any model of ``frame`` not among them."""
    domain = list(models) if models is not None else []
    if frame is not None and "model" in frame:
        domain += [m for m in dict.fromkeys(frame["model"].astype(str)) if m not in domain]
    return domain


# ---------------------------------------------------------------------------
# Speed. Streamlit serialises every chart on every rerun, and two Altair steps
# dominate a rerun: ``.encode()`` re-parses each channel against the schema,
# and ``to_dict()`` validates the whole spec against the Vega-Lite JSON schema
# (30-50 ms per layered chart here). The chart functions therefore build
# layers with :func:`view` (channels passed to the constructor) and combine
# them with :func:`layer`, whose chart skips validation when serialised. The
# specs are validated where they are made: tests/test_charts_core.py calls
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


def view(data, mark: str, mark_props: dict | None = None, **channels) -> alt.Chart:
    """``alt.Chart(data).mark_<mark>(**mark_props).encode(**channels)``, without re-parsing the channels.

    Channels must be Altair channel objects (``alt.X("omega:Q", ...)``) or
    ``alt.value(...)``, so the type code is always explicit.
    """
    return alt.Chart(data, mark=alt.MarkDef(type=mark, **(mark_props or {})), encoding=alt.FacetedEncoding(**channels))


def layer(*charts: alt.Chart, **properties) -> LayerChart:
    """Layer charts (like ``a + b + c``) into one chart that Streamlit serialises without re-validating."""
    return LayerChart(layer=list(charts), **properties)


def _views(layers: list[dict]) -> list[alt.Chart]:
    return [alt.Chart(**{**view, "encoding": alt.FacetedEncoding(**view["encoding"])}) for view in layers]


def from_spec(spec: dict) -> LayerChart | FacetChart | Chart:
    """A Vega-Lite dict of :mod:`valuecore.chartspecs` as an Altair chart: the spec the report draws.

    The layers stay plain dicts and the data rows are attached as they are: ``LayerChart.from_dict`` parses
    every piece into schema objects, which took 35 ms for a VOC chart's skeleton (and over a second with 2,000
    inline rows), and ``FacetChart.from_dict`` 300 to 450 ms for the Calibration page's panels, where the spec
    is already checked (tests/test_charts_core.py and tests/test_chartspecs.py validate it).
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
