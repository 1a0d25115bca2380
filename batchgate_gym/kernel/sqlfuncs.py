"""SQL functions whose work a number sets, bounded by the value-length limit.

SQLite's value-length limit (``SQLITE_LIMIT_LENGTH``) makes a result that is too
long fail, but it is checked as the result grows, not before the work starts. For
almost every built-in function the work follows the size of the inputs, which the
same limit already bounds. A few take a number that says how much to do instead: a
``printf`` width or precision (``printf('%.1000000000c', 'x')`` appends one
character a billion times inside a single VM instruction, four seconds that no
progress handler can interrupt, before its result is thrown away as too long).

Going through ``PRAGMA function_list`` with huge numbers, long strings and small
values in every argument position (``tests/kernel/test_sqlfuncs.py``) finds ``printf`` and
its alias ``format`` as the functions that class holds on SQLite 3.40: ``zeroblob``
and ``randomblob`` (whose size is their argument) are refused outright by the
guard's authorizer, and the others either clamp their number (``round`` to 30
digits), walk their input (``substr``, ``replace``, ``char``, the JSON and date
functions) or do a fixed amount of work.

:class:`BoundedFunctions` registers, on a guarded connection, a checked ``printf``
and ``format`` in place of the built-ins. Each reads its format the way SQLite does
(flags, a literal or ``*`` width and precision, the conversion, which arguments
each part takes) and lowers every width or precision above the value limit to one
past it; then SQLite's own ``printf`` computes the result, on a private connection
that has the same value limit and no authorizer. Lowering changes no result: a
conversion that is at least that wide (padding, repeated characters, zero-padded or
fixed-point digits) is already too long, so SQLite returns NULL either way, and a
precision that only caps how much of a string is printed (``%.Ns``, ``%.Nq``) is
past the length of any string that fits the limit. What the lowering takes away is
the work: one call now costs at most the value limit per conversion in its format.

Text that is not valid UTF-8 cannot pass through Python, so the checked functions
fail on it where SQLite's own would format it (its result could not be read back
through Python either).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

PRINTF_NAMES = ("printf", "format")

# Conversions that take one argument; %n and %% take none, and anything else stops
# SQLite's formatting where it stands (it returns NULL).
_TAKES_ARGUMENT = frozenset("dsgzqQwcouxXfeEGipr")
_FLAGS = frozenset("-+ #!0,")


class BoundedFunctions:
    """Checked ``printf``/``format`` for connections whose values are at most ``max_value_bytes``."""

    __slots__ = ("_charge", "_limit", "_private")

    def __init__(self, max_value_bytes: int, charge: Callable[[int], None] | None = None) -> None:
        self._limit = int(max_value_bytes)
        # Told the work each call did, in characters formatted (a width lowered to one past
        # the limit still formats that many before SQLite throws the result away): a guard
        # counts it with its VM steps, so a query calling printf on every row is held to the
        # same step budget, not to a clock.
        self._charge = charge
        # SQLite's own printf runs on a private connection: same value limit, no
        # authorizer, no progress handler. Opened on the first call (most episodes
        # never format anything, and a thousand live environments should not hold a
        # thousand idle connections), then reused by every call.
        self._private: sqlite3.Connection | None = None

    def install(self, conn: sqlite3.Connection) -> None:
        """Register the checked functions on ``conn`` under the built-ins' names."""
        for name in PRINTF_NAMES:
            conn.create_function(name, -1, self.printf, deterministic=True)

    def printf(self, *args: object) -> str | None:
        """SQLite's ``printf(format, ...)``, with every width and precision bounded."""
        lowered = 0
        if args:
            args, lowered = self._bounded(args)
        marks = ", ".join("?" * len(args))
        text: str | None = self.connection().execute(f"SELECT printf({marks})", args).fetchone()[0]
        if self._charge is not None:
            self._charge(lowered * (self._limit + 1) + len(text or ""))
        return text

    def connection(self) -> sqlite3.Connection:
        if self._private is None:
            self._private = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self._private.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self._limit)
        return self._private

    def _bounded(self, args: tuple[object, ...]) -> tuple[tuple[object, ...], int]:
        """``args`` with each width or precision above the limit lowered to one past it, and how many were."""
        fmt = args[0]
        if isinstance(fmt, bytes):  # a blob format is read as text, byte by byte
            text = fmt.decode("latin-1")
        elif isinstance(fmt, str):
            text = fmt
        else:
            return args, 0  # NULL, or a number's text: no conversion in it
        if "%" not in text:
            return args, 0
        edits, star_values = _oversized(text, args, self._limit, self._int64)
        if not edits and not star_values:
            return args, 0
        bound = str(self._limit + 1)
        pieces, last = [], 0
        for start, end in edits:
            pieces += [text[last:start], bound]
            last = end
        pieces.append(text[last:])
        new_text = "".join(pieces)
        new_fmt: object = new_text.encode("latin-1") if isinstance(fmt, bytes) else new_text
        new_args = [new_fmt, *args[1:]]
        for index, negative in star_values.items():
            new_args[index] = -(self._limit + 1) if negative else self._limit + 1
        return tuple(new_args), len(edits) + len(star_values)

    def _int64(self, value: object) -> int:
        """The 64-bit integer SQLite reads from ``value`` (``sqlite3_value_int64``)."""
        if value is None:
            return 0
        if isinstance(value, int):
            return value
        return int(self.connection().execute("SELECT printf('%lld', ?)", (value,)).fetchone()[0])


