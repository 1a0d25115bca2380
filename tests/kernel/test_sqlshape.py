"""The size of a statement with its CTEs inlined, counted from its text."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from batchgate_gym.kernel.sqlshape import inlined_tokens, too_large


def chain(depth: int, references: int = 2) -> str:
    parts = ["c0 AS (SELECT a FROM t)"]
    for i in range(1, depth + 1):
        joined = " JOIN ".join(f"c{i - 1} x{k}" for k in range(references))
        parts.append(f"c{i} AS (SELECT x0.a FROM {joined})")
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{depth}"


def test_a_chain_doubles_at_each_level_and_a_single_reference_does_not():
    doubled = [inlined_tokens(chain(d)) for d in range(17)]
    assert all(b > a for a, b in itertools.pairwise(doubled))
    assert doubled[16] > 2**7 * doubled[8]
    single = [inlined_tokens(chain(d, references=1)) for d in range(8)]
    assert single[7] - single[6] == single[2] - single[1]  # a fixed number of tokens a level


def test_plain_text_counts_its_tokens_and_names_in_strings_or_comments_are_not_references():
    assert inlined_tokens("SELECT a, b FROM t") == 6
    assert inlined_tokens("WITH c AS (SELECT 1) SELECT 'c c c' /* c c */ FROM c") == inlined_tokens(
        "WITH c AS (SELECT 1) SELECT 'x' FROM c"
    )


def test_quoted_names_and_recursive_ctes():
    assert inlined_tokens('WITH "C" AS (SELECT 1 x) SELECT * FROM c, "c"') > inlined_tokens(
        'WITH "C" AS (SELECT 1 x) SELECT * FROM c'
    )
    recursive = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    assert inlined_tokens(recursive) < 60


def test_the_refusal_names_the_size_and_the_limit():
    assert too_large(chain(3), 1_000) is None
    message = too_large(chain(16), 20_000)
    assert message is not None and "over the 20,000 allowed" in message


def test_the_answer_follows_the_limit_and_is_the_same_when_asked_again():
    hostile = chain(16)
    size = inlined_tokens(hostile)
    for _ in range(2):
        assert too_large(hostile, size - 1) is not None
        assert too_large(hostile, size) is None
        assert too_large(hostile, size - 1) is not None
    assert too_large(hostile + " ", size - 1) == too_large(hostile, size - 1)


def test_a_long_chain_of_single_references_grows_linearly():
    long = chain(3000, references=1)
    assert inlined_tokens(long) < 3 * len(long)


@given(st.text(max_size=300))
def test_any_text_has_a_size(text: str) -> None:
    assert inlined_tokens(text) >= 0


_PIECES = [
    "as", "AS", "As", "with", "recursive", ",", "(", ")", "not", "NOT", "materialized", '"', "`",
    "[", "]", "/*", "*/", "--", "\n", " ", "c", "'", "select", "from c", "x",
    # Letters a case-insensitive match folds to ASCII ones (long s, Kelvin, dotted I):
    # the scan lowers the text and matches case-sensitively, as the tokenizer compares.
    "a\u017f", "\u212a", "MATER\u0130ALIZED", "n\u0130t",
]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.integers(0, 40))
def test_the_quick_answer_for_text_without_a_cte_body_is_the_full_counts(text: str, slack: int) -> None:
    """too_large skips the count for text where no CTE body can open: never a different answer."""
    for limit in (len(text), len(text) + slack, max(0, inlined_tokens(text) - 1)):
        full = inlined_tokens(text)
        answer = too_large(text, limit)
        assert (answer is None) == (full <= limit)
        if answer is not None:
            assert f"it is {full:,} tokens" in answer


def test_every_way_a_cte_body_opens_is_counted_in_full():
    """Text no longer than the limit whose CTEs inline past it: each way of writing a body's
    opening (quoted words, comments, NOT MATERIALIZED, a column list) is refused."""
    body, uses = "(SELECT " + ",".join("1" * 40) + ")", " SELECT * FROM " + ",".join("c" * 40)
    for opening in (
        'WITH c "AS" /* x */ NOT -- y\n "MATERIALIZED" ',
        "WITH c [as] `not` [materialized] ",
        "WITH c(a) as\t\n",
        "with c As ",
    ):
        text = opening + body + uses
        assert inlined_tokens(text) > len(text), text
        assert too_large(text, len(text)) is not None, text
