"""Domain-free machinery shared by every desk built on this package.

The kernel knows no domain: it provides the hash-chained log (:mod:`.ledger`), the
read-only SQL guard (:mod:`.sqlguard`, with :mod:`.sqlfuncs`), the text action
codec (:mod:`.codec`), the turn-based episode loop (:mod:`.episode`), the replay
driver (:mod:`.replay`) and read-only shared values (:mod:`.plain`). A desk (in
the desks folder) supplies its world, tools, cases and grader and reuses
the rest; the kernel imports no desk.
"""
