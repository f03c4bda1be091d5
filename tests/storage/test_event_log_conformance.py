"""The public event-log conformance suite, on SQLite, a real Redis and a real PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT

from pg_helpers import POSTGRES_DSN
from tether.app.storage import PostgresEventLog, RedisEventLog, SQLiteEventLog
from tether.testing.event_log_conformance import EventLogConformance, EventLogFactory


class TestEventLogConformance(EventLogConformance):
    @pytest.fixture(params=["sqlite", "redis", "postgres"])
    def event_log_factory(self, request: pytest.FixtureRequest, tmp_path: Path) -> EventLogFactory:
        if request.param == "sqlite":
            return lambda: SQLiteEventLog(tmp_path / "events.db")
        if request.param == "postgres":
            schema = request.getfixturevalue("pg_schema")
            return lambda: PostgresEventLog(POSTGRES_DSN, schema=schema)
        prefix = request.getfixturevalue("redis_prefix")
        url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"
        return lambda: RedisEventLog(url, key_prefix=prefix)