def _int32(value: int) -> int:
    """C's ``(int)`` of a 64-bit integer: its low 32 bits, two's complement."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _oversized(
    text: str, args: tuple[object, ...], limit: int, int64: Callable[[object], int]
) -> tuple[list[tuple[int, int]], dict[int, bool]]:
    """Where ``text``, formatted with ``args``, asks for a width or precision above ``limit``.

    Returns the spans of literal digits to replace and, for ``*`` arguments, their
    index in ``args`` and whether the value is negative (a negative width means
    left-justified, a negative precision its absolute value; either way the sign is
    kept). The walk follows SQLite 3.40's ``sqlite3_str_vappendf``: literal numbers
    keep their low 31 bits, ``*`` numbers are read as 64-bit integers cast to
    ``int``, a missing argument reads as 0, and formatting stops at a NUL or at a
    conversion SQLite does not know.
    """
    walk = _FormatWalk(text, args, limit, int64)
    walk.run()
    return walk.edits, walk.stars


class _FormatWalk:
    """One walk of a printf format as SQLite reads it (:func:`_oversized`)."""

    def __init__(
        self, text: str, args: tuple[object, ...], limit: int, int64: Callable[[object], int]
    ) -> None:
        self.text, self.args, self.limit, self.int64 = text, args, limit, int64
        self.edits: list[tuple[int, int]] = []
        self.stars: dict[int, bool] = {}
        self.used = 1  # args[0] is the format
        end = text.find("\0")  # SQLite reads the format as a C string: it ends at a NUL
        self.end = len(text) if end < 0 else end

    def at(self, i: int) -> str:
        return self.text[i] if i < self.end else "\0"

    def run(self) -> None:
        i = self.text.find("%", 0, self.end)
        while i >= 0:
            i += 1
            c = self.at(i)
            if c == "\0":
                return
            i, c = self.spec(i, c)
            if c in _TAKES_ARGUMENT:
                self.used += self.used < len(self.args)
            elif c not in "n%":
                return  # SQLite stops formatting here
            i = self.text.find("%", i + 1, self.end)

    def spec(self, i: int, c: str) -> tuple[int, str]:
        """Flags, width, precision and length, as SQLite reads them: the position and
        character of the conversion after them."""
        while True:
            done = False
            if c in _FLAGS:
                pass
            elif c == "l":
                i, c = self.length(i)
                done = True
            elif "1" <= c <= "9":
                i = self.literal(i)
                c = self.at(i)
                if c != "." and c != "l":
                    done = True
                else:
                    i -= 1
            elif c == "*":
                self.star()
                if self.at(i + 1) != "." and self.at(i + 1) != "l":
                    i += 1
                    c = self.at(i)
                    done = True
            elif c == ".":
                i, c, done = self.precision(i)
            else:
                done = True
            if done:
                return i, c
            i += 1
            c = self.at(i)
            if c == "\0":
                return i, c

    def length(self, i: int) -> tuple[int, str]:
        """After ``l`` (or ``ll``): the conversion's position and character."""
        i += 1
        c = self.at(i)
        if c == "l":
            i += 1
            c = self.at(i)
        return i, c

    def precision(self, i: int) -> tuple[int, str, bool]:
        """After ``.``: a ``*`` or literal precision; the position, the character there, and
        whether that character is the conversion (else an ``l`` follows)."""
        i += 1
        c = self.at(i)
        if c == "*":
            self.star()
            i += 1
            c = self.at(i)
        else:
            i = self.literal(i)
            c = self.at(i)
        if c == "l":
            return i - 1, c, False
        return i, c, True

    def star(self) -> None:
        """A width or precision read from the next argument; a missing one reads as 0."""
        if self.used < len(self.args):
            value = _int32(self.int64(self.args[self.used]))
            # Negative means left-justified (a width) or is taken as positive (a
            # precision); the most negative int means no width or precision at all.
            if abs(value) > self.limit and value != -(1 << 31):
                self.stars[self.used] = value < 0
            self.used += 1

    def literal(self, start: int) -> int:
        """A width or precision written out (SQLite keeps its low 31 bits): where it ends."""
        end, number = start, 0
        while "0" <= self.at(end) <= "9":
            number = (number * 10 + ord(self.at(end)) - 48) & 0xFFFFFFFF
            end += 1
        if number & 0x7FFFFFFF > self.limit:
            self.edits.append((start, end))
        return end


