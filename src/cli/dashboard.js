// SPDX-License-Identifier: MIT
// dashboard.js: the live part of odbc-leader serve's page (/), embedded in
// the command (build-aux/embed-text.sh) and served as /dashboard.js. It
// polls api/v1/namespaces every second and each namespace's fires every
// 5 s, and updates the sections the server rendered in place (no reload).
// Every string from the database goes into the page as text
// (textContent), never as markup.
'use strict';

(function () {
  const POLL_MS = 1000;
  const FIRES_MS = 5000;
  const FIRES_SHOWN = 20;
  const STRIP = 30;
  let firesAt = 0;

  // Returns a new element tag with class cls and text.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function secs(ms) {
    return (ms / 1000).toFixed(1) + ' s';
  }

  function when(ms) {
    return ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : 'once';
  }

  // The section of namespace ns, made when missing.
  function section(ns) {
    const all = document.querySelectorAll('section[data-ns]');
    for (const s of all) if (s.dataset.ns === ns) return s;
    const s = el('section');
    s.dataset.ns = ns;
    s.appendChild(el('h2', null, ns));
    document.getElementById('namespaces').appendChild(s);
    return s;
  }

  // The child of s with class cls, made (of tag) when missing.
  function part(s, tag, cls) {
    let p = s.querySelector(':scope > .' + cls);
    if (!p) {
      p = el(tag, cls);
      s.appendChild(p);
    }
    return p;
  }

  function showState(st) {
    const s = section(st.namespace);
    const head = part(s, 'p', 'state');
    head.replaceChildren();
    if (st.error) {
      head.className = 'state bad';
      head.append('cannot read: ' + st.error);
      return;
    }
    if (st.leader_present) {
      head.className = 'state';
      head.append('leader ', el('b', 'leader', st.leader), ', term ' + st.term +
        ', lease ' + secs(st.lease_remaining_ms) + ' left');
    } else if (st.group) {
      head.className = 'state';
      head.append('group of ' + st.group.shards + ' shards, ' + st.group.led +
        ' led, ' + st.group.unled + ' unled');
    } else {
      head.className = 'state bad';
      head.append('no leader (last term ' + st.term + ')');
    }
    const t = part(s, 'table', 'candidates');
    t.replaceChildren();
    const h = el('tr');
    h.append(el('th', null, 'candidate (' + st.candidates_alive + ' alive)'),
      el('th', null, 'last heartbeat'));
    t.appendChild(h);
    for (const c of st.candidates) {
      const r = el('tr', c.leader ? 'is-leader' : '');
      r.append(el('td', null, c.id + (c.leader ? ' (leader)' : '')),
        el('td', null, secs(c.heartbeat_age_ms) + ' ago'));
      t.appendChild(r);
    }
  }

  function outcome(f) {
    if (f.status === null) return ['running', 'run'];
    if (f.status === 0) return ['ok', 'ok'];
    return [String(f.status), 'bad'];
  }

  function showFires(ns, fires) {
    const s = section(ns);
    const strips = part(s, 'div', 'strips');
    strips.replaceChildren();
    const jobs = new Map();
    for (const f of fires) {
      if (!jobs.has(f.job)) jobs.set(f.job, []);
      jobs.get(f.job).push(f);
    }
    for (const [job, list] of jobs) {
      const line = el('div', 'strip');
      line.append(el('span', 'job', job));
      for (const f of list.slice(-STRIP)) {
        const [text, cls] = outcome(f);
        const dot = el('span', 'dot ' + cls);
        dot.title = when(f.fire_ms) + ': ' + text + ' (' + f.claimed_by + ', term ' + f.term + ')';
        line.appendChild(dot);
      }
      strips.appendChild(line);
    }
    const t = part(s, 'table', 'fires');
    t.replaceChildren();
    if (fires.length === 0) return;
    const h = el('tr');
    for (const c of ['job', 'fire', 'claimed by', 'term', 'status', 'duration'])
      h.appendChild(el('th', null, c));
    t.appendChild(h);
    for (const f of fires.slice(-FIRES_SHOWN).reverse()) {
      const [text, cls] = outcome(f);
      const r = el('tr', cls);
      r.dataset.job = f.job;
      r.append(el('td', null, f.job), el('td', null, when(f.fire_ms)),
        el('td', null, f.claimed_by), el('td', null, f.term),
        el('td', 'status', text),
        el('td', null, f.duration_ms === null ? '-' : secs(f.duration_ms)));
      t.appendChild(r);
    }
  }

  function stamp(ok, text) {
    const p = document.getElementById('updated');
    p.className = ok ? '' : 'bad';
    p.textContent = text;
  }

  async function poll() {
    try {
      const r = await fetch('api/v1/namespaces', { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const d = await r.json();
      for (const st of d.namespaces) showState(st);
      if (Date.now() - firesAt >= FIRES_MS) {
        firesAt = Date.now();
        for (const st of d.namespaces) {
          const q = 'api/v1/fires?limit=200&namespace=' + encodeURIComponent(st.namespace);
          const fr = await fetch(q, { cache: 'no-store' });
          if (fr.ok) showFires(st.namespace, (await fr.json()).fires);
        }
      }
      stamp(true, 'updated ' + new Date().toLocaleTimeString());
    } catch (e) {
      stamp(false, 'cannot reach serve: ' + e.message);
    }
    setTimeout(poll, POLL_MS);
  }

  poll();
})();
