"""The HTML report: self-contained, escaped, complete, and still small with 1,000 tasks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_fixtures import SCRIPT_RESPONSE, ev, task

from agentopt.reports import RunResults, render_html
from agentopt.reports.html_assets import JS

VOID = {"meta", "br", "input", "img", "link", "hr", "rect", "line", "path", "circle"}


class _Structure(HTMLParser):
    """Collects tags and checks that every non-void element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts = 0
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self.scripts += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()


def _parse(html: str) -> _Structure:
    parser = _Structure()
    parser.feed(html)
    parser.close()
    return parser


def test_page_is_well_formed_and_runs_only_its_own_script(mixed: RunResults) -> None:
    html = render_html(mixed)
    parsed = _parse(html)
    assert parsed.problems == [] and parsed.stack == []
    assert parsed.scripts == 1  # the hostile response did not add a <script> element
    assert not any(tag == "img" for tag, _ in parsed.tags)
    csp = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv"))
    assert csp is not None and "default-src 'none'" in csp and "'sha256-" in csp


def test_agent_output_is_escaped(mixed: RunResults) -> None:
    html = render_html(mixed)
    assert SCRIPT_RESPONSE not in html
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "Off topic: &lt;b&gt;bold&lt;/b&gt; claim" in html  # reasons are data too
    assert "<b>bold</b>" not in html


def test_no_network_references(mixed: RunResults) -> None:
    html = render_html(mixed)
    assert not re.search(r"https?://", html)
    assert not re.search(r"@import|url\(", html)
    for tag, attrs in _parse(html).tags:
        assert tag not in {"link", "img", "iframe", "object", "embed"}
        assert "src" not in attrs and "srcset" not in attrs


def test_only_http_citation_links_become_links(build: Callable[..., RunResults]) -> None:
    citations = [
        {"index": 1, "url": "https://learn.example.com/refunds", "title": "Refunds"},
        {"index": 2, "url": "javascript:alert(1)", "title": "evil"},
    ]
    results = build([task("cites", 0, "pass", [], citations=citations)])
    html = render_html(results)
    links = [a["href"] for t, a in _parse(html).tags if t == "a" and "href" in a]
    assert "https://learn.example.com/refunds" in links
    assert not any(h and h.startswith("javascript") for h in links)
    assert "javascript:alert(1)" in html  # still shown, as text
    stripped = html.replace("https://learn.example.com/refunds", "")
    assert not re.search(r"https?://", stripped)  # the only URL is the one from data


def test_one_chart_per_evaluator_and_a_task_score_chart(mixed: RunResults) -> None:
    html = render_html(mixed)
    names = {e.name for e in mixed.summary.evaluators}
    charts = re.findall(r'<svg class="chart"[^>]*aria-label="([^"]+)"', html)
    assert {c.split(":")[0] for c in charts} == names | {"Task scores"}
    rel = re.search(r'aria-label="builtin.relevance: [^"]*">.*?</svg>', html)
    assert rel is not None
    # The counts are the summary's (the run's one tally), never recounted from the tasks.
    ev = next(e for e in mixed.summary.evaluators if e.name == "builtin.relevance")
    assert f"pass {ev.passed} · fail {ev.failed} · error {ev.errors} · mean {ev.mean:.3f}" in html
    s = mixed.summary
    tally = f"pass {s.passed} · fail {s.failed} · partial {s.partial} · error {s.errors}"
    assert f"{tally} · mean {s.score:.3f}" in html


def test_transcripts_tools_and_reasons_are_in_the_page(mixed: RunResults) -> None:
    html = render_html(mixed)
    for text in (
        "What&#x27;s the weather like here?",
        "Portland is sunny all year.",
        "get_weather",
        "&quot;city&quot;: &quot;Portland&quot;",
        "&quot;forecast&quot;: &quot;sunny&quot;",
        "order service timed out",
        "Wrong city: answered for Portland",
        "Ignores the refund window",
        "judgeParseFailed",
        "agentRequestFailed: HTTP 503 Service Unavailable",
        "mentions_window",
        "refund_accuracy",
        "not applicable",
        "Repeats: mean 0.583",
        "こんにちは — naïve café ✓ 🚀",
        "rate limited 14×",
        "95% CI 0.520–0.810",
        "by kind: agentRequestFailed 1",
    ):
        assert text in html, text


def test_table_rows_carry_sort_and_filter_keys(mixed: RunResults) -> None:
    parsed = _parse(render_html(mixed))
    bodies = [a for t, a in parsed.tags if t == "tbody" and a.get("class") == "task"]
    assert len(bodies) == len(mixed.tasks)
    assert {b["data-status"] for b in bodies} == {"pass", "fail", "partial", "error"}
    error_row = next(b for b in bodies if b["data-status"] == "error")
    assert error_row["data-score"] == ""  # an error has no score, never a 0
    keys = {a["data-key"] for t, a in parsed.tags if t == "th" and a.get("data-key")}
    assert {"name", "score", "rank", "latency"} <= keys
    assert ("select", {"id": "status", "aria-label": "Status"}) in parsed.tags


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_inline_script_parses(tmp_path: Path) -> None:
    script = tmp_path / "report.js"
    script.write_text(JS, encoding="utf-8")
    subprocess.run(["node", "--check", str(script)], check=True, capture_output=True)


