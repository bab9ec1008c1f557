// The timeline page: reads the audit API with a bearer token (from #token=... or the form) and
// draws, per CronJob, every fire time of the window on a time axis, and the shadow auditor's
// divergences on a lane below it. Marks carry their status or kind in class names and data
// attributes (docs/audit.md "The page"; tests/audit/browser_test.cc reads them).
'use strict';

const $ = (id) => document.getElementById(id);

function setStatus(text, isError) {
  $('status').textContent = text;
  $('status').className = isError ? 'error' : '';
}

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const url = path + (q.toString() ? '?' + q.toString() : '');
  const resp = await fetch(url, {headers: {'Authorization': 'Bearer ' + $('token').value}});
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(path + ': ' + resp.status + ' ' + (body.error || ''));
  return body;
}

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function pct(v) { return v === null || v === undefined ? '—' : v.toFixed(2) + ' %'; }

const KINDS = ['MissedRun', 'LateRun', 'UnexpectedJob'];

function divergenceCount(byKind) {
  return Object.values(byKind || {}).reduce((a, b) => a + b, 0);
}

function renderOverview(report) {
  const byNs = new Map();
  for (const it of report.items) {
    const t = byNs.get(it.namespace) || {cronJobs: 0, expected: 0, created: 0, skipped: 0,
                                         unaccounted: 0, pending: 0, divergences: 0};
    t.cronJobs++;
    for (const k of ['expected', 'created', 'skipped', 'unaccounted', 'pending']) t[k] += it[k];
    t.divergences += divergenceCount(it.divergencesByKind);
    byNs.set(it.namespace, t);
  }
  const body = document.querySelector('#namespaces tbody');
  body.replaceChildren();
  for (const [ns, t] of [...byNs.entries()].sort()) {
    const due = t.expected - t.pending;
    const adherence = due > 0 ? 100 * (t.created + t.skipped) / due : null;
    const tr = el('tr', {'data-namespace': ns, 'data-unaccounted': t.unaccounted,
                         'data-divergences': t.divergences});
    for (const v of [ns, t.cronJobs, t.expected, t.created, t.skipped, t.unaccounted, t.pending,
                     pct(adherence), t.divergences]) {
      tr.appendChild(el('td', {}, String(v)));
    }
    body.appendChild(tr);
  }
}

function renderTimeline(tl) {
  const since = Date.parse(tl.since), until = Date.parse(tl.until);
  const sec = el('section', {
    'class': 'cronjob', 'data-cronjob': tl.namespace + '/' + tl.name,
    'data-expected': tl.expected, 'data-created': tl.created, 'data-skipped': tl.skipped,
    'data-unaccounted': tl.unaccounted, 'data-pending': tl.pending,
    'data-divergences': divergenceCount(tl.divergencesByKind),
  });
  sec.appendChild(el('h3', {}, tl.namespace + '/' + tl.name));
  const reasons = Object.entries(tl.skippedByReason).map(([r, n]) => r + ' ' + n).join(', ');
  sec.appendChild(el('div', {'class': 'counts'},
      `expected ${tl.expected} · created ${tl.created} (succeeded ${tl.succeeded}, failed ` +
      `${tl.failed}) · skipped ${tl.skipped}${reasons ? ' (' + reasons + ')' : ''} · ` +
      `unaccounted ${tl.unaccounted} · pending ${tl.pending}` +
      (tl.pendingHeld ? ` (held by the controller ${tl.pendingHeld})` : '') + ' · adherence ' +
      pct(tl.adherencePercent) + ' · divergences ' +
      KINDS.map((k) => k + ' ' + ((tl.divergencesByKind || {})[k] || 0)).join(', ')));
  const axis = el('div', {'class': 'axis'});
  for (const s of tl.slots) {
    const at = Date.parse(s.scheduledTime);
    const left = until > since ? (100 * (at - since) / (until - since)) : 0;
    const cls = ['mark', s.status];
    if (s.outcome) cls.push('outcome-' + s.outcome);
    const title = [s.scheduledTime, s.status, s.held ? 'held by the controller' : '', s.reason,
                   s.job, s.outcome,
                   s.skewSeconds !== undefined ? 'skew ' + s.skewSeconds + ' s' : '']
                      .filter(Boolean).join(' · ');
    axis.appendChild(el('span', {
      'class': cls.join(' '), 'style': 'left: calc(' + left.toFixed(3) + '% - 2px)',
      'data-status': s.status, 'data-reason': s.reason || '', 'data-outcome': s.outcome || '',
      'data-scheduled': s.scheduledTime, 'data-held': s.held ? 'true' : 'false', 'title': title,
    }));
  }
  sec.appendChild(axis);
  sec.appendChild(renderDivergences(tl.divergences || [], since, until));
  const labels = el('div', {'class': 'axis-labels'});
  labels.appendChild(el('span', {}, tl.since));
  labels.appendChild(el('span', {}, tl.until));
  sec.appendChild(labels);
  return sec;
}

// Where a divergence goes on the axis: its fire time when the record knows it, else the Job's
// creation, else when it was recorded; clamped into the window (a record of the window may concern
// a fire time just before it).
function divergenceAt(d) {
  const detail = d.detail || {};
  return Date.parse(detail.scheduledTime || detail.createdAt || d.time);
}

// One row per kind, so that a LateRun does not hide the MissedRun of the same fire time.
function renderDivergences(divergences, since, until) {
  const lane = el('div', {'class': 'divergences'});
  if (divergences.length) lane.style.height = (12 * KINDS.length + 2) + 'px';
  for (const d of divergences) {
    const at = Math.min(Math.max(divergenceAt(d), since), until);
    const left = until > since ? (100 * (at - since) / (until - since)) : 0;
    const detail = d.detail || {};
    const title = [d.kind, d.job, detail.scheduledTime ? 'fire time ' + detail.scheduledTime : '',
                   detail.skewSeconds !== undefined ? 'skew ' + detail.skewSeconds + ' s' : '',
                   'recorded ' + d.time, d.error || '']
                      .filter(Boolean).join(' · ');
    lane.appendChild(el('span', {
      'class': 'divergence ' + d.kind,
      'style': 'left: calc(' + left.toFixed(3) + '% - 5px); top: ' +
          (2 + 12 * Math.max(KINDS.indexOf(d.kind), 0)) + 'px',
      'data-kind': d.kind, 'data-job': d.job, 'data-seq': d.seq, 'title': title,
    }));
  }
  return lane;
}

async function load() {
  document.body.dataset.state = 'loading';
  setStatus('loading…');
  try {
    const window = {since: $('since').value.trim(), until: $('until').value.trim()};
    const report = await api('/v1/reports/adherence',
                             Object.assign({namespace: $('namespace').value.trim()}, window));
    renderOverview(report);
    const box = $('timelines');
    box.replaceChildren();
    for (const it of report.items) {
      const path = '/v1/cronjobs/' + encodeURIComponent(it.namespace) + '/' +
          encodeURIComponent(it.name) + '/timeline';
      box.appendChild(renderTimeline(
          await api(path, {since: report.since, until: report.until})));
    }
    setStatus(`${report.items.length} CronJobs, ${report.since} – ${report.until}` +
              ` (ledger horizon ${report.horizon})`);
    document.body.dataset.state = 'loaded';
  } catch (e) {
    setStatus(e.message, true);
    document.body.dataset.state = 'error';
  }
}

function init() {
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (m) {
    $('token').value = decodeURIComponent(m[1]);
    // Keep the token out of the address bar (and out of screenshots and history).
    history.replaceState(null, '', location.pathname + location.search);
  }
  $('controls').addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  if ($('token').value) load();
}

init();
