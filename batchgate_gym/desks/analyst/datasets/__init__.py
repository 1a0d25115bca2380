"""The analyst's data, from a seed or a scale factor to the files every store reads.

* :mod:`.market` the seeded marketplace and its planted dirt (:class:`~.market.DataSpec`
  names a dataset);
* :mod:`.tpch` level 7's TPC-H tables, made by ``tpchgen-cli``;
* :mod:`.canonical` the canonical tables and the files written from them once per dataset
  (Parquet, CSV and JSON, the DuckDB and SQLite databases).
"""
