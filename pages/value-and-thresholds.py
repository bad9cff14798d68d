"""/value-and-thresholds on a fresh server: Streamlit's folder navigation runs this file; it hands the run to app.py.

The page itself is app.py's page at this URL path (see dashboard.hand_over_to_the_frame).
"""

from dashboard import hand_over_to_the_frame

hand_over_to_the_frame()
