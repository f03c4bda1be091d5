"""The public conformance suite, run against SQLite, a real Redis and a real PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT, sqlite_path

from pg_helpers import POSTGRES_DSN
from tether.app.storage import PostgresStorage, RedisStorage, SQLiteStorage, StorageBase
from tether.testing.storage_conformance import StorageConformance, StorageFactory


class TestStorageConformance(StorageConformance):
    @pytest.fixture(params=["sqlite", "redis", "postgres"])
    def storage_factory(self, request: pytest.FixtureRequest, tmp_path: Path) -> StorageFactory:
        if request.param == "sqlite":
            path = sqlite_path(tmp_path)
            return lambda: SQLiteStorage(path)
        if request.param == "postgres":
            schema = request.getfixturevalue("pg_schema")
            return lambda: PostgresStorage(POSTGRES_DSN, schema=schema)
        prefix = request.getfixturevalue("redis_prefix")

        def make() -> StorageBase:
            return RedisStorage(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=prefix)

        return make
