"""The command line, ``python -m valuecore``: arguments in, the core's numbers out in words.

``parser`` (every command's options, importable without the commands: ``COMMAND --help`` is answered
there), ``commands`` (the commands validate, report, apply, table, voc, and ``main``), ``common`` (what the
sub-commands share: exit codes, argument types, loading, values), ``monitor``, ``aggregate`` and
``reviewers`` (the sub-commands and options built on ``common``), ``segments`` (``report --segment`` and
the per-segment part of ``apply``).

May import: _model, _io, _engine, _stats, _decide, _monitor, _pipeline, _serve, and the presentation
modules (``wording``, ``chartspecs``, ``report``).
"""