def test_thousand_tasks_stay_small(build: Callable[..., RunResults]) -> None:
    long_answer = "The refund window is thirty days from delivery. " * 8
    tasks = [
        task(
            f"task_{i:04d}",
            i,
            "pass" if i % 3 else "fail",
            [
                ev("builtin.relevance", "pass" if i % 3 else "fail", 4 if i % 3 else 2,
                   reason="Addresses the question directly and cites the policy."),
                ev("builtin.coherence", "pass", 4, reason="Clear and well organized."),
            ],
            response=long_answer,
        )
        for i in range(1000)
    ]  # fmt: skip
    html = render_html(build(tasks))
    assert len(html.encode("utf-8")) < 4_000_000  # its render time: bench/report_render.py
    assert html.count('<tbody class="task"') == 1000


# A minimal DOM, just enough for the report's script: lets node run the real script against
# the real table rows and tell us what a click or a keystroke does.
DOM_SHIM = """
const spec = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
function el(tag, data) {
  return {tagName: tag.toUpperCase(), dataset: data || {}, hidden: false, attrs: {}, on: {},
    children: [], value: '', textContent: '',
    addEventListener(t, f) { this.on[t] = f; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; },
    removeAttribute(k) { delete this.attrs[k]; },
    scrollIntoView() {},
    querySelector(sel) { return this.querySelectorAll(sel)[0]; },
    querySelectorAll(sel) { return this.children.filter(c => c.matches(sel)); },
    matches(sel) { return sel === this.sel || (sel === 'th[data-key]' && this.tagName === 'TH'); },
    appendChild(c) { this.children = this.children.filter(x => x !== c); this.children.push(c); }};
}
const table = el('table');
for (const h of spec.headers) { const th = el('th', h); th.sel = 'th'; table.children.push(th); }
for (const b of spec.bodies) {
  const body = el('tbody', b); body.sel = 'tbody.task'; body.id = 'task-' + b.index;
  const main = el('tr'); main.sel = 'tr.main'; const detail = el('tr'); detail.sel = 'tr.detail';
  detail.hidden = true; body.children.push(main, detail); table.children.push(body);
}
const ids = {tasks: table, q: el('input'), status: el('select'), shown: el('span'),
             expand: el('button'), collapse: el('button')};
global.document = {getElementById: id => ids[id] || table.children.find(c => c.id === id)};
global.window = {addEventListener() {}};
global.location = {hash: ''};
eval(require('fs').readFileSync(process.argv[3], 'utf8'));
const names = () => table.children.filter(c => c.sel === 'tbody.task' && !c.hidden)
  .map(c => c.dataset.name);
const th = key => table.children.find(c => c.tagName === 'TH' && c.dataset.key === key);
const out = {};
ids.q.value = 'portland'; ids.q.on.input(); out.text = names(); out.shown = ids.shown.textContent;
ids.q.value = ''; ids.status.value = 'partial'; ids.status.on.change(); out.partial = names();
ids.status.value = ''; ids.status.on.change();
th('score').on.click(); out.ascending = names();
th('score').on.click(); out.descending = names();
const first = table.children.find(c => c.sel === 'tbody.task');
first.children[0].on.click(); out.opened = !first.children[1].hidden;
ids.collapse.on.click(); out.closed = first.children[1].hidden;
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_sort_filter_and_expand_work_in_the_script(mixed: RunResults, tmp_path: Path) -> None:
    parsed = _parse(render_html(mixed))
    spec = {
        "headers": [
            {"key": a["data-key"], "type": a["data-type"]}
            for t, a in parsed.tags
            if t == "th" and a.get("data-key")
        ],
        "bodies": [
            {k.removeprefix("data-"): v for k, v in a.items() if k.startswith("data-")}
            for t, a in parsed.tags
            if t == "tbody" and a.get("class") == "task"
        ],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    (tmp_path / "report.js").write_text(JS, encoding="utf-8")
    (tmp_path / "shim.js").write_text(DOM_SHIM, encoding="utf-8")
    run = subprocess.run(
        [
            "node",
            str(tmp_path / "shim.js"),
            str(tmp_path / "spec.json"),
            str(tmp_path / "report.js"),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    out = json.loads(run.stdout)
    assert out["text"] == ["trip-thread"]  # matched by its response
    assert out["shown"] == "1 of 9 tasks"
    assert out["partial"] == ["judge-broken", "judge-only-errors"]
    assert out["ascending"][0] == "agent-down"  # no score sorts below 0
    assert out["ascending"][1] == "judge-broken"
    assert out["descending"][0] == "refund-policy"
    assert out["opened"] and out["closed"]
