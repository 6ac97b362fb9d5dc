"""The cache surface: one-key get/put over a cache's batch reads and writes, and the Azure
providers' credential holder."""

from __future__ import annotations

import asyncio
from typing import Any

from agentopt.models.cache import CacheSurface
from agentopt.models.cache_sql import Row
from agentopt.models.providers import azure_auth
from agentopt.models.providers.azure_auth import ProviderCredential


class _Rows(CacheSurface):
    def __init__(self) -> None:
        self.rows: list[Row] = []

    async def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        return {r[0]: r[4] for r in self.rows if r[0] in keys}

    async def put_many(self, rows: list[Row]) -> None:
        self.rows.extend(rows)


def test_put_and_get_go_through_the_batch_methods() -> None:
    cache = _Rows()

    async def go() -> tuple[Any, Any]:
        await cache.put("k", kind="chat", provider="p", model="m", payload={"a": 1}, text="{}")
        return await cache.get("k"), await cache.get("other")

    assert asyncio.run(go()) == ({"a": 1}, None)
    assert cache.rows == [("k", "chat", "p", "m", {"a": 1})]


class _Cred:
    def __init__(self) -> None:
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


def test_given_credential_is_the_callers(monkeypatch: Any) -> None:
    monkeypatch.setattr(azure_auth, "default_credential", lambda: _Cred())
    given = _Cred()
    holder = ProviderCredential(given)
    assert holder.get() is given
    asyncio.run(holder.close())
    assert given.closed == 0


def test_default_credential_is_made_and_closed_once(monkeypatch: Any) -> None:
    made: list[_Cred] = []
    monkeypatch.setattr(azure_auth, "default_credential", lambda: made.append(_Cred()) or made[-1])
    holder = ProviderCredential()
    cred = holder.get()
    assert made == [cred]
    asyncio.run(holder.close())
    asyncio.run(holder.close())
    assert cred.closed == 1
