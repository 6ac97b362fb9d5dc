"""The CSS and JavaScript inlined into the HTML report (no CDN: it must open offline).

The script is allowed by its SHA-256 in the page's Content-Security-Policy, so even a
response that slipped past escaping could not run script; it binds handlers with
addEventListener because the policy forbids inline `onclick` attributes.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSS", "JS", "content_security_policy"]

CSS = """
:root{--fg:#1f2328;--muted:#656d76;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;
--pass:#1a7f37;--fail:#cf222e;--partial:#9a6700;--error:#8250df;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#8d96a0;--bg:#0d1117;
--panel:#161b22;--line:#30363d;--pass:#3fb950;--fail:#f85149;--partial:#d29922;
--error:#a371f7;--accent:#4493f8}}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);margin:0;padding:24px;max-width:1400px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
h3{font-size:14px;margin:14px 0 6px}
.meta{color:var(--muted);font-size:13px;display:flex;flex-wrap:wrap;gap:2px 14px}
.meta span{min-width:0;overflow-wrap:anywhere}
.warn{color:var(--partial);font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:10px 14px;
min-width:150px}.card .v{font-size:22px;font-weight:600}.card .l{color:var(--muted);font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.chartbox{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:10px}
.chartbox .name{font-weight:600;word-break:break-all;max-width:260px}
.chartbox .counts{font-size:12px;color:var(--muted);margin:2px 0 6px}
svg .bar{fill:var(--accent)}svg .axis{stroke:var(--muted)}svg .mean{stroke:var(--fail);
stroke-width:2;stroke-dasharray:3 2}svg .tick{fill:var(--muted);font-size:9px}
svg .s-pass{fill:var(--pass)}svg .s-fail{fill:var(--fail)}svg .s-error{fill:var(--error)}
svg .s-none{fill:var(--line)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.grid th{background:var(--panel);position:sticky;top:0}
#tasks th[data-key]{cursor:pointer;user-select:none}
#tasks th[aria-sort=ascending]::after{content:" ▲"}
#tasks th[aria-sort=descending]::after{content:" ▼"}
#tasks tr.main{cursor:pointer}#tasks tr.main:hover{background:var(--panel)}
#tasks tr.detail>td{background:var(--panel);padding:10px 16px}
.controls{display:flex;gap:8px;align-items:center;margin:8px 0;flex-wrap:wrap}
.controls input{padding:5px 8px;min-width:260px}.controls select,.controls button{padding:4px 8px}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;
color:#fff}.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}
.b-partial{background:var(--partial)}.b-error{background:var(--error)}.b-flaky{background:var(--muted)}
pre{white-space:pre-wrap;word-wrap:break-word;margin:4px 0;padding:8px;background:var(--bg);
border:1px solid var(--line);border-radius:6px;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;
max-height:420px;overflow:auto}
.turn{border-left:3px solid var(--line);padding-left:10px;margin:10px 0}
.label{font-weight:600;font-size:12px;color:var(--muted);text-transform:uppercase}
.verdicts td{font-size:13px}.reason{max-width:700px}
ul.sub{margin:4px 0 0 0;padding-left:18px;font-size:12px;color:var(--muted)}
.criterion{font-style:italic}
.tool{margin:6px 0}.err{color:var(--error)}
.muted{color:var(--muted)}
"""

JS = """
(function(){
  var table=document.getElementById('tasks');
  if(!table){return;}
  var bodies=Array.prototype.slice.call(table.querySelectorAll('tbody.task'));
  var q=document.getElementById('q'),st=document.getElementById('status'),
      shown=document.getElementById('shown');
  function apply(){
    var text=(q.value||'').toLowerCase(),want=st.value,n=0;
    bodies.forEach(function(b){
      var ok=(!want||b.dataset.status===want)&&(!text||b.dataset.search.indexOf(text)>=0);
      b.hidden=!ok; if(ok){n++;}
    });
    shown.textContent=n+' of '+bodies.length+' tasks';
  }
  q.addEventListener('input',apply); st.addEventListener('change',apply);
  table.querySelectorAll('th[data-key]').forEach(function(th){
    th.addEventListener('click',function(){
      var key=th.dataset.key,num=th.dataset.type==='num',
          dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
      table.querySelectorAll('th[data-key]').forEach(function(o){o.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',dir>0?'ascending':'descending');
      bodies.sort(function(a,b){
        var x=a.dataset[key],y=b.dataset[key];
        if(num){x=x===''?-1:parseFloat(x);y=y===''?-1:parseFloat(y);
          return (x-y)*dir||(a.dataset.index-b.dataset.index);}
        return x.localeCompare(y)*dir||(a.dataset.index-b.dataset.index);
      });
      bodies.forEach(function(b){table.appendChild(b);});
    });
  });
  function toggle(b,open){
    var d=b.querySelector('tr.detail'),m=b.querySelector('tr.main');
    if(open===undefined){open=d.hidden;}
    d.hidden=!open; m.setAttribute('aria-expanded',open?'true':'false');
  }
  bodies.forEach(function(b){
    b.querySelector('tr.main').addEventListener('click',function(){toggle(b);});
  });
  document.getElementById('expand').addEventListener('click',function(){
    bodies.forEach(function(b){if(!b.hidden){toggle(b,true);}});});
  document.getElementById('collapse').addEventListener('click',function(){
    bodies.forEach(function(b){toggle(b,false);});});
  function openHash(){
    var t=location.hash&&document.getElementById(location.hash.slice(1));
    if(t&&t.tagName==='TBODY'){t.hidden=false;toggle(t,true);t.scrollIntoView();}
  }
  window.addEventListener('hashchange',openHash);
  apply(); openHash();
})();
"""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy() -> str:
    """Nothing may load from anywhere; only our own script (by hash) may run."""
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{_sha256(JS)}'"
    )
