"""Test helpers that ship with tether, for users testing their own code and backends.

`tether.testing.storage_conformance` holds the tests every session storage must pass
(it needs `pytest` and `pytest-asyncio`; import it only from tests).
"""

__all__: list[str] = []
