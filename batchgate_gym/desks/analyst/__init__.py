"""AnalystDesk: business questions over a shop's data, in one of several real engines.

An analyst is asked a question about a procedural marketplace (customers, sellers,
products, orders, items, payments, reviews, with the dirt real exports carry). The
data sits in a store the environment starts itself: the kernel's guarded SQLite, a
read-only DuckDB database, a Parquet lake or raw CSV and JSON files (both read
through DuckDB). The agent discovers the schema, runs bounded read-only queries and
ends with an answer and the queries that support it, or declines a question the
data cannot answer. The reference answer is computed apart, with polars over a
canonical Parquet copy; the grader re-runs the cited queries.

The modules, one reason to change each:

* :mod:`.market` the seeded data and its planted dirt; :mod:`.canonical` the files;
* :mod:`.questions` the templates (levels 1 to 7, conventions, answer types, tolerances); :mod:`.tpch` level 7's TPC-H data;
* :mod:`.reference` the references, in polars, sharing nothing with any store's SQL;
* :mod:`.stores` the engines, each bounded and read-only by construction;
* :mod:`.cases` the case format; :mod:`.generator` cases, splits, procedural cases;
* :mod:`.tools`, :mod:`.prompt`, :mod:`.world` the tools, the task text, one episode;
* :mod:`.grader` and :mod:`.replay` the score from the log and a re-run of the evidence.
"""

# The extra of setup.cfg that brings the desk's libraries (the base install lacks them);
# :mod:`.dependencies` checks them before anything else of the desk is imported.
EXTRA = "analyst"

ENV_ID = "batchgate_gym/AnalystDesk-v0"
GYMNASIUM_IDS = {ENV_ID: "batchgate_gym.envs.analyst.text:AnalystDeskEnv"}
TURNS = 16  # an analyst question's turn budget
MAX_EPISODE_STEPS = {ENV_ID: TURNS}  # for Gymnasium's spec and TimeLimit, with the default arguments
