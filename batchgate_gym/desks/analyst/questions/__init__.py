"""The analyst's questions and their expected answers.

* :mod:`.template` what a template is (text, answer type, tolerance, tables, draw);
* :mod:`.market_questions` the marketplace's templates (levels 1 to 6) and every
  template of the desk by id and level, TPC-H's included;
* :mod:`.tpch_questions` level 7's TPC-H templates;
* :mod:`.market_answers` the expected answer of every template, in polars over the
  canonical tables, sharing nothing with any store's SQL; :mod:`.tpch_answers` level 7's.
"""
