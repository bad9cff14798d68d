"""Serving: a stored policy applied to new model outputs.

``policy`` (the numpy-only decision path: a policy JSON loaded and ready to decide),
``estimator`` (a scikit-learn classifier that abstains as the policy says) and ``mlflow_bridge``
(MLflow both ways: a model that carries its policy, and logged runs as a data source).

May import: _model, _io, _engine, _pipeline.
"""
