"""Pure chart functions: tidy DataFrame in, Altair chart out.

Every function here is testable without Streamlit. Models keep one colour on
every chart: the colour scale's domain is the list of *all* loaded models in
a fixed order, not just the ones on a given chart.
"""

from ._style import OKABE_ITO, model_color, money_text

__all__ = ["OKABE_ITO", "model_color", "money_text"]
