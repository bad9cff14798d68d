"""The aggregation's options, importable without numpy or pandas (the CLI's parser needs only these)."""

PERIODS = ("day", "week", "month")
ENGINES = ("duckdb", "spark")
DEFAULT_MAX_GROUPS = 2_000_000
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_MAX_TEMP_SIZE = "10GB"  # DuckDB's spill folder never grows past this (a run cannot fill a disk)
