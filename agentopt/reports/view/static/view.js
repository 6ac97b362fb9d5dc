// agentopt view: sorting, filtering, picking runs to compare, row drill-down (mouse and
// keyboard), and live updates of a running run or job. Served by agentopt from the wheel;
// it talks to nothing but the page's own origin.
(function () {
  'use strict';

  function tokens(value) { return (value || '').split(/\s+/).filter(Boolean); }

  function groupsOf(table) {
    var sel = table.getAttribute('data-groups');
    if (sel) { return Array.prototype.slice.call(table.querySelectorAll(sel)); }
    var body = table.tBodies[0];
    return body ? Array.prototype.slice.call(body.rows) : [];
  }

  function sortValue(group, key, index) {
    if (group.dataset && group.dataset[key] !== undefined) { return group.dataset[key]; }
    var row = group.tagName === 'TR' ? group : group.rows[0];
    var cell = row && row.cells[index];
    if (!cell) { return ''; }
    return cell.getAttribute('data-sort') !== null ? cell.getAttribute('data-sort') : cell.textContent.trim().toLowerCase();
  }

  function sortBy(table, th, dir) {
    var heads = Array.prototype.slice.call(table.querySelectorAll('thead th[data-key]'));
    var key = th.getAttribute('data-key');
    var num = th.getAttribute('data-type') === 'num';
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    heads.forEach(function (o) { o.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
    var groups = groupsOf(table);
    var order = groups.map(function (g, i) { return [g, i]; });
    order.sort(function (a, b) {
      var x = sortValue(a[0], key, index), y = sortValue(b[0], key, index);
      var c;
      if (num) {
        x = x === '' ? -Infinity : parseFloat(x); y = y === '' ? -Infinity : parseFloat(y);
        c = x === y ? 0 : (x < y ? -1 : 1);
      } else { c = String(x).localeCompare(String(y)); }
      return c * dir || a[1] - b[1];
    });
    var parent = groups.length && groups[0].parentNode;
    order.forEach(function (p) { parent.appendChild(p[0]); });
  }

  function initSort(table) {
    Array.prototype.slice.call(table.querySelectorAll('thead th[data-key]')).forEach(function (th) {
      var button = th.querySelector('button.sort');
      if (!button) { return; }
      button.addEventListener('click', function () {
        sortBy(table, th, th.getAttribute('aria-sort') === 'ascending' ? -1 : 1);
      });
    });
    // The same sorts from a select: narrow screens show rows as cards, without the header.
    Array.prototype.slice.call(document.querySelectorAll('select[data-sort-for="' + table.id + '"]')).forEach(function (sel) {
      sel.addEventListener('change', function () {
        var parts = sel.value.split(':');
        var th = table.querySelector('thead th[data-key="' + parts[0] + '"]');
        if (th) { sortBy(table, th, parts[1] === 'desc' ? -1 : 1); }
      });
    });
  }

  function initFilters(controls) {
    var table = document.getElementById(controls.getAttribute('data-filter-for'));
    if (!table) { return; }
    var shown = controls.querySelector('[data-shown]');
    var inputs = Array.prototype.slice.call(controls.querySelectorAll('[data-filter],[data-filter-flag]'));
    function apply() {
      var groups = groupsOf(table), n = 0;
      groups.forEach(function (g) {
        var ok = true;
        inputs.forEach(function (input) {
          if (!ok) { return; }
          var flag = input.getAttribute('data-filter-flag');
          if (flag) {
            if (input.checked) { ok = tokens(g.getAttribute('data-flags')).indexOf(flag) >= 0; }
            return;
          }
          var key = input.getAttribute('data-filter'), want = (input.value || '').toLowerCase();
          if (!want) { return; }
          var have = g.getAttribute('data-' + key) || '';
          ok = key === 'search' ? have.toLowerCase().indexOf(want) >= 0
            : tokens(have.toLowerCase()).indexOf(want) >= 0;
        });
        g.hidden = !ok;
        if (ok) { n++; }
      });
      if (shown) { shown.textContent = n + ' of ' + groups.length + ' shown'; }
    }
    inputs.forEach(function (input) {
      input.addEventListener('input', apply);
      input.addEventListener('change', apply);
    });
    apply();
  }

  function toggle(group, open) {
    var main = group.querySelector('tr.main'), detail = group.querySelector('tr.detail');
    if (!main || !detail) { return; }
    if (open === undefined) { open = detail.hidden; }
    detail.hidden = !open;
    main.setAttribute('aria-expanded', open ? 'true' : 'false');
  }

  function initRows(root) {
    Array.prototype.slice.call(root.querySelectorAll('tbody.task')).forEach(function (group) {
      var main = group.querySelector('tr.main');
      if (!main) { return; }
      main.addEventListener('click', function (ev) {
        if (ev.target.closest('a,button,input,summary,select')) { return; }
        toggle(group);
      });
      main.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); toggle(group); }
      });
    });
    Array.prototype.slice.call(root.querySelectorAll('[data-expand]')).forEach(function (b) {
      b.addEventListener('click', function () {
        var open = b.getAttribute('data-expand') === 'all';
        Array.prototype.slice.call(root.querySelectorAll('tbody.task')).forEach(function (g) {
          if (!g.hidden || !open) { toggle(g, open); }
        });
      });
    });
  }

  function initPick(root) {
    var button = root.querySelector('#compare-picked');
    if (!button) { return; }
    var boxes = Array.prototype.slice.call(root.querySelectorAll('input.pick'));
    function picked() { return boxes.filter(function (b) { return b.checked; }); }
    function update() {
      var n = picked().length;
      button.disabled = n < 2;
      button.textContent = n < 2 ? 'Compare picked runs (pick 2 or more)' : 'Compare ' + n + ' runs';
    }
    boxes.forEach(function (b) { b.addEventListener('change', update); });
    button.addEventListener('click', function () {
      var q = picked().map(function (b) { return 'run=' + encodeURIComponent(b.value); });
      if (q.length >= 2) { location.href = '/compare?' + q.join('&'); }
    });
    update();
  }

  function openHash() {
    var t = location.hash && document.getElementById(location.hash.slice(1));
    if (t && t.tagName === 'TBODY') { t.hidden = false; toggle(t, true); t.scrollIntoView(); }
  }

  function init(root) {
    Array.prototype.slice.call(root.querySelectorAll('table[data-sortable]')).forEach(initSort);
    Array.prototype.slice.call(root.querySelectorAll('[data-filter-for]')).forEach(initFilters);
    initRows(root);
    initPick(root);
  }

  // Live: poll the page's version; when the files behind it change, fetch the page again and
  // swap <main>, keeping what the reader opened, typed and chose.
  function keepState(root) {
    var state = { open: [], values: {}, details: [] };
    Array.prototype.slice.call(root.querySelectorAll('tr.main[aria-expanded=true]')).forEach(function (m) {
      state.open.push(m.parentNode.id);
    });
    Array.prototype.slice.call(root.querySelectorAll('details[open]')).forEach(function (d, i) {
      var row = d.closest('[id]'); state.details.push(row ? row.id + ':' + i : String(i));
    });
    Array.prototype.slice.call(root.querySelectorAll('input,select')).forEach(function (el, i) {
      var key = el.id || el.getAttribute('data-filter') || el.getAttribute('data-filter-flag') || el.value || String(i);
      state.values[key] = el.type === 'checkbox' ? el.checked : el.value;
    });
    return state;
  }

  function restore(root, state) {
    Array.prototype.slice.call(root.querySelectorAll('input,select')).forEach(function (el, i) {
      var key = el.id || el.getAttribute('data-filter') || el.getAttribute('data-filter-flag') || el.value || String(i);
      if (!(key in state.values)) { return; }
      if (el.type === 'checkbox') { el.checked = state.values[key]; } else { el.value = state.values[key]; }
    });
    state.open.forEach(function (id) { var g = document.getElementById(id); if (g) { toggle(g, true); } });
    Array.prototype.slice.call(root.querySelectorAll('details')).forEach(function (d, i) {
      var row = d.closest('[id]'); var key = row ? row.id + ':' + i : String(i);
      if (state.details.indexOf(key) >= 0) { d.open = true; }
    });
  }

  function live() {
    var url = document.body.getAttribute('data-live');
    var status = document.getElementById('live');
    if (!url) { return; }
    var version = null, busy = false;
    function tick() {
      if (busy) { return; }
      busy = true;
      fetch(url, { cache: 'no-store', credentials: 'same-origin' }).then(function (r) { return r.json(); })
        .then(function (v) {
          if (version === null) { version = v.version; return null; }
          if (v.version === version) { return null; }
          version = v.version;
          return fetch(location.pathname + location.search, { cache: 'no-store' }).then(function (r) { return r.text(); })
            .then(function (html) {
              var doc = new DOMParser().parseFromString(html, 'text/html');
              var fresh = doc.getElementById('main'), main = document.getElementById('main');
              if (!fresh || !main) { return; }
              var state = keepState(main);
              main.innerHTML = fresh.innerHTML;
              init(main);
              restore(main, state);
              Array.prototype.slice.call(main.querySelectorAll('[data-filter],[data-filter-flag]')).forEach(function (el) {
                el.dispatchEvent(new Event('change'));
              });
              var still = doc.body.getAttribute('data-live');
              if (!still) { document.body.removeAttribute('data-live'); url = null; }
              if (status) {
                status.textContent = (still ? 'live: updated ' : 'finished: updated ') + new Date().toLocaleTimeString();
              }
            });
        })
        .catch(function () { if (status) { status.textContent = 'live: server not answering'; } })
        .then(function () { busy = false; if (url) { setTimeout(tick, 1000); } });
    }
    tick();
  }

  document.addEventListener('DOMContentLoaded', function () {
    init(document);
    openHash();
    window.addEventListener('hashchange', openHash);
    live();
  });
})();
