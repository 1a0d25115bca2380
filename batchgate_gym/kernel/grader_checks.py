"""A grader's rules as named checks that a test can switch off, one at a time.

A grader check that can be deleted without any test or table noticing is either dead
or untested. So each desk's grader names its checks (:class:`GraderChecks`) and asks
``CHECKS.on(name)`` where it applies one; :func:`checks_off` switches named checks off
for the length of a ``with`` block, in this process, so that a test or ``batchgate
audit`` can play the named attackers and ablations against the weaker grader and see
who gains. Outside such a block every check is on: nothing here changes a score.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GraderChecks:
    """One desk's grader checks: name -> what the check holds."""

    desk: str
    meanings: Mapping[str, str]
    _off: set[str] = field(default_factory=set, compare=False, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.meanings)

    def on(self, name: str) -> bool:
        """Whether check ``name`` applies now (always, outside :func:`checks_off`)."""
        if name not in self.meanings:
            raise KeyError(f"the {self.desk} grader has no check {name!r}")
        return name not in self._off

    def known(self, names: tuple[str, ...]) -> None:
        unknown = [n for n in names if n not in self.meanings]
        if unknown:
            raise ValueError(
                f"the {self.desk} grader has no check {unknown[0]!r}; its checks: {', '.join(self.names)}"
            )


@contextmanager
def checks_off(checks: GraderChecks, *names: str) -> Iterator[None]:
    """Switch the named checks off for the block (in this process), then on again."""
    checks.known(names)
    added = [n for n in names if n not in checks._off]
    checks._off.update(added)
    try:
        yield
    finally:
        checks._off.difference_update(added)


__all__ = ["GraderChecks", "checks_off"]
