"""Helpers for the storage tests: a private redis-server, key-prefix cleanup."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import redis.asyncio as aioredis

REDIS_HOST = "127.0.0.1"
REDIS_PORT = 6379


async def drop_prefix(client: aioredis.Redis, prefix: str) -> None:
    """Delete every key under `prefix:`."""
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
    if keys:
        await client.delete(*keys)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A private `redis-server` with AOF persistence (fsync on every write) in a tmp dir."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:  # wait for readiness on its own log, no sleeps
            if b"Ready to accept connections" in line:
                break
        else:
            raise RuntimeError(f"redis-server on port {self.port} did not start")
        self.process.stdout.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


def sqlite_path(tmp_path: Path) -> str:
    return os.fspath(tmp_path / "sessions.db")
