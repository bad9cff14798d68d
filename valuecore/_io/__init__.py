"""The input layer: run files (CSV, Parquet) read into runs, and logs too large for memory aggregated.

``runfiles`` (a package: discovery, reading, cells, parse) reads and checks a run file in memory (pandas,
pyarrow); ``aggregate`` (a package: sources, SQL, engines, checks) reduces a log too large for memory to an
ordinary run file with DuckDB or Spark, making the same checks in SQL; ``format`` is what both share (the
format's constants, the problems report, a header's checks); ``aggregate_options`` holds the aggregation's
options without numpy (the command line's parser needs only these); ``fastload`` holds the loader's vectorised
hot paths; ``columns`` describes a run file's columns once (names, aliases, kinds, and each row check with its
message, written side by side in numpy and in SQL), read by both ``runfiles`` and ``aggregate``. The public
names live in ``valuecore.runs`` and ``valuecore.aggregation`` (and the everyday ones at the top of the
package). Beside them, what every reader and writer of files shares: ``limits`` (resource limits, checked before
the expensive work), ``paths`` (an output never replaces an input; a file stays inside its roots), ``safecsv``
(CSV cells a spreadsheet opens as text) and ``lazy`` (a module imported on first use). ``sqltext`` is what the
aggregation's SQL is built from: sqlglot's expressions, or DuckDB's text without sqlglot.

May import: _model, _engine (the loader radix-sorts class codes with the engine's narrow integers; an
aggregate's resolution bound is read off the engine's cumulative gain).
"""
