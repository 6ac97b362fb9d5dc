"""The fake OpenAI server itself (tests and bench/ rely on its behaviour)."""

from __future__ import annotations

import asyncio

import openai

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text


def test_models_listing_default_echo_queue_and_handler() -> None:
    def handler(req: RecordedRequest) -> Reply | None:
        if req.body and req.body["messages"][-1]["content"] == "special":
            return text("handled")
        return None

    async def main(srv: FakeOpenAI) -> list[str]:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        try:
            models = [m.id async for m in client.models.list()]
            answers = []
            for content in ("first", "second", "special", "plain"):
                try:
                    r = await client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": content}]
                    )
                    answers.append(r.choices[0].message.content or "")
                except openai.APIStatusError as exc:
                    answers.append(f"HTTP {exc.status_code}")
            return models + answers
        finally:
            await client.close()

    with FakeOpenAI(model="served-model") as srv:
        srv.handler = handler
        srv.queue(text("scripted"), error(500, "boom"))
        out = asyncio.run(main(srv))
        assert out == ["served-model", "scripted", "HTTP 500", "handled", "plain"]
        assert srv.count("/models") == 1 and srv.count() == 4
        assert srv.chat_requests[0].headers["authorization"] == "Bearer k"
        assert srv.last.body["messages"][-1]["content"] == "plain"
