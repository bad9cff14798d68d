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
    palette = [OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(models))]
    return alt.Color("model:N", scale=alt.Scale(domain=models, range=palette), title=legend_title)
