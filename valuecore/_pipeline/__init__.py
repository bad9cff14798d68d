"""The policy pipeline and its JSON: from runs and settings to the policy document a server reads.

``pipeline`` (choose splits, fit the recalibration, sort, fit the policy, evaluate, interval: the
one pipeline behind the dashboard, the command line and the export, with an optional cache handed
in), ``policy_json`` (the document, its schema and its checks), ``build`` (the document built from
runs), ``adapted`` (the pipeline re-tuned for the class mix of an unlabelled split) and ``reviewers``
(documents that price hand-offs to reviewers who are not always right), ``segments`` (documents with a
threshold per segment, and their ``apply``).

May import: _model, _io, _engine, _stats, _decide, _monitor.
"""
