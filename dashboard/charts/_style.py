"""Colours and formats shared by all charts."""

from __future__ import annotations

import altair as alt

# Okabe & Ito's colour-blind-safe palette, yellow moved last (weak on white).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")


def model_color(models, *, legend_title: str = "Model") -> alt.Color:
    """A colour encoding that gives each model the same colour on every chart.

    Parameters
    ----------
    models : sequence of str
        All loaded models, in a fixed order (the domain of the scale).
    """
    models = list(models)
    return alt.Color("model:N", scale=alt.Scale(domain=models, range=model_palette(models)), title=legend_title)


def model_palette(models) -> list[str]:
    """The colour of each model, in order: the range of :func:`model_color`'s scale."""
    return [OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(list(models)))]


def money_text(amounts, currency: str = "$", digits: int = 2) -> list[str]:
    """Amounts as text in the user's currency ("-$1.20"), for tooltips (Vega formats know only "$")."""
    out = []
    for amount in amounts:
        if amount is None or amount != amount:  # None or NaN
            out.append("–")
            continue
        sign = "-" if amount < 0 else ""
        out.append(f"{sign}{currency}{abs(amount):,.{digits}f}")
    return out


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


class LayerChart(alt.LayerChart):
    """An ``alt.LayerChart`` whose ``to_dict`` does not validate unless asked to."""

    def to_dict(self, validate: bool = False, *, format="vega-lite", ignore=None, context=None):  # noqa: A002
        return super().to_dict(validate, format=format, ignore=ignore, context=context)


def view(data, mark: str, mark_props: dict | None = None, **channels) -> alt.Chart:
    """``alt.Chart(data).mark_<mark>(**mark_props).encode(**channels)``, without re-parsing the channels.

    Channels must be Altair channel objects (``alt.X("omega:Q", ...)``) or
    ``alt.value(...)``, so the type code is always explicit.
    """
    return alt.Chart(data, mark=alt.MarkDef(type=mark, **(mark_props or {})), encoding=alt.FacetedEncoding(**channels))


def layer(*charts: alt.Chart, **properties) -> LayerChart:
    """Layer charts (like ``a + b + c``) into one chart that Streamlit serialises without re-validating."""
    return LayerChart(layer=list(charts), **properties)
