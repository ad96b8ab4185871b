// SPDX-License-Identifier: MIT
// dashboard.js: the live part of odbc-leader serve's page (/), embedded in
// the command (build-aux/embed-text.sh) and served as /dashboard.js. It
// polls api/v1/namespaces every second, each namespace's fires and jobs
// every 5 s and its election log every 5 s and whenever the lease changes
// hands, and updates the sections the server rendered in place (no
// reload): the state, the candidates, a timeline of who led when, the
// fires, the jobs with each one's history on request, and the jobs'
// pause, resume and run-now buttons (POST api/v1/jobs, which serve allows
// only behind its users). Every string from the database goes into the
// page as text (textContent, title, dataset), never as markup.
'use strict';

(function () {
  const POLL_MS = 1000;
  const FIRES_MS = 5000;
  const FIRES_SHOWN = 20;
  const STRIP = 30;
  const TERMS = 50; // the newest terms on the timeline
  const SPAN_MS = 24 * 3600 * 1000; // ... within the last day
  const LOG_MS = 5000;
  const HISTORY = 20; // fires in a job's history
  const logs = new Map(); // namespace -> {key, at, terms (null: no log)}
  const nows = new Map(); // namespace -> database time of its last state
  const histories = new Set(); // namespace + '\n' + job: histories shown
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

  // A fire's text and class, by its state (docs/lifecycle.md); the
  // attempt when it is not the first.
  function outcome(f) {
    const st = f.state || (f.status === null ? 'running'
      : f.status === 0 ? 'done' : 'failed');
    const n = f.attempt > 1 ? ' (attempt ' + f.attempt + ')' : '';
    if (st === 'running') return ['running' + n, 'run'];
    if (st === 'done') return ['ok' + n, 'ok'];
    if (st === 'failed') return [String(f.status) + n, 'bad'];
    if (st === 'pending') return ['run-now, pending', 'run'];
    if (st === 'skipped') return ['skipped (paused)', 'skip'];
    return [st + n, 'bad']; // interrupted, abandoned
  }

  // The time a fire names: its nominal time, or a run-now's request.
  function fireTime(f) {
    return when(f.fire_ms < 0 ? -f.fire_ms : f.fire_ms);
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
        dot.title = fireTime(f) + ': ' + text + ' (' + f.claimed_by + ', term ' + f.term + ')';
        line.appendChild(dot);
      }
      strips.appendChild(line);
    }
    const t = part(s, 'table', 'fires');
    t.replaceChildren();
    if (fires.length === 0) return;
    const h = el('tr');
    for (const c of ['job', 'fire', 'started', 'claimed by', 'term', 'status', 'duration'])
      h.appendChild(el('th', null, c));
    t.appendChild(h);
    for (const f of fires.slice(-FIRES_SHOWN).reverse()) {
      const [text, cls] = outcome(f);
      const r = el('tr', cls);
      r.dataset.job = f.job;
      r.append(el('td', null, f.job), el('td', null, fireTime(f)),
        el('td', null, started(f)), el('td', null, f.claimed_by),
        el('td', null, f.term), el('td', 'status', text),
        el('td', null, lasted(ns, f)));
      t.appendChild(r);
    }
  }

  // When a fire's attempt started (its claim), database time; '-' for a
  // run-now not started yet or a skipped fire.
  function started(f) {
    return f.state === 'pending' || f.state === 'skipped' ? '-' : when(f.claimed_at_ms);
  }

  // How long a fire ran, or for one still running, its age so far at
  // ns's database time.
  function lasted(ns, f) {
    if (f.duration_ms !== null) return secs(f.duration_ms);
    if (f.state === 'running' && nows.has(ns)) return secs(Math.max(0, nows.get(ns) - f.claimed_at_ms)) + ' so far';
    return '-';
  }

  // The jobs of ns (api/v1/jobs) as a table, a row per job with its
  // buttons, and under a job whose history was asked for, its last
  // HISTORY fires.
  function showJobs(ns, jobs) {
    const s = section(ns);
    const box = part(s, 'div', 'jobs');
    const said = part(box, 'p', 'said'); // what serve last answered: kept
    box.replaceChildren();
    if (jobs.length === 0) return;
    const t = el('table', 'jobs');
    const h = el('tr');
    for (const c of ['job', 'state', 'running', 'offered', 'last fire', 'last ok', 'last failed', ''])
      h.appendChild(el('th', null, c));
    t.appendChild(h);
    for (const j of jobs) {
      const r = el('tr', j.paused ? 'skip' : (j.running > 0 ? 'run' : ''));
      r.dataset.job = j.job;
      const state = j.paused
        ? 'paused' + (j.changed_by ? ' by ' + j.changed_by : '') +
          (j.changed_at_ms ? ' at ' + when(j.changed_at_ms) : '')
        : 'active';
      const acts = el('td', 'actions');
      acts.append(button(ns, j.job, 'history', 'history'),
        button(ns, j.job, j.paused ? 'resume' : 'pause', j.paused ? 'resume' : 'pause'),
        button(ns, j.job, 'trigger', 'run now'));
      r.append(el('td', null, j.job), el('td', 'jobstate', state),
        el('td', null, j.running), el('td', null, j.offered),
        el('td', null, j.last_fire_ms === null ? '-' : when(j.last_fire_ms)),
        el('td', null, j.last_done_ms === null ? '-' : when(j.last_done_ms)),
        el('td', null, j.last_failed_ms === null ? '-' : when(j.last_failed_ms)), acts);
      t.appendChild(r);
    }
    box.append(el('h3', null, 'jobs'), t, said);
    for (const j of jobs)
      if (histories.has(ns + '\n' + j.job)) box.appendChild(historyBox(ns, j.job));
  }

  // A button of job j in ns: action 'history' shows or hides its fires,
  // the others ask serve (POST api/v1/jobs).
  function button(ns, j, action, label) {
    const b = el('button', null, label);
    b.type = 'button';
    b.dataset.action = action;
    b.addEventListener('click', () => {
      if (action === 'history') toggleHistory(ns, j);
      else act(ns, j, action);
    });
    return b;
  }

  // The history box of job j in ns, made empty when missing.
  function historyBox(ns, j) {
    const s = section(ns);
    for (const d of s.querySelectorAll('div.history'))
      if (d.dataset.job === j) return d;
    const d = el('div', 'history');
    d.dataset.job = j;
    return d;
  }

  async function toggleHistory(ns, j) {
    const k = ns + '\n' + j;
    if (histories.has(k)) {
      histories.delete(k);
      historyBox(ns, j).remove();
      return;
    }
    histories.add(k);
    part(section(ns), 'div', 'jobs').appendChild(historyBox(ns, j));
    await history(ns, j);
  }

  // Fetches and draws job j's last HISTORY fires, newest first: nominal
  // time, actual start, host, term, attempt, duration and outcome.
  async function history(ns, j) {
    const q = 'api/v1/fires?limit=' + HISTORY + '&namespace=' + encodeURIComponent(ns) +
      '&job=' + encodeURIComponent(j);
    const r = await fetch(q, { cache: 'no-store' });
    const d = historyBox(ns, j);
    d.replaceChildren(el('h3', null, 'history of ' + j));
    if (!r.ok) {
      d.append(el('p', 'bad', 'cannot read: HTTP ' + r.status));
      return;
    }
    const t = el('table', 'history');
    const h = el('tr');
    for (const c of ['fire', 'started', 'host', 'term', 'attempt', 'duration', 'outcome'])
      h.appendChild(el('th', null, c));
    t.appendChild(h);
    for (const f of (await r.json()).fires.reverse()) {
      const [text, cls] = outcome(f);
      const row = el('tr', cls);
      row.append(el('td', null, fireTime(f)), el('td', null, started(f)),
        el('td', null, f.claimed_by), el('td', null, f.term),
        el('td', null, f.attempt + ' of ' + f.max_attempts),
        el('td', null, lasted(ns, f)), el('td', 'status', text));
      t.appendChild(row);
    }
    d.appendChild(t);
  }

  // Asks serve to pause, resume or run job j of ns now, and says what
  // serve answered under the jobs table.
  async function act(ns, j, action) {
    const q = 'api/v1/jobs?namespace=' + encodeURIComponent(ns) + '&job=' +
      encodeURIComponent(j) + '&action=' + action;
    const said = part(part(section(ns), 'div', 'jobs'), 'p', 'said');
    try {
      const r = await fetch(q, { method: 'POST', cache: 'no-store',
        headers: { 'X-Requested-By': 'odbc-leader dashboard' } });
      const body = await r.text();
      said.className = r.ok ? 'said' : 'said bad';
      said.textContent = r.ok ? j + ': ' + (action === 'trigger'
        ? 'run-now asked (key ' + JSON.parse(body).key + '): the leader runs it'
        : action + 'd on every host') : j + ': ' + action + ' refused: ' + body.trim();
      if (r.ok) await jobsOf(ns);
    } catch (e) {
      said.className = 'said bad';
      said.textContent = j + ': ' + action + ' not sent: ' + e.message;
    }
  }

  // Fetches and draws ns's jobs and the histories shown (a dialect
  // without the lifecycle answers 404: no jobs table).
  async function jobsOf(ns) {
    const q = 'api/v1/jobs?namespace=' + encodeURIComponent(ns);
    const r = await fetch(q, { cache: 'no-store' });
    if (!r.ok) return;
    showJobs(ns, (await r.json()).jobs);
    for (const k of histories) {
      const [n, j] = k.split('\n');
      if (n === ns) await history(ns, j);
    }
  }

  // A stable colour of a candidate: a hue from its id's FNV-1a hash,
  // mixed (murmur3's finalizer) so that c1 and c2 differ.
  function colour(id) {
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) >>> 0;
    return 'hsl(' + (h % 360) + ',65%,' + (62 + (h >>> 9) % 16) + '%)';
  }

  function utc(ms) {
    return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  }

  // How term t ended, in words.
  function how(t) {
    if (t.ended_how === null) return 'leads';
    if (t.handed_to !== null) return t.ended_how + ' to ' + t.handed_to;
    return t.ended_how;
  }

  // One term of the timeline from..from+span: a bar, or null outside it.
  function bar(t, from, span, now) {
    const start = Math.max(t.started_at_ms, from);
    const end = t.ended_at_ms === null ? now : t.ended_at_ms;
    if (end <= from) return null;
    const left = Math.min(100, (start - from) / span * 100);
    const b = el('span', 'term ' + (t.ended_how === null ? 'open' : t.ended_how), t.leader_id);
    b.style.left = left + '%';
    b.style.width = Math.max(0.4, Math.min(100 - left, (end - start) / span * 100)) + '%';
    b.style.background = colour(t.leader_id);
    b.dataset.leader = t.leader_id;
    b.dataset.term = String(t.term);
    b.dataset.ended = t.ended_how === null ? 'current' : t.ended_how;
    b.title = t.leader_id + ', term ' + t.term + ': ' + utc(t.started_at_ms) + ' to ' +
      (t.ended_at_ms === null ? 'now' : utc(t.ended_at_ms)) + ' UTC, ' + how(t);
    return b;
  }

  // Draws the timeline of ns (its newest terms, oldest first) up to now
  // (database time): one bar per term, as long as it lasted, an open one
  // to now, coloured by leader, and a legend.
  function showTimeline(ns, terms, now) {
    const s = section(ns);
    const box = part(s, 'div', 'timeline');
    box.replaceChildren();
    if (!terms || terms.length === 0) {
      if (terms) box.append(el('p', 'axis', 'no terms in the election log'));
      return;
    }
    const shown = terms.slice(-TERMS);
    const last = shown[shown.length - 1].started_at_ms;
    const from = Math.max(shown[0].started_at_ms, Math.min(now - SPAN_MS, last));
    const span = Math.max(now - from, 1);
    const lane = el('div', 'lane');
    const leaders = new Set();
    for (const t of shown) {
      const b = bar(t, from, span, now);
      if (!b) continue;
      lane.appendChild(b);
      leaders.add(t.leader_id);
    }
    const axis = el('div', 'axis');
    axis.append(el('span', null, utc(from) + ' UTC'), el('span', null, 'now: ' + utc(now) + ' UTC'));
    const legend = el('div', 'legend');
    for (const id of leaders) {
      const k = el('span', 'key');
      const sw = el('span', 'swatch');
      sw.style.background = colour(id);
      k.append(sw, id);
      legend.appendChild(k);
    }
    legend.append(el('span', 'axis', 'red end: lease expired (or quarantined); dark end: leads now'));
    box.append(el('h3', null, 'who led when (' + shown.length + ' terms)'), lane, axis, legend);
  }

  // Fetches ns's election log when the lease changed hands (st's term or
  // leader) or LOG_MS passed, and draws its timeline.
  async function timeline(st) {
    if (st.error) return;
    const key = st.term + '/' + st.leader;
    let log = logs.get(st.namespace);
    if (!log || log.key !== key || Date.now() - log.at >= LOG_MS) {
      const q = 'api/v1/elections?limit=' + TERMS + '&namespace=' + encodeURIComponent(st.namespace);
      const r = await fetch(q, { cache: 'no-store' });
      if (r.ok) log = { key: key, at: Date.now(), terms: (await r.json()).elections };
      else if (r.status === 404) log = { key: key, at: Date.now(), terms: null };
      if (log) logs.set(st.namespace, log);
    }
    if (log) showTimeline(st.namespace, log.terms, st.db_now_ms === null ? Date.now() : st.db_now_ms);
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
      for (const st of d.namespaces) {
        showState(st);
        if (st.db_now_ms) nows.set(st.namespace, st.db_now_ms);
      }
      for (const st of d.namespaces) await timeline(st);
      if (Date.now() - firesAt >= FIRES_MS) {
        firesAt = Date.now();
        for (const st of d.namespaces) {
          const q = 'api/v1/fires?limit=200&namespace=' + encodeURIComponent(st.namespace);
          const fr = await fetch(q, { cache: 'no-store' });
          if (fr.ok) showFires(st.namespace, (await fr.json()).fires);
          await jobsOf(st.namespace);
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
