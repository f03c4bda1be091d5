"""PostgreSQL for the tests: the suite's server, unique schemas, and private servers.

- The suite's server is `TETHER_POSTGRES_DSN` (default
  `postgresql://postgres@127.0.0.1:5432/postgres`). Tests write only into a schema of
  their own (`tether_test_<hex>`), dropped afterwards.
- `PgServer` is a private server (`initdb` + `pg_ctl`) in a temporary directory,
  listening only on a Unix socket there (no TCP port to pick: nothing else can take it),
  for tests that restart or kill it. As root it runs as the `postgres` user
  (`initdb` refuses root).
"""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

POSTGRES_DSN = os.environ.get(
    "TETHER_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
)
"""The suite's PostgreSQL; tests write only into schemas of their own."""


def _required() -> bool:
    return os.environ.get("TETHER_REQUIRE_POSTGRES") == "1"


def _missing(reason: str) -> None:
    if _required():
        pytest.fail(f"{reason} (TETHER_REQUIRE_POSTGRES=1 is set, so this is a failure)")
    pytest.skip(reason)


@cache
def postgres_answers() -> str | None:
    """None if the suite's PostgreSQL accepts a connection, else why not."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'tether[postgres]')"
    try:
        with psycopg.connect(POSTGRES_DSN, connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return f"no PostgreSQL answers at TETHER_POSTGRES_DSN={POSTGRES_DSN} ({exc})"


def require_postgres() -> None:
    """Skip (or fail, under `TETHER_REQUIRE_POSTGRES=1`) unless the suite's server answers."""
    why = postgres_answers()
    if why is not None:
        _missing(why)


def unique_schema() -> str:
    """A schema name no other test uses."""
    return f"tether_test_{secrets.token_hex(6)}"


def drop_schema(schema: str, dsn: str = POSTGRES_DSN) -> None:
    """Drop a test's schema and everything in it."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def with_options(dsn: str, **params: str) -> str:
    """`dsn` (a URL) with query parameters added, e.g. `application_name`."""
    sep = "&" if "?" in dsn else "?"
    return dsn + sep + "&".join(f"{k}={v}" for k, v in params.items())


def terminate(application_name: str, dsn: str = POSTGRES_DSN) -> int:
    """`pg_terminate_backend` every connection named `application_name`; how many."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = %s AND pid <> pg_backend_pid()",
            (application_name,),
        ).fetchall()
    return len(rows)


@cache
def pg_bin() -> Path | None:
    """The directory holding `initdb` and `pg_ctl`, or None."""
    for found in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True):
        return Path(found).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def require_pg_binaries() -> Path:
    """The PostgreSQL binaries' directory; skip (or fail) without them."""
    found = pg_bin()
    if found is None or not (found / "pg_ctl").exists():
        _missing("PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)")
        raise AssertionError("unreachable")
    return found


class PgServer:
    """A private PostgreSQL on a Unix socket in its temporary directory (trust auth)."""

    def __init__(self) -> None:
        self.bin = require_pg_binaries()
        self.root = Path(tempfile.mkdtemp(prefix="tether-pg-"))
        self.data = self.root / "data"
        self.port = 5432  # names the socket file only (`.s.PGSQL.5432` in `root`)
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.dsn = f"postgresql://postgres@/postgres?host={self.root}&port={self.port}"

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    def start(self) -> PgServer:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        self._ctl("start")
        return self

    def _ctl(self, action: str) -> None:
        opts = f"-p {self.port} -c listen_addresses='' -k {self.root} -c fsync=off"
        args = ["pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.root / "log")]
        if action in ("start", "restart"):
            args += ["-o", opts]
        if action in ("stop", "restart"):
            args += ["-m", "fast"]
        self._run(*args, action)

    def restart(self) -> None:
        """Stop (fast: every connection is cut) and start again on the same socket."""
        self._ctl("restart")

    def stop(self) -> None:
        self._ctl("stop")

    def destroy(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._ctl("stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class CutProxy:
    """A TCP proxy to PostgreSQL that can drop the answer to the next statement.

    `cut_next_answer()` arms it: the next bytes the server sends on a connection that
    sent a request since then (not a listener's notifications) are thrown away and that
    connection is closed both ways. The server ran the statement
    (autocommit: it committed) but the client never hears so: a write whose outcome is
    unknown to its caller, made on demand. Runs in the test's event loop.
    """

    def __init__(self, dsn: str = POSTGRES_DSN) -> None:
        import psycopg

        info = psycopg.conninfo.conninfo_to_dict(dsn)
        self.target = (str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
        self.user = str(info.get("user") or "postgres")
        self.dbname = str(info.get("dbname") or "postgres")
        self.cuts = 0
        self._armed = False
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Listen on a free port; return the DSN that goes through the proxy."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"postgresql://{self.user}@127.0.0.1:{port}/{self.dbname}?sslmode=disable"

    def cut_next_answer(self) -> None:
        self._armed = True

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        asked = [False]  # this connection sent a request since the proxy was armed

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, answers: bool) -> None:
            try:
                while data := await src.read(65536):
                    if not answers and self._armed:
                        asked[0] = True
                    elif answers and self._armed and asked[0]:
                        self._armed = False
                        self.cuts += 1
                        break
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                for w in (writer, up_writer):
                    w.close()

        tasks = [
            asyncio.create_task(pipe(reader, up_writer, False)),
            asyncio.create_task(pipe(up_reader, writer, True)),
        ]
        self._tasks.update(tasks)
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.difference_update(tasks)
