"""The libraries the analyst desk runs on, checked on import.

They come with the ``analyst`` extra, not with the base install. Every way into the
desk (its Gymnasium environment, its entry in the ``batchgate`` command) imports
this module first, so that without the extra the error is one line naming it.
DuckDB serves the stores, polars computes the references, pyarrow writes the
Parquet lake; ``tpchgen-cli`` (level 7's data) and chDB are checked where used.
"""

from batchgate_gym.kernel.extras import require

from . import EXTRA

MODULES = ("duckdb", "polars", "pyarrow")

require("the analyst desk (batchgate_gym/AnalystDesk-v0, --desk analyst)", EXTRA, MODULES)
