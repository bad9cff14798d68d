"""The aggregation's options and the measure of its spill, importable without numpy or pandas (the CLI's parser
needs only the options)."""

import os

PERIODS = ("day", "week", "month")
ENGINES = ("duckdb", "spark")
DEFAULT_MAX_GROUPS = 2_000_000
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_MAX_TEMP_SIZE = "10GB"  # DuckDB's spill folder never grows past this (a run cannot fill a disk)


def bytes_on_disk(folder: str) -> int:
    """Bytes allocated on disk to the files under ``folder`` (spill files may be sparse)."""
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(base, name)).st_blocks * 512
            except OSError:
                pass  # removed by DuckDB meanwhile
    return total
