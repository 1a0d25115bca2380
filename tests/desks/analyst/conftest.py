"""The analyst tests' session: a PostgreSQL server a test started stops when the session ends.

The postgres store starts one server per process and stops it at exit; a test worker may
end without running exit handlers, so the session stops it too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from batchgate_gym.desks.analyst.engines import postgres_server


@pytest.fixture(scope="session", autouse=True)
def _no_postgres_server_outlives_the_session() -> Iterator[None]:
    yield
    postgres_server.shutdown()
