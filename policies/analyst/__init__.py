"""AnalystDesk's policies: :mod:`.reference` (careful and the honest analysts who err),
:mod:`.attackers`, and the SQL an analyst writes (:mod:`.sql`, :mod:`.tpch_sql`) with
the train split's most common answers (:mod:`.prior`)."""
