"""A small agent instrumented with the real OpenTelemetry SDK, following the GenAI semantic
conventions, and the two ways its spans reach a file: OTLP JSON (the SDK's own OTLP encoder,
one ExportTraceServiceRequest per line, as the Collector's file exporter writes) and the SDK's
console exporter (pretty-printed `span.to_json()` objects, one after another)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)


class OtlpJsonFileExporter(SpanExporter):
    """Each export as one OTLP JSON line (protobuf's JSON mapping of the real encoder)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.out.write(json.dumps(MessageToDict(encode_spans(spans))) + "\n")
        self.out.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.out.flush()


class SupportAgent:
    """Answers from a tiny FAQ; every call is traced like an instrumented agent framework."""

    def __init__(self, provider: TracerProvider, name: str = "support-agent") -> None:
        self.tracer = provider.get_tracer("tests.support_agent")
        self.name = name
        self.history: list[dict[str, str]] = []

    def ask(self, text: str, *, legacy_events: bool = False) -> str:
        self.history.append({"role": "user", "content": text})
        with self.tracer.start_as_current_span(f"invoke_agent {self.name}") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("gen_ai.agent.name", self.name)
            messages = [
                {"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]}
                for m in self.history
            ]
            span.set_attribute("gen_ai.input.messages", json.dumps(messages))
            with self.tracer.start_as_current_span("chat gpt-4.1-mini") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.request.model", "gpt-4.1-mini")
                if legacy_events:  # the older convention: one event per message
                    chat.add_event("gen_ai.system.message", {"content": "You help customers."})
                    chat.add_event("gen_ai.user.message", {"content": text})
                answer = "Refunds take 5 business days." if "refund" in text else "Sure."
                chat.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                    ),
                )
        self.history.append({"role": "assistant", "content": answer})
        return answer


def provider_writing(path: Path, fmt: str) -> tuple[TracerProvider, IO[str]]:
    """A tracer provider whose spans go to `path` as `otlp` JSON lines or `console` output."""
    out = path.open("w", encoding="utf-8")
    exporter: SpanExporter = (
        OtlpJsonFileExporter(out) if fmt == "otlp" else ConsoleSpanExporter(out=out)
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, out
