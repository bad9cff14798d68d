"""Pure chart functions: tidy DataFrame in, Altair chart out.

Every chart is a plain Vega-Lite spec of :mod:`valuecore.chartspecs` (the one
the HTML report draws where it shows the same figure) wrapped in Altair by
``_style.from_spec``; every function here is testable without Streamlit.
Models keep one colour on every chart: the colour scale's domain is the list
of *all* loaded models in a fixed order, not just the ones on a given chart.
"""

from ._style import OKABE_ITO, model_palette

__all__ = ["OKABE_ITO", "model_palette"]
