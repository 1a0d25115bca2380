"""The desks: one domain each (world, tools, cases, grader) over the shared kernel.

A desk lives in its own folder here and imports the kernel, never another desk.
``gate`` is BadBatchGate, the nightly warehouse load.
"""
