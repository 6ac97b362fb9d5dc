"""The frame every `agentopt view` page shares: one stylesheet and one script, both served by
agentopt itself from files in the wheel (no CDN), a skip link and a navigation bar, and a
`<main>` that the live-update script swaps in place while a run or job is going."""

from __future__ import annotations

from agentopt.core.redaction import redact
from agentopt.reports.html_task import esc

__all__ = ["page", "table_head", "text"]


def text(value: object) -> str:
    """Escaped, with anything that looks like a credential masked (as every report does)."""
    return esc(redact("" if value is None else str(value)))


def page(title: str, body: str, *, live: str | None = None, crumbs: str = "") -> str:
    """A whole page. `live`: the `/api/version?…` URL to poll while the data still changes."""
    live_attr = f' data-live="{esc(live)}"' if live else ""
    status = (
        '<span id="live" class="live" role="status" aria-live="polite">live: updating</span>'
        if live
        else '<span id="live" class="live" role="status" aria-live="polite"></span>'
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)} · agentopt view</title>"
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="/static/view.css">'
        '<script src="/static/view.js" defer></script></head>'
        f"<body{live_attr}>"
        '<a class="skip" href="#main">Skip to content</a>'
        '<nav class="top" aria-label="agentopt view">'
        '<a href="/" class="brand">agentopt view</a>'
        '<a href="/#runs">Runs</a><a href="/#jobs">Optimize jobs</a>'
        f'<a href="/#matrices">Matrices</a>{status}</nav>'
        f'<main id="main" tabindex="-1">{crumbs}{body}</main></body></html>'
    )


def table_head(columns: list[tuple[str, str, str]]) -> str:
    """`<thead>` of a sortable table: (label, sort key or "", "num"|"text")."""
    cells = []
    for label, key, kind in columns:
        num = ' class="num"' if kind == "num" else ""
        if key:
            cells.append(
                f'<th scope="col" data-key="{esc(key)}" data-type="{esc(kind)}"{num}>'
                f'<button type="button" class="sort">{esc(label)}</button></th>'
            )
        else:
            cells.append(f'<th scope="col"{num}>{esc(label)}</th>')
    return f"<thead><tr>{''.join(cells)}</tr></thead>"


def sort_select(table_id: str, columns: list[tuple[str, str, str]]) -> str:
    """A "Sort by" select doing what the header buttons do (narrow screens hide the header)."""
    options = ['<option value="">as listed</option>']
    for label, key, kind in columns:
        if not key:
            continue
        up, down = ("low → high", "high → low") if kind == "num" else ("A → Z", "Z → A")
        options.append(f'<option value="{esc(key)}:asc">{esc(label)}, {up}</option>')
        options.append(f'<option value="{esc(key)}:desc">{esc(label)}, {down}</option>')
    return (
        f'<label>Sort by <select data-sort-for="{esc(table_id)}">{"".join(options)}'
        "</select></label>"
    )
