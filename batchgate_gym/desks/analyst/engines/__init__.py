"""The analyst's engines: the stores an agent queries, each bounded and read-only by construction.

* :mod:`.stores` the store names and :func:`~.stores.open_store`, the one way to open one;
* :mod:`.base` what every store shares: the result, the refusals, the caps, the budgets' scale,
  the CPU watchdog;
* :mod:`.sqlite_store` the kernel's guarded SQLite; :mod:`.duck_store` DuckDB over the
  database file, the Parquet lake or the raw files;
* :mod:`.chdb_store` ClickHouse in the process (optional extra);
* :mod:`.postgres_store` a PostgreSQL server's read-only role, :mod:`.postgres_server` the
  server the desk starts, :mod:`.postgres_functions` its function allow-list;
* :mod:`.function_lists` DuckDB's and chDB's function allow-lists;
* :mod:`.forking` a clear error where a process forked after the engines started.

Imports point one way: :mod:`.stores` opens the engine modules, which share :mod:`.base`
and never import :mod:`.stores`.
"""
