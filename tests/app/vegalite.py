"""Checks a chart spec is valid Vega-Lite, against the schema Altair ships (a dependency of Streamlit)."""

from __future__ import annotations

import functools

import jsonschema


@functools.cache
def _validator():
    from altair.vegalite.v6.schema.core import load_schema

    schema = load_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def valid(spec: dict) -> dict:
    """``spec`` itself, once checked against the Vega-Lite schema (a ``jsonschema.ValidationError`` if not)."""
    _validator().validate(spec)
    return spec
