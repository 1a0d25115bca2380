"""AnalystDesk: business questions over a shop's data, in one of several real engines.

An analyst is asked a question about a procedural marketplace (customers, sellers,
products, orders, items, payments, reviews, with the dirt real exports carry). The
data sits in a store the environment starts itself: the kernel's guarded SQLite, a
read-only DuckDB database, a Parquet lake or raw CSV and JSON files (both read
through DuckDB), or, asked for by name, ClickHouse (chDB), a PostgreSQL server or
Iceberg tables read through DuckDB. The agent discovers the schema, runs bounded read-only queries and
ends with an answer and the queries that support it, or declines a question the
data cannot answer. The reference answer is computed apart, with polars over a
canonical Parquet copy; the grader re-runs the cited queries.

The modules, one reason to change each, in three subpackages and the episode's own:

* :mod:`.datasets` the data: the seeded marketplace and its dirt (:mod:`.datasets.market`),
  TPC-H (:mod:`.datasets.tpch`), the files every store reads (:mod:`.datasets.canonical`);
* :mod:`.questions` the templates (levels 1 to 7, conventions, answer types, tolerances) and
  their expected answers, in polars, sharing nothing with any store's SQL;
* :mod:`.engines` the stores, each bounded and read-only by construction, and how to open one;
* :mod:`.cases` the case format; :mod:`.generator` cases and splits; :mod:`.sources` where an
  environment's cases come from (a split, a file, procedural seeds);
* :mod:`.tools`, :mod:`.prompt`, :mod:`.world` the tools, the task text, one episode;
* :mod:`.grader` the score from the log, :mod:`.counterfactual` the copies of the data the
  evidence is re-run on, :mod:`.replay` a re-run of a log;
* :mod:`.ablation` each score term taken out, and which policies' order that changes;
* :mod:`.dependencies` the extra's libraries checked first; :mod:`.spec` the desk's entry
  in the registry; :mod:`.testing` the tampering and episode machines the tests use.
"""

# The extra of setup.cfg that brings the desk's libraries (the base install lacks them);
# :mod:`.dependencies` checks them before anything else of the desk is imported.
EXTRA = "analyst"

ENV_ID = "batchgate_gym/AnalystDesk-v0"
GYMNASIUM_IDS = {ENV_ID: "batchgate_gym.envs.analyst.text:AnalystDeskEnv"}
TURNS = 16  # an analyst question's turn budget
MAX_EPISODE_STEPS = {ENV_ID: TURNS}  # for Gymnasium's spec and TimeLimit, with the default arguments
