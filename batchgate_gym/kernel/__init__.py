"""Domain-free machinery shared by every desk built on this package.

The kernel knows no domain. It provides the hash-chained log (:mod:`.ledger`), the
read-only SQL guard (:mod:`.sqlguard`: its budget, rules, memory count and schema
keys in :mod:`.sqlbudget`, :mod:`.sqlrules`, :mod:`.sqlmemory` and :mod:`.sqlschema`,
its bounded built-ins in :mod:`.sqlfuncs`) and the SQLite images a world is restored
from (:mod:`.sqlite_image`), the text action codec
(:mod:`.codec`), the turn-based episode loop (:mod:`.episode`) and its team form
(:mod:`.team`), case sources (:mod:`.case_sources`), weighted scores
(:mod:`.scoring`), the replay driver (:mod:`.replay`) and plain, read-only shared
values (:mod:`.plain`). A desk (in the desks folder) supplies its world, tools,
cases and grader and reuses the rest; the kernel imports no desk.
"""
