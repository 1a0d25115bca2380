"""Domain-free machinery shared by every desk built on this package.

The kernel knows nothing about batches or warehouses: it provides the hash-chained
log (:mod:`.ledger`), the read-only SQL guard (:mod:`.sqlguard`), the text action
codec (:mod:`.codec`) and the turn-based episode loop (:mod:`.episode`). A domain
(the batch gate here; a refund desk or analyst desk later) supplies tools and a
grader and reuses the rest.
"""