# SQLite's date and time functions and where each takes its time value: the first
# argument, or (strftime) the second, after the format.
DATE_FUNCTIONS = {"date": 0, "time": 0, "datetime": 0, "julianday": 0, "unixepoch": 0, "strftime": 1}
# Arguments that make a date function read the clock ('now') or the machine's time zone.
CLOCK_WORDS = frozenset({"now", "localtime", "utc"})


class ClockRead(Exception):
    """A date function was asked to read the clock or the machine's time zone."""


class ClockFreeDates:
    """SQLite's date and time functions, refusing the clock and the machine's time zone.

    Given ``'now'`` (or no time value, which means now), or the ``'localtime'`` and
    ``'utc'`` modifiers (whose result depends on the machine's time zone), a
    function of :data:`DATE_FUNCTIONS` fails; anything else is computed by SQLite's
    own function on the private connection of a :class:`BoundedFunctions`, so every
    result is SQLite's. The last refusal is kept in ``refused`` (SQLite turns any
    exception a function raises into the same generic error) for the guard to word.
    """

    __slots__ = ("_functions", "refused")

    def __init__(self, functions: BoundedFunctions) -> None:
        self._functions = functions
        self.refused = ""

    def install(self, conn: sqlite3.Connection) -> None:
        for name, position in DATE_FUNCTIONS.items():
            conn.create_function(name, -1, self._checked(name, position), deterministic=True)

    def _checked(self, name: str, position: int) -> Callable[..., str | float | None]:
        def call(*args: object) -> str | float | None:
            clock = len(args) <= position or any(
                isinstance(a, str) and a.strip().lower() in CLOCK_WORDS for a in args[position:]
            )
            if clock:
                self.refused = name
                raise ClockRead(name)
            marks = ", ".join("?" * len(args))
            conn = self._functions.connection()
            value: str | float | None = conn.execute(f"SELECT {name}({marks})", args).fetchone()[0]
            return value

        return call
