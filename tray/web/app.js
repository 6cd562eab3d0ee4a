// The tray: the brain's blocks with their missions, and the right-edge
// fixed tray of mission cards where a human lands work — what needs the
// human first. A card opens the mission view (timeline, ask, gate output,
// diff). The human's gestures (land, archive, the passkeys) are signed
// by the owner's passkey: the server hands out a
// challenge bound to the exact change, the browser's authenticator signs
// it with the user present, and the server verifies and records the proof.
// The page never claims an origin; without a passkey it makes no gesture.
'use strict';

// Phase icons are inline SVG (16×16, drawn in the text colour): no emoji
// font is assumed on the machine.
const ICONS = {
  judging: '<circle cx="8" cy="8" r="5.5"/><path d="M8 5v3.5"/><circle cx="8" cy="11" r=".6" fill="currentColor"/>',
  executing: '<path d="M5 3l8 5-8 5z" fill="currentColor"/>',
  gate: '<path d="M3 2.5v11M13 2.5v11M3 6h10M3 10h10"/>',
  review: '<path d="M1.5 8s2.5-4.5 6.5-4.5 6.5 4.5 6.5 4.5-2.5 4.5-6.5 4.5S1.5 8 1.5 8z"/><circle cx="8" cy="8" r="1.8" fill="currentColor"/>',
  merge_wait: '<path d="M4 2h8M4 14h8M5 2l6 6-6 6M11 2L5 8l6 6"/>',
  landed: '<path d="M3 8.5l3.2 3.2L13 4.5"/>',
  failed: '<path d="M4 4l8 8M12 4l-8 8"/>',
  archived: '<path d="M2.5 3.5h11v3h-11zM3.5 6.5v6h9v-6M6.5 9h3"/>',
  bell: '<path d="M4 11V7a4 4 0 018 0v4l1.5 1.5h-11zM6.5 13.5a1.5 1.5 0 003 0"/>',
  unknown: '<circle cx="8" cy="8" r="5.5"/>',
};
const PHASES = {
  judging: { label: 'judging', accent: 'blue' },
  executing: { label: 'executing', accent: 'blue' },
  gate: { label: 'gate', accent: 'amber' },
  review: { label: 'review', accent: 'amber' },
  merge_wait: { label: 'merge wait', accent: 'amber' },
  landed: { label: 'landed', accent: 'sage' },
  failed: { label: 'failed', accent: 'clay' },
  archived: { label: 'archived', accent: 'muted' },
};
const PHASE_ORDER = Object.keys(PHASES);
const TERMINAL = ['landed', 'failed', 'archived'];
const STAGNANT_MS = 24 * 3600 * 1000;
const NO_PASSKEY_WHY = 'register a passkey to land here — or land from a terminal: m1nd land ID';
const STAGNANT_CONFIRM = 'hides from the tray; the letter itself stays on the mailbox — a contract transition is future work.';
const FOLD_LINES = 200; // a file's diff longer than this starts folded

const state = { heads: [], blocks: [], storeVersion: 0, skeleton: null, storeBroken: null, policy: null, brain: '', passkeys: null, pins: null, justRegistered: '', session: null };
// Mission views fetched for failed cards, by mission id, each with the head
// letter it was read at: a head that moves is read again.
const views = new Map();

// ---- small helpers -------------------------------------------------------

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// inline renders Markdown's inline code spans (`x`) and strong (**x**) as
// elements, the rest as text: what titles, asks and lessons write is shown
// as it reads, never as its backticks, and nothing in it becomes markup of
// the page (no HTML is parsed). A single * stays a star: asks name globs.
function inline(text) {
  const out = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let at = 0;
  for (const m of String(text || '').matchAll(re)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(m[1] !== undefined ? el('code', { text: m[1] }) : el('strong', { text: m[2] }));
    at = m.index + m[0].length;
  }
  if (at < String(text || '').length) out.push(String(text).slice(at));
  return out;
}

// md renders a Markdown document as elements: headings, fenced and
// indented code, lists, paragraphs, and inline() within them. It builds
// the DOM itself (no HTML is parsed), so text from an agent cannot become
// markup.
function md(text) {
  const root = el('div', { class: 'md' });
  const lines = String(text || '').replace(/\r\n/g, '\n').split('\n');
  let para = [], list = null;
  const flush = () => {
    if (para.length) root.append(el('p', {}, ...inline(para.join(' '))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)/);
    if (fence) {
      flush(); list = null;
      const code = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) code.push(lines[i]);
      root.append(el('pre', { class: 'md-code', text: code.join('\n') }));
      continue;
    }
    if (/^( {4}|\t)/.test(line) && !para.length && !list) {
      const code = [];
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]) || (lines[i] === '' && /^( {4}|\t)/.test(lines[i + 1] || ''))); i++) code.push(lines[i].replace(/^( {4}|\t)/, ''));
      i--;
      root.append(el('pre', { class: 'md-code', text: code.join('\n') }));
      continue;
    }
    const h = line.match(/^(#{1,6})\s+(.*)$/);
    if (h) { flush(); list = null; root.append(el('h' + Math.min(6, h[1].length + 3), { class: 'md-h' }, ...inline(h[2]))); continue; }
    const item = line.match(/^\s*[-*+]\s+(.*)$/) || line.match(/^\s*\d+[.)]\s+(.*)$/);
    if (item) {
      flush();
      if (!list) { list = el(/^\s*\d/.test(line) ? 'ol' : 'ul', {}); root.append(list); }
      list.append(el('li', {}, ...inline(item[1])));
      continue;
    }
    if (line.trim() === '') { flush(); list = null; continue; }
    if (list && /^\s{2,}\S/.test(line)) { list.lastChild.append(' ', ...inline(line.trim())); continue; }
    list = null;
    para.push(line.trim());
  }
  flush();
  return root;
}

async function getJSON(path) {
  const res = await fetch(path, { headers: { Accept: 'application/json' } });
  return res.json();
}

async function postJSON(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

function say(text, isError) {
  const box = $('#status');
  const msg = el('div', { class: 'msg' + (isError ? ' error' : ''), text });
  box.append(msg);
  setTimeout(() => msg.remove(), isError ? 12000 : 6000);
}

function refusal(out) {
  return out.refused ? `refused: ${out.refused}: ${out.lesson}` : (out.lesson || out.error || 'failed');
}

// elapsed is a short duration: "no movement for 2d".
function elapsed(from, to) {
  let s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return s + 's';
  s = Math.round(s / 60); if (s < 60) return s + 'm';
  s = Math.round(s / 60); if (s < 48) return s + 'h';
  return Math.round(s / 24) + 'd';
}

// ago is a moment as people say it: "3 min ago".
function ago(ms, now) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} days ago`;
}

// timeTag says when, "ended 3 min ago", with the exact time on hover.
function timeTag(verb, iso, now) {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return el('span', { class: 'when', text: verb ? `${verb} at a time not recorded` : '' });
  const exact = `${new Date(ms).toLocaleString()} — ${new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
  return el('time', { class: 'when', datetime: iso, 'data-verb': verb, title: exact, text: (verb ? verb + ' ' : '') + ago(ms, now) });
}

// tickTimes moves every "3 min ago" on the page along.
function tickTimes() {
  const now = Date.now();
  for (const t of document.querySelectorAll('time.when')) {
    t.textContent = (t.dataset.verb ? t.dataset.verb + ' ' : '') + ago(Date.parse(t.getAttribute('datetime')), now);
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

// icon draws one of ICONS (constant markup, never data) in the text colour.
function icon(name) {
  const svg = document.createElementNS(SVG_NS, 'svg');
  for (const [k, v] of Object.entries({ viewBox: '0 0 16 16', width: '16', height: '16', class: 'icon', 'aria-hidden': 'true', fill: 'none',
    stroke: 'currentColor', 'stroke-width': '1.6', 'stroke-linecap': 'round', 'stroke-linejoin': 'round' })) svg.setAttribute(k, v);
  svg.innerHTML = ICONS[name] || ICONS.unknown;
  return svg;
}

function phaseLabel(phase) { return (PHASES[phase] || { label: phase }).label; }

// phaseTag is a phase's icon and its word.
function phaseTag(phase) {
  return el('span', { class: 'phase-tag', 'data-phase': phase }, icon(phase), ' ' + phaseLabel(phase));
}

function blockById(id) { return state.blocks.find((b) => b.block_id === id); }

// Dismissals are browser-local and hold for one head only: a head that
// moves shows again.
function dismissKey(m) { return `m1nd.dismissed.${state.brain}.${m.mission_id}`; }
function isDismissed(m) { return localStorage.getItem(dismissKey(m)) === m.head_letter_id; }
function dismiss(m) { localStorage.setItem(dismissKey(m), m.head_letter_id); render(); }

function confirmDialog(title, text, okLabel, binds) {
  return new Promise((resolve) => {
    const d = $('#confirm');
    $('#confirm-title').textContent = title;
    $('#confirm-text').replaceChildren(...inline(text));
    $('#confirm-binds').hidden = !(binds && binds.length);
    $('#confirm-binds-list').replaceChildren(...(binds || []).map((b) => el('li', {}, ...inline(b))));
    $('#confirm-ok').textContent = okLabel || 'confirm';
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
    d.returnValue = '';
    d.showModal();
  });
}

// ---- loading -------------------------------------------------------------

async function refresh() {
  const [heads, blocks, policy, passkeys, pins, keeper, session] = await Promise.all([getJSON('/api/mailbox?kind=mission'), getJSON('/api/system_blocks'), getJSON('/api/policy'), getJSON('/api/passkeys'), getJSON('/api/runner_pins'), getJSON('/api/keeper'), getJSON('/api/session')]);
  state.keeper = keeper.ok ? keeper.keeper : [];
  state.session = session.ok ? session : null;
  renderSession();
  state.policy = policy;
  state.passkeys = passkeys.ok ? passkeys : null;
  state.pins = pins.ok ? pins : null;
  renderPasskeys();
  renderPins();
  renderPolicy();
  state.heads = heads.missions || [];
  state.queue = heads.queue || {};
  state.titles = heads.titles || {};
  state.brain = heads.served_brain || blocks.served_brain || '';
  state.blocks = blocks.blocks || [];
  state.storeVersion = blocks.store_version || 0;
  state.skeleton = blocks.skeleton;
  state.storeBroken = blocks.store_broken || null;
  render();
}

// ---- rendering -----------------------------------------------------------

// The keeper's notices: letters it gave up waking an agent for, and a
// woken session that ran none of m1nd's hooks. Nothing when all is well.
function renderKeeper() {
  const items = [];
  for (const a of state.keeper || []) {
    if (a.gave_up && a.gave_up.length) {
      items.push(`keeper: gave up waking ${a.agent} for ${a.gave_up.join(', ')} — read them with m1nd mail inbox --agent ${a.agent}`);
    }
    if (a.note && !a.note.startsWith('gave up')) {
      items.push(`keeper: ${a.agent}: ${a.note}`);
    }
  }
  $('#keeper-notice').hidden = items.length === 0;
  $('#keeper-notice').replaceChildren(...items.map((t) => { const li = document.createElement('li'); li.textContent = t; return li; }));
}

function render() {
  $('#brain-name').textContent = state.brain;
  $('#store-line').textContent = state.skeleton
    ? `store v${state.storeVersion} · skeleton ${state.skeleton.skeleton_id} ${state.skeleton.state} · ${state.blocks.length} blocks`
    : 'no store yet';
  // A store whose history breaks the laws is shown as broken: the blocks
  // are drawn from the last version the laws accept, and nothing lands.
  const brk = state.storeBroken;
  $('#store-broken').hidden = !brk;
  $('#store-broken').textContent = brk
    ? `BROKEN: the store's history breaks the laws at v${brk.lawful_version + 1} (${brk.commit ? brk.commit.slice(0, 12) : '?'}: ${brk.refused}: ${brk.lesson}). Shown as store v${brk.lawful_version}, the last version the laws accept; nothing lands until it is put right (m1nd verify).`
    : '';
  renderKeeper();
  const bell = state.heads.filter((m) => m.head.phase === 'merge_wait' && !m.fault && isReady(m) && !isDismissed(m)).length;
  $('#bell').hidden = bell === 0;
  $('#bell').replaceChildren(icon('bell'), ` landing bell: ${bell} ready to land`);
  $('#bell').title = 'show what needs you';
  renderBlocks();
  renderTray();
  renderComposeBlocks();
}

// testedWords says which commit a receipt's gate tested and how many of
// the block's files changed on the target since (shown only: the colour
// stays the receipts' law).
function testedWords(t) {
  if (!t || !t.commit) return '';
  const at = ` · tested ${t.commit.slice(0, 7)}`;
  if (t.changed_since === undefined) return `${at} (not in this clone)`;
  if (t.changed_since === 0) return `${at} · no block file changed since`;
  return `${at} · ${t.changed_since} block file${t.changed_since === 1 ? '' : 's'} changed since`;
}

// Each block is a row: what the store says of it, and beside it its
// missions, newest first, each opening the mission view.
function renderBlocks() {
  const now = Date.now();
  const box = $('#blocks');
  box.replaceChildren();
  $('#blocks-empty').hidden = state.blocks.length > 0;
  const missions = new Map();
  for (const m of state.heads) {
    if (!missions.has(m.head.block_id)) missions.set(m.head.block_id, []);
    missions.get(m.head.block_id).push(m);
  }
  for (const b of state.blocks) {
    const receipts = el('ul', { class: 'receipts' });
    (b.receipts || []).forEach((r, i) => {
      const rc = r.receipt || {};
      const exit = rc.evidence && rc.evidence.exit_status !== undefined ? ` · exit ${rc.evidence.exit_status}` : '';
      receipts.append(el('li', { class: 'receipt-line', text: `${rc.type} receipt · boundary v${rc.scope ? rc.scope.boundary_version : '?'}${exit} · store v${r.store_version}${testedWords((b.tested || [])[i])}` }));
    });
    if (!(b.receipts || []).length) receipts.append(el('li', { class: 'muted', text: 'no receipts' }));
    const mine = (missions.get(b.block_id) || []).sort(newestFirst);
    const list = el('ul', { class: 'block-missions' });
    for (const m of mine) {
      const l = m.head;
      const terminal = TERMINAL.includes(l.phase);
      list.append(el('li', { 'data-phase': l.phase },
        el('button', { type: 'button', class: 'link mission-link', 'data-mission': m.mission_id, title: 'open the mission', onclick: () => openMission(m.mission_id) },
          icon(l.phase), ` ${phaseLabel(l.phase)}`),
        titleOf(m) ? el('span', { class: 'mission-title' }, ' · ', ...inline(titleOf(m))) : null,
        el('span', { class: 'muted' }, ` · ${m.mission_id} · `, timeTag(terminal ? 'ended' : 'started', terminal ? l.updated_at : l.started_at, now))));
    }
    box.append(el('article', { class: 'block', id: 'block-' + b.block_id, 'data-colour': b.colour, tabindex: '0' },
      el('div', { class: 'block-info' },
        el('h3', { text: b.name }),
        el('div', { class: 'id', text: `${b.block_id} · ${b.state} · boundary v${b.boundary_version}` }),
        el('div', { class: 'colour', text: b.colour }),
        el('div', { class: 'muted', text: b.why }),
        receipts),
      el('div', { class: 'block-side' },
        el('h4', { text: mine.length ? `missions · ${mine.length}` : 'no missions yet' }),
        mine.length ? list : null)));
  }
}

// Where a waiting mission stands in the landing queue (ops.QueueView):
// ready when its gate tested exactly what the landing puts on the target.
function queueOf(m) { return (state.queue || {})[m.mission_id] || null; }
function isReady(m) { const q = queueOf(m); return !q || q.state === 'ready'; }
// What a waiting mission's gate stands on (ops.GateWord): proven by a
// runner the human approved, or an agent's claim — never the agent's
// word repeated as fact.
function proofOf(m) { const q = queueOf(m); return q && q.proof ? q.proof : null; }
function isClaim(p) { return !!p && p.standing !== 'proven'; }
// A claim waiting to be proven is landed by asking runnerd to prove it.
function canProve(q) { return !!q && q.state === 'claimed'; }

function newestFirst(a, b) { return (b.head.updated_at || '').localeCompare(a.head.updated_at || ''); }

function isStagnant(m, now) {
  return (m.head.phase === 'judging' || m.head.phase === 'executing') && now - Date.parse(m.head.updated_at) > STAGNANT_MS;
}

// What waits on the human: a landing to decide (merge wait), a failure to
// read, a mission that stopped moving. Failed first: it is pinned until
// dismissed.
function needRank(m, now) {
  if (m.head.phase === 'failed') return 0;
  if (m.head.phase === 'merge_wait') return 1;
  if (isStagnant(m, now)) return 2;
  return -1;
}

function renderTray() {
  const now = Date.now();
  const strip = $('#tray-strip');
  strip.replaceChildren();
  const counts = {};
  for (const m of state.heads) counts[m.head.phase] = (counts[m.head.phase] || 0) + 1;
  for (const p of PHASE_ORDER) {
    if (!counts[p]) continue;
    strip.append(el('div', { class: 'strip-phase', title: phaseLabel(p), 'data-phase': p },
      icon(p), el('span', { class: 'count', text: String(counts[p]) })));
  }
  // A card that had the focus keeps it through the re-render.
  const focused = document.activeElement && document.activeElement.classList.contains('card') ? document.activeElement.dataset.mission : '';
  const visible = state.heads.filter((m) => !isDismissed(m));
  $('#tray-empty').hidden = state.heads.length > 0;
  const need = visible.filter((m) => needRank(m, now) >= 0).sort((a, b) => needRank(a, now) - needRank(b, now) || newestFirst(a, b));
  const rest = visible.filter((m) => needRank(m, now) < 0).sort(newestFirst);
  $('#needs-you').hidden = need.length === 0;
  $('#needs-you-title').textContent = `Needs you · ${need.length}`;
  $('#needs-you-cards').replaceChildren(...need.map((m) => card(m, now)));
  $('#others-title').hidden = need.length === 0 || rest.length === 0;
  $('#other-cards').replaceChildren(...rest.map((m) => card(m, now)));
  if (focused) {
    const again = document.querySelector(`#cards .card[data-mission="${focused}"]`);
    if (again) again.focus({ preventScroll: true });
  }
}

// titleOf is a mission's ask line, when a runner here ran it.
function titleOf(m) { return (state.titles || {})[m.mission_id] || ''; }

function card(m, now) {
  const l = m.head;
  const meta = PHASES[l.phase] || { label: l.phase, accent: 'muted' };
  const block = blockById(l.block_id);
  const updated = Date.parse(l.updated_at);
  const terminal = TERMINAL.includes(l.phase);
  const c = el('article', { class: 'card' + (l.phase === 'failed' ? ' pinned' : ''), 'data-mission': m.mission_id, 'data-phase': l.phase, 'data-accent': meta.accent, tabindex: '0',
    'aria-label': `${titleOf(m) || (block ? block.name : l.block_id)}: ${m.mission_id}, ${meta.label} — Enter opens it` });
  // The card opens the mission view: a click on it (not on one of its
  // controls, nor one that selected text) or Enter while it has the focus.
  c.addEventListener('click', (e) => {
    if (e.target.closest('button, a, summary, input, select, textarea') || String(window.getSelection())) return;
    openMission(m.mission_id);
  });
  // On keyup: the whole key press belongs to the card, none of it to the
  // dialog's first button that takes the focus.
  c.addEventListener('keyup', (e) => {
    if (e.key === 'Enter' && e.target === c) { e.preventDefault(); openMission(m.mission_id); }
  });
  // Titled by the ask's first line, so two missions on one block differ;
  // the block is named under it.
  if (titleOf(m)) c.append(el('h3', { class: 'card-title' }, ...inline(titleOf(m))));
  c.append(el('div', {},
    el('button', { type: 'button', class: 'link block-link', text: block ? block.name : l.block_id, onclick: () => showBlock(l.block_id) }),
    el('span', { class: 'muted', text: ` · ${m.mission_id}` })));
  c.append(el('div', { class: 'meta', text: [l.seat, l.capability, l.runner_id].filter(Boolean).join(' · ') }));
  c.append(el('div', { class: 'phase' }, icon(l.phase), ` ${meta.label}`,
    el('span', { class: 'muted' }, ' · ', timeTag(terminal ? 'ended' : 'started', terminal ? l.updated_at : l.started_at, now), ` · #${l.mission_seq}`)));
  const proof = l.phase === 'merge_wait' ? proofOf(m) : null;
  const claimed = isClaim(proof);
  // One true thing per card: a mission that waits but is not ready (it
  // conflicts with the target, is re-gated, its gate failed on the merge)
  // says that, in its queue line, and not the green its letter claims.
  const q = l.phase === 'merge_wait' ? queueOf(m) : null;
  const blocked = !!q && !['ready', 'claimed', 'proving'].includes(q.state);
  if (l.verdict && l.verdict.gist && !blocked) c.append(el('div', { class: 'gist', text: claimed ? `${proof.agent} says: ${l.verdict.decision}: ${l.verdict.gist}` : `${l.verdict.decision}: ${l.verdict.gist}` }));
  if (l.gate && !blocked) {
    const failedGate = l.gate.exit_status !== undefined && l.gate.exit_status !== 0;
    const exit = l.gate.exit_status === undefined ? ' · never finished' : failedGate ? ` · failed, exit ${l.gate.exit_status}` : ` · exit ${l.gate.exit_status}`;
    c.append(el('div', { class: 'gate', text: `${claimed ? 'claimed: ' : ''}${l.gate.command}${exit}` }));
  }
  const actions = el('div', { class: 'actions' });
  if (m.fault) {
    // The laws refuse this chain (written past the hooks): shown as broken,
    // never as what it claims, and no gesture is offered on it.
    c.classList.add('broken');
    c.append(el('div', { class: 'why broken-note', text: `BROKEN: its history breaks the laws (${m.fault.refused}: ${m.fault.lesson}) — nothing proceeds on it; m1nd verify names the commit` }));
    c.append(actions);
    return c;
  }
  if (l.phase === 'merge_wait') {
    if (proof && !blocked) c.append(el('div', { class: claimed ? 'why proof' : 'muted proof', 'data-proof': proof.standing, text: `${proof.says} — ${claimed ? 'not landable as it is' : 'receipt not landed'}` }));
    if (q) c.append(queueLine(q));
    const why = gestureWhy();
    if (l.receipt_candidate && canWrite() && canProve(q)) {
      actions.append(el('button', { type: 'button', class: 'primary land prove', text: 'land…', title: 'a claim: landing it first has runnerd run an approved runner\'s gate on exactly its tree', onclick: () => prove(m) }));
    } else {
      const notReady = why || (isReady(m) ? '' : `not ready to land: ${q.why}`);
      if (l.receipt_candidate && canWrite()) actions.append(el('button', { type: 'button', class: 'primary land', text: 'land…', disabled: !!notReady, title: notReady || 'import the receipt and move the target to the tested commit, signed by your passkey', onclick: () => land(m) }));
    }
    if (canWrite()) actions.append(el('button', { type: 'button', class: 'archive', text: 'archive…', disabled: !!why, title: why || undefined, onclick: () => archive(m) }));
    if (canWrite() && why) actions.append(el('span', { class: 'why', 'data-why': 'gesture', text: why }));
    if (!canWrite()) actions.append(el('span', { class: 'why', text: `this owner is read-only: land at a terminal with m1nd land ${m.mission_id}` }));
  }
  if (l.phase === 'landed' && l.receipt) {
    c.append(el('div', { class: 'receipt', text: `receipt ✓ store v${l.receipt.store_version}` }));
    const imported = ((blockById(l.block_id) || {}).receipts || []).find((r) => r.store_version === l.receipt.store_version);
    if (imported) c.append(el('div', { class: 'muted proof', text: { 'human-passkey': 'landed by passkey', 'human-ui': 'landed by an unsigned tray claim (before passkeys)' }[imported.imported_via] || 'landed at a terminal (the weaker mode)' }));
    c.append(el('details', { class: 'provenance' },
      el('summary', { text: 'provenance' }),
      el('ol', {},
        el('li', { text: `packet ${l.packet_ref || '(none)'}` }),
        el('li', { text: `runner ${l.runner_id || '(none)'}` }),
        el('li', { text: `gate ${l.gate ? l.gate.artifact_hash : '(none)'}` }),
        el('li', { text: `receipt store v${l.receipt.store_version}` }))));
  }
  if (l.phase === 'failed') {
    // The gate's last lines say why, read from the mission view once per
    // head.
    const tail = el('pre', { class: 'tail', hidden: true, 'aria-label': 'the last lines the gate printed' });
    c.append(tail);
    if (l.gate) {
      missionView(m).then((out) => {
        const g = out && out.ok && out.view && out.view.gate;
        if (g && g.output) { tail.textContent = tailLines(g.output, 6); tail.hidden = false; }
      });
    }
    actions.append(el('button', { type: 'button', class: 'dismiss', text: 'dismiss', onclick: () => dismiss(m) }));
  }
  if (isStagnant(m, now)) {
    c.append(el('div', { class: 'muted', text: `no movement for ${elapsed(updated, now)}` }));
    actions.append(el('button', { type: 'button', class: 'dismiss-stagnant', text: 'dismiss…', onclick: async () => {
      if (await confirmDialog('Dismiss this stagnant mission?', STAGNANT_CONFIRM, 'dismiss')) dismiss(m);
    } }));
  }
  actions.append(el('button', { type: 'button', class: 'link open-view', text: 'open', title: 'the timeline, the ask, the gate output and the diff', onclick: () => openMission(m.mission_id) }));
  c.append(actions);
  return c;
}

// tailLines is the end of a gate's output, led by the lines that name a
// failure (a Go test's "--- FAIL: TestX", a panic) when the end has none.
function tailLines(output, n) {
  const lines = output.replace(/\s+$/, '').split('\n');
  const tail = lines.slice(-n);
  const named = lines.slice(0, -n).filter((line) => /--- FAIL:|^panic:|^FAIL\s/.test(line)).slice(0, 3);
  return (named.length ? [...named, '…', ...tail] : tail).join('\n');
}

// missionView reads /api/missions/<id> once per head letter.
function missionView(m) {
  const had = views.get(m.mission_id);
  if (had && had.head === m.head_letter_id) return had.p;
  const p = getJSON(`/api/missions/${encodeURIComponent(m.mission_id)}`).catch((e) => ({ ok: false, lesson: `the tray could not read the mission: ${e}` }));
  views.set(m.mission_id, { head: m.head_letter_id, p });
  return p;
}

function canWrite() { return state.policy && !state.policy.read_only; }

// Why the page cannot make a signed gesture now, or '' when it can.
function gestureWhy() {
  if (!state.passkeys || !state.passkeys.registered) return NO_PASSKEY_WHY;
  if (location.hostname !== 'localhost') return `passkeys work only at http://localhost:${location.port}/ — open the tray there`;
  return '';
}

function showBlock(id) {
  const node = document.getElementById('block-' + id);
  if (!node) { say(`block ${id} is not in this brain's store`, true); return; }
  for (const h of document.querySelectorAll('.block.highlight')) h.classList.remove('highlight');
  node.classList.add('highlight');
  node.scrollIntoView({ block: 'center' });
  node.focus();
}

// queueLine says where a waiting mission stands: ready, re-gating on a
// moved target, a conflict (its paths), a gate that failed on the merge
// (its output).
function queueLine(q) {
  const words = { ready: 'ready to land', target_moved: 'target moved — re-gating…', branch_moved: 'branch moved since its gate — re-gating…', regating: 're-gating…',
    conflict: 'conflicts with the target', gate_failed: 'gate failed on the merge', no_runner: 'cannot be re-gated here', untested_work: 'no tested commit',
    claimed: 'a claim — not proven', proving: 'proving — runnerd runs the approved gate…' };
  const div = el('div', { class: 'queue', 'data-queue': q.state },
    el('strong', { text: words[q.state] || q.state }), el('span', { class: 'muted', text: ` · ${q.why}` }));
  if (q.state === 'gate_failed' && q.output) div.append(el('pre', { class: 'tail', text: q.output }));
  return div;
}

// ---- the mission view ---------------------------------------------------

// openMission shows one mission in a dialog: its letters as a timeline,
// the ask, the gate and what it printed, and the work with its diff.
// Escape, or close, shuts it.
async function openMission(id, note) {
  const d = $('#mission');
  const body = $('#mission-body');
  d.dataset.mission = id;
  $('#mission-title').textContent = `Mission ${id}`;
  body.replaceChildren(el('p', { class: 'note', text: 'reading the mission…' }));
  if (!d.open) d.showModal();
  const out = await getJSON(`/api/missions/${encodeURIComponent(id)}`).catch((e) => ({ ok: false, lesson: `the tray could not read the mission: ${e}` }));
  if (d.dataset.mission !== id || !d.open) return; // another was opened, or it was closed
  if (!out.ok) { body.replaceChildren(el('p', { class: 'note', text: refusal(out) })); return; }
  views.set(id, { head: out.head_letter_id, p: Promise.resolve(out) });
  body.replaceChildren(...missionSections(out));
  // What a gesture made from the view said: the page's own word is under
  // the dialog.
  if (note) body.prepend(el('p', { class: 'mv-said' + (note.error ? ' error' : ''), role: 'status', text: note.text }));
  d.dataset.ready = out.head_letter_id;
}

function section(cls, title, ...children) {
  return el('section', { class: 'mv ' + cls }, el('h3', { text: title }), ...children);
}

function missionSections(out) {
  const v = out.view, l = out.head, now = Date.now();
  const m = { mission_id: out.mission_id, head_letter_id: out.head_letter_id, head: l };
  const block = blockById(v.block_id);
  const terminal = TERMINAL.includes(l.phase);
  const parts = [];
  $('#mission-title').replaceChildren(...inline(v.title || (block ? block.name : v.block_id)), ` · ${out.mission_id}`);
  parts.push(el('p', { class: 'mv-summary' }, phaseTag(l.phase), ' · block ',
    el('button', { type: 'button', class: 'link', text: block ? block.name : v.block_id, onclick: () => { $('#mission').close(); showBlock(v.block_id); } }),
    el('span', { class: 'muted', text: ` (${v.block_id})` }), ' · ',
    timeTag(terminal ? 'ended' : 'started', terminal ? l.updated_at : l.started_at, now),
    el('span', { class: 'muted', text: [l.seat, l.capability, l.runner_id].filter(Boolean).map((x) => ' · ' + x).join('') })));
  if (out.fault) {
    parts.push(el('p', { class: 'why broken-note', role: 'alert', text: `BROKEN: this mission's history breaks the laws at ${(out.fault.commit || '').slice(0, 12)} (${out.fault.refused}: ${out.fault.lesson}). It is shown as written, but nothing proceeds on it; m1nd verify names it.` }));
  } else if (l.phase === 'merge_wait' && canWrite()) {
    const why = gestureWhy();
    const q = out.queue;
    const notReady = why || (!q || q.state === 'ready' ? '' : `not ready to land: ${q.why}`);
    const again = async (gesture, words) => {
      const out = await gesture(m);
      if (out && $('#mission').open) openMission(m.mission_id, out.ok ? { text: words(out) } : { text: refusal(out), error: true });
    };
    if (q) parts.push(section('mv-queue', 'Landing queue', queueLine(q)));
    const landButton = canProve(q)
      ? el('button', { type: 'button', class: 'primary land prove', text: 'land…', title: 'a claim: landing it first has runnerd run an approved runner\'s gate on exactly its tree', onclick: () => again(prove, provingWords) })
      : el('button', { type: 'button', class: 'primary land', text: 'land…', disabled: !!notReady, title: notReady || undefined, onclick: () => again(land, landedWords) });
    parts.push(el('div', { class: 'actions' },
      l.receipt_candidate ? landButton : null,
      el('button', { type: 'button', class: 'archive', text: 'archive…', disabled: !!why, title: why || undefined, onclick: () => again(archive, () => `archived ${m.mission_id}`) }),
      why ? el('span', { class: 'why', text: why }) : null));
  }

  const timeline = el('ol', { class: 'timeline' });
  for (const t of v.timeline) {
    timeline.append(el('li', { 'data-phase': t.phase },
      el('span', { class: 'seq', text: `#${t.seq}` }), phaseTag(t.phase),
      el('span', { class: 'who', text: t.agent }), timeTag('', t.at, now),
      t.verdict ? el('span', { class: 'verdict', text: `${t.verdict.decision}: ${t.verdict.gist || ''}` }) : null));
  }
  parts.push(section('mv-timeline', 'Timeline', timeline));

  parts.push(section('mv-ask', 'The ask', v.packet
    ? el('div', { class: 'scroll packet' }, md(v.packet))
    : el('p', { class: 'note', text: v.packet_ref ? `the packet is not kept on this machine; its ref is ${v.packet_ref}` : 'this mission was opened with no packet' })));

  if (v.gate) {
    const g = v.gate, proof = out.proof;
    const failedGate = g.exit_status !== undefined && g.exit_status !== 0;
    const exit = el('span', { class: 'muted', text: g.exit_status === undefined ? (l.phase === 'gate' ? ' · still running' : ' · never finished') : ` · exit ${g.exit_status}` });
    const gate = [];
    if (failedGate) gate.push(el('p', { class: 'why gate-failed' }, 'the gate ', el('code', { text: g.command }), ` failed: exit ${g.exit_status}`));
    else if (!proof) gate.push(el('p', {}, 'the gate ', el('code', { text: g.command }), exit));
    else if (proof.standing === 'proven') gate.push(el('p', {}, `${proof.says}: its approved gate `, el('code', { text: g.command }), exit, ' ran on exactly the tree that lands'));
    else gate.push(el('p', { class: 'why proof', 'data-proof': proof.standing }, `${proof.says}: the gate `, el('code', { text: g.command }), exit, ` is ${proof.agent}'s word, and no runner you approved ran it`));
    if (g.output) {
      if (g.truncated) gate.push(el('p', { class: 'note', text: `the last 64 KiB; m1nd mission gate ${out.mission_id} prints the whole` }));
      gate.push(el('pre', { class: 'scroll gate-output', text: g.output }));
    } else {
      gate.push(el('p', { class: 'note', text: g.kept ? 'the gate printed nothing' : 'no gate output is kept on this machine (its gate ran elsewhere)' }));
    }
    parts.push(section('mv-gate', 'Gate', ...gate));
  } else {
    parts.push(section('mv-gate', 'Gate', el('p', { class: 'note', text: 'no gate has run yet' })));
  }

  // The agent's own output, folded: what it said while it worked.
  if (v.agent) {
    const a = v.agent;
    parts.push(section('mv-agent', 'Agent output', a.output
      ? el('details', { class: 'agent-output' },
        el('summary', { text: `what the agent printed${a.truncated ? ` (the last 64 KiB; m1nd mission output ${out.mission_id} prints the whole)` : ''}` }),
        el('pre', { class: 'scroll agent-log', text: a.output }))
      : el('p', { class: 'note', text: 'the agent printed nothing' })));
  }

  const thread = reviewsSection(v, now);
  if (thread) parts.push(thread);
  // The work can be reviewed while it waits to land, or failed (a retry).
  const changed = [];
  const reviewable = !out.fault && canWrite() && (l.phase === 'merge_wait' || l.phase === 'failed');
  const rv = reviewable && v.work ? reviewer(out.mission_id, () => changed.forEach((f) => f())) : null;
  parts.push(section('mv-work', 'Work', ...workParts(v.work, out.mission_id, now, rv)));
  if (reviewable) parts.push(reviewSection(out, changed));
  return parts;
}

function workParts(w, id, now, rv) {
  if (!w) return [el('p', { class: 'note', text: `no branch m1nd/${id} in this repository: the mission was carried by hand or elsewhere, and its letters are all there is` })];
  const parts = [el('p', {}, el('code', { text: w.branch }), ' → ',
    w.target ? el('code', { text: w.target }) : el('span', { class: 'muted', text: 'no target recorded (m1nd land --into BRANCH)' }),
    el('span', { class: 'muted', text: ` · from ${w.base.slice(0, 12)}` }))];
  const commits = el('ul', { class: 'commits' });
  for (const c of w.commits) {
    commits.append(el('li', {}, el('code', { text: c.commit.slice(0, 12), title: c.commit }), ` ${c.subject} `,
      el('span', { class: 'muted' }, `${c.author} · `, timeTag('', c.at, now))));
  }
  if (!w.commits.length) commits.append(el('li', { class: 'muted', text: w.target ? `no commits beyond ${w.target}` : 'no commits since the base' }));
  parts.push(commits);
  parts.push(el('p', { class: 'totals', text: `${w.files.length} file${w.files.length === 1 ? '' : 's'} changed · +${w.added} −${w.deleted}` }));
  const chunks = splitDiff(w.diff);
  const files = el('div', { class: 'files' });
  chunks.forEach((chunk, i) => files.append(fileDiff(chunk, chunks.length === w.files.length ? w.files[i] : null, rv)));
  parts.push(files);
  if (w.truncated) parts.push(el('p', { class: 'note', text: `the diff is cut at 512 KiB; m1nd mission diff ${id} prints the whole` }));
  return parts;
}

// splitDiff cuts git's diff into its files.
function splitDiff(diff) {
  const chunks = [];
  let cur = null;
  for (const line of (diff || '').replace(/\n$/, '').split('\n')) {
    if (line.startsWith('diff --git ')) { cur = { header: line, lines: [] }; chunks.push(cur); }
    if (cur) cur.lines.push(line);
  }
  return chunks;
}

// fileDiff is one file's diff, folded when it is long: its lines are drawn
// only once it is opened, each with its line numbers (old, new). While the
// work can be reviewed (rv), a new line's number is a button that opens a
// comment on that line.
function fileDiff(chunk, f, rv) {
  const path = f ? f.path : (chunk.header.match(/ b\/(.*)$/) || [null, chunk.header.slice(11)])[1];
  const counts = !f ? '' : f.added < 0 ? ' binary' : ` +${f.added} −${f.deleted}`;
  const long = chunk.lines.length > FOLD_LINES;
  const d = el('details', { class: 'file-diff', 'data-path': path },
    el('summary', {}, el('code', { text: path }), el('span', { class: 'counts', text: counts }),
      long ? el('span', { class: 'muted', text: ` · ${chunk.lines.length} lines, folded` }) : null));
  const lang = languageOf(path);
  const draw = () => {
    if (d.querySelector('pre')) return;
    const pre = el('pre', { class: 'diff' });
    let oldN = 0, newN = 0, inHunk = false;
    for (const line of chunk.lines) {
      const hunk = line.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/);
      const meta = !inHunk && /^(diff --git |index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode|Binary )/.test(line);
      let cls = '', o = '', n = '';
      if (hunk) { oldN = +hunk[1]; newN = +hunk[2]; inHunk = true; cls = 'hunk'; }
      else if (meta) cls = 'meta';
      else if (line.startsWith('+')) { cls = 'add'; n = newN++; }
      else if (line.startsWith('-')) { cls = 'del'; o = oldN++; }
      else if (line.startsWith('\\')) cls = 'meta';
      else if (inHunk) { o = oldN++; n = newN++; }
      const at = n === '' ? el('span', { class: 'ln' }) : rv
        ? el('button', { type: 'button', class: 'ln comment-at', 'data-line': n, title: `comment on ${path}:${n}`, 'aria-label': `comment on ${path} line ${n}`, text: String(n), onclick: (e) => { e.preventDefault(); rv.open(path, n, row); } })
        : el('span', { class: 'ln', text: String(n) });
      const code = (o !== '' || n !== '') && lang
        ? el('span', { class: 'code' }, line.slice(0, 1), ...highlighted(line.slice(1), lang), '\n')
        : el('span', { class: 'code', text: line + '\n' });
      const row = el('span', { class: 'dl' + (cls ? ' ' + cls : ''), 'data-new': n === '' ? undefined : n },
        el('span', { class: 'ln', text: String(o) }), at, code);
      pre.append(row);
      if (rv && n !== '') rv.marks(path, n, row);
    }
    d.append(pre);
  };
  if (long) d.addEventListener('toggle', () => { if (d.open) draw(); });
  else { d.open = true; draw(); }
  return d;
}

// languageOf is the highlight.js language of a file, by its extension
// (highlight.js knows the usual ones as aliases); '' when none, or when
// the highlighter did not load.
function languageOf(path) {
  const hl = window.hljs;
  const ext = (path.match(/\.([A-Za-z0-9]+)$/) || [])[1];
  if (!hl || !ext) return '';
  return hl.getLanguage(ext.toLowerCase()) ? ext.toLowerCase() : '';
}

// highlighted is one line of code as highlight.js colours it, rebuilt as
// elements: only its <span class="hljs-…"> and their text are kept, so
// nothing else it could emit becomes markup of the page.
function highlighted(code, lang) {
  let html;
  try { html = window.hljs.highlight(code, { language: lang, ignoreIllegals: true }).value; } catch (e) { return [code]; }
  const t = document.createElement('template');
  t.innerHTML = html;
  const copy = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent);
    const cls = node.nodeName === 'SPAN' ? (node.getAttribute('class') || '').split(/\s+/).filter((c) => /^hljs-[\w-]+$/.test(c)).join(' ') : '';
    const out = cls ? el('span', { class: cls }) : document.createDocumentFragment();
    for (const c of node.childNodes) out.append(copy(c));
    return out;
  };
  return [...t.content.childNodes].map(copy);
}

// ---- review -------------------------------------------------------------

// drafts are the reviews being written, by mission id: the comments on
// lines and the body, kept while the view is drawn again.
const drafts = new Map();
const REVIEW_STATES = { CHANGE: 'changes requested', APPROVE: 'approved', COMMENT: 'comments' };

function draftOf(id) {
  if (!drafts.has(id)) drafts.set(id, { comments: [], body: '' });
  return drafts.get(id);
}

// reviewer is what the diff of a reviewable mission calls to open a
// comment on a line and to show the comments written on it so far.
function reviewer(id, onChange) {
  const d = draftOf(id);
  const mark = (c, row) => {
    const box = el('div', { class: 'comment-draft', 'data-path': c.path, 'data-line': c.line },
      el('strong', { text: 'your comment' }), el('span', { class: 'muted', text: ` on line ${c.line}` }), el('div', { class: 'comment-text', text: c.text }),
      el('button', { type: 'button', class: 'link remove-comment', text: 'remove', onclick: () => { d.comments.splice(d.comments.indexOf(c), 1); box.remove(); onChange(); } }));
    row.after(box);
  };
  return {
    open(path, line, row) {
      const next = row.nextElementSibling;
      if (next && next.classList.contains('comment-box')) { next.querySelector('textarea').focus(); return; }
      const text = el('textarea', { rows: 3, class: 'comment-input', 'aria-label': `comment on ${path} line ${line}`, placeholder: `what should change at ${path}:${line}?` });
      const box = el('div', { class: 'comment-box' }, text,
        el('div', { class: 'actions' },
          el('button', { type: 'button', class: 'primary add-comment', text: 'add comment', onclick: () => {
            if (!text.value.trim()) { text.focus(); return; }
            const c = { path, line, text: text.value.trim() };
            d.comments.push(c);
            box.remove();
            mark(c, row);
            onChange();
          } }),
          el('button', { type: 'button', class: 'link', text: 'cancel', onclick: () => box.remove() })));
      row.after(box);
      text.focus();
    },
    marks(path, line, row) {
      for (const c of d.comments) if (c.path === path && c.line === line) mark(c, row);
    },
  };
}

// reviewSection is where the human reviews the work: the comments written
// on lines so far, a body, and what to do with them. On a failed mission
// it offers the retry.
function reviewSection(out, changed) {
  const id = out.mission_id, l = out.head, d = draftOf(id);
  const agent = (out.view.timeline[out.view.timeline.length - 1] || {}).agent || 'its agent';
  const list = el('ul', { class: 'review-comments' });
  const count = el('p', { class: 'muted review-count' });
  const redraw = () => {
    list.replaceChildren(...d.comments.map((c) => el('li', {}, el('code', { text: `${c.path}:${c.line}` }), ' ', c.text)));
    count.textContent = d.comments.length ? `${d.comments.length} comment${d.comments.length === 1 ? '' : 's'} on lines` : 'no comments on lines yet: click a line number in the diff';
  };
  changed.push(redraw);
  redraw();
  const body = el('textarea', { id: 'review-body', rows: 3, 'aria-label': 'the review, on the whole work', placeholder: l.phase === 'failed' ? 'what to do differently (empty: the gate\'s failing output)' : 'on the whole work' });
  body.value = d.body;
  body.addEventListener('input', () => { d.body = body.value; });
  const send = async (decision) => {
    const res = await postJSON(`/api/missions/${encodeURIComponent(id)}/review`, { decision, body: d.body, comments: d.comments.map(({ path, line, text }) => ({ path, line, text })) });
    if (res.ok) {
      drafts.delete(id);
      const words = `review of ${id} sent to ${res.to}: ${REVIEW_STATES[res.review.decision]}` + (res.letter ? ` — the agent works again; its fix is gated as round ${res.review.round + 1}` : '');
      say(words);
      openMission(id, { text: words });
      refresh();
    } else {
      openMission(id, { text: refusal(res), error: true });
    }
  };
  const buttons = l.phase === 'failed'
    ? [el('button', { type: 'button', class: 'primary review-change retry', text: 'retry', title: 'request changes: runnerd runs the agent again on its branch, with this review (or the gate\'s output) in its packet', onclick: () => send('CHANGE') })]
    : [el('button', { type: 'button', class: 'review-comment', text: 'comment', title: 'send the comments to the agent; the mission keeps waiting', onclick: () => send('COMMENT') }),
      el('button', { type: 'button', class: 'primary review-change', text: 'request changes', title: 'runnerd runs the agent again on its branch with this review, and gates its fix', onclick: () => send('CHANGE') }),
      el('button', { type: 'button', class: 'review-approve', text: 'approve', title: 'tell the agent the work is good (landing stays yours)', onclick: () => send('APPROVE') })];
  return section('mv-review', 'Review',
    el('p', { class: 'note', text: `the review goes to ${agent} as one letter: it hears it at its next tool call, or the keeper wakes it` }),
    count, list, body, el('div', { class: 'actions' }, ...buttons));
}

// reviewsSection is the thread: each review, its comments by file and
// line, the agent's answers, and the commit that addressed it.
function reviewsSection(v, now) {
  if (!v.reviews || !v.reviews.length) return null;
  const list = el('ol', { class: 'reviews' });
  for (const r of v.reviews) {
    const li = el('li', { class: 'review', 'data-round': r.round, 'data-decision': r.decision },
      el('p', { class: 'review-head' }, el('strong', { text: `Round ${r.round} · ${REVIEW_STATES[r.decision] || r.decision}` }),
        el('span', { class: 'muted' }, ` · by ${r.by} · `, timeTag('', r.at, now), r.recorded ? ` · recorded as letter ${r.recorded}` : '')));
    if (r.body) li.append(md(r.body));
    if (r.comments && r.comments.length) {
      li.append(el('ul', { class: 'review-thread-comments' }, ...r.comments.map((c) => el('li', { 'data-path': c.path, 'data-line': c.line },
        el('code', { text: `${c.path}:${c.line}` }), el('span', { class: 'muted', text: ` at ${c.commit.slice(0, 12)}` }), el('div', { class: 'comment-text' }, md(c.text))))));
    }
    for (const a of r.answers || []) {
      li.append(el('div', { class: 'answer' }, el('span', { class: 'muted' }, 'the agent answered · ', timeTag('', a.at, now)), md(a.what)));
    }
    if (r.addressed_by) li.append(el('p', { class: 'addressed' }, 'addressed by ', el('code', { text: r.addressed_by.slice(0, 12), title: r.addressed_by }), `, gated as round ${r.round + 1}`));
    list.append(li);
  }
  return section('mv-reviews', 'Reviews', list);
}

// ---- the human gestures --------------------------------------------------

// signedGesture makes one gesture signed by the owner's passkey: the
// server prepares the exact commit and hands out its challenge under an id
// of its own, with what the signature binds; the confirm dialog shows that
// (title and text are the page's words around it); the browser's
// authenticator signs it; and the commit, by that id, verifies the
// assertion and writes. It returns the gesture's reply or a refusal; a
// confirm or a prompt the user cancelled returns { ok: false, cancelled: true }.
async function signedGesture(body, title, text, okLabel) {
  let opts = await postJSON('/api/gesture/options', body);
  if (!opts.ok && opts.field === 'session') {
    // The brain has a key and this page no session yet: one passkey
    // touch logs in, then the gesture is asked for again.
    const in_ = await login();
    if (!in_.ok) return in_;
    opts = await postJSON('/api/gesture/options', body);
  }
  // A landing cut short after its import is finished by its options alone:
  // the store already holds the import signed for this very mission.
  if (!opts.ok || opts.done) return opts;
  if (!(await confirmDialog(title, text, okLabel, opts.binds))) return { ok: false, cancelled: true, declined: true };
  const a = await assertion(opts);
  if (!a.ok) return a;
  return postJSON('/api/gesture/commit', { gesture_id: opts.gesture_id, credential: a.credential });
}

const CANCELLED = 'not signed: the passkey prompt was cancelled — nothing changed';

// A landing is one signed gesture (DESIGN §10): the confirm names the
// block and what will move, the server runs the landing dry (a conflict,
// a dirty worktree, a store that moved are refused before any prompt),
// the passkey signs the import, and the server imports the receipt,
// merges m1nd/<id> into the target branch and posts landed.
async function land(m) {
  const block = blockById(m.head.block_id);
  const name = block ? `${block.name} (${block.block_id})` : m.head.block_id;
  const shown = await missionView(m);
  const w = shown && shown.ok && shown.view ? shown.view.work : null;
  let merge;
  if (!shown || !shown.ok) merge = `(The tray could not read its work: ${refusal(shown || {})}.)`;
  else if (!w) merge = 'There is no branch to merge: only the receipt lands.';
  else if (w.target) merge = `It merges ${w.branch} (${w.commits.length} commit${w.commits.length === 1 ? '' : 's'}, +${w.added} −${w.deleted}) into ${w.target}.`;
  else merge = `It would merge ${w.branch}, but no target branch is recorded for it here: land it at a terminal with m1nd land ${m.mission_id} --into BRANCH.`;
  const proof = proofOf(m) || (shown && shown.ok ? shown.proof : null);
  const gate = !m.head.gate ? '' : proof && proof.standing === 'proven'
    ? ` ${proof.says}: its approved gate \`${m.head.gate.command}\` passed (exit ${m.head.gate.exit_status}) on exactly the tree that lands.`
    : ` The gate \`${m.head.gate.command}\` is ${proof ? proof.says : 'not proven'}.`;
  const text = `Block ${name}. Landing imports the receipt its gate proved into the brain's store. ${merge}${gate} Your passkey signs it.`;
  const out = await signedGesture({ gesture: 'land', mission_id: m.mission_id }, `Land ${m.mission_id}?`, text, 'land');
  if (out.declined) return null;
  if (out.cancelled) { say(CANCELLED); return null; }
  if (!out.ok) say(refusal(out), true); else say(landedWords(out));
  await refresh();
  return out;
}

// A claim is landed in two steps (DESIGN §10): runnerd first runs an
// approved runner's gate on exactly the claimed tree — green, the mission
// waits again, proven, and land… signs the landing; red, it ends failed.
async function prove(m) {
  const p = proofOf(m);
  const text = `${p ? p.says : 'This gate is a claim'}. Nothing lands on a claim: landing it first has runnerd run an approved runner's gate on exactly the tree it names. If that gate passes, the mission waits again, proven, and you land it then; if it fails, the mission ends failed and nothing moves.`;
  if (!(await confirmDialog(`Prove ${m.mission_id} before landing?`, text, 'run the approved gate'))) return null;
  const out = await postJSON('/api/prove', { mission_id: m.mission_id });
  if (!out.ok) say(refusal(out), true); else say(provingWords(out));
  await refresh();
  return out;
}

// provingWords says what a proof request asked of runnerd.
function provingWords(r) {
  return `${r.already_asked ? 'runnerd was already asked to run' : 'asked runnerd to run'} runner ${r.runner}'s approved gate on exactly tree ${(r.tree || '').slice(0, 12)} of ${r.mission_id}: land it once it is proven`;
}

// landedWords says what a landing did.
function landedWords(r) {
  if (r.already_landed) return `${r.mission_id} was already landed`;
  const how = {
    'fast-forward': `fast-forward ${r.branch} into ${r.target}`,
    merge: `merged ${r.branch} into ${r.target} (merge commit ${(r.commit || '').slice(0, 12)})`,
    'up-to-date': `${r.target} already held ${r.branch}`,
    'no-branch': 'no branch to merge',
  }[r.merge] || r.merge;
  return `landed ${r.mission_id}: ${how} · receipt ✓ store v${r.store_version}`;
}

// Archive sets a merge_wait head aside. The confirm compares, live, the
// boundary the candidate was proved at with the block's boundary now; the
// passkey then signs the archive, and the server writes the archived letter.
async function archive(m) {
  const blocks = await getJSON('/api/system_blocks');
  const cand = m.head.receipt_candidate;
  const block = (blocks.blocks || []).find((b) => b.block_id === (cand ? cand.block_id : m.head.block_id));
  let text;
  if (!cand || !block) text = 'This mission carries no receipt to import. Archive it?';
  else if (cand.scope.boundary_version !== block.boundary_version || cand.scope.contract_version !== block.contract_version)
    text = `proved at boundary v${cand.scope.boundary_version} — the block is at v${block.boundary_version}. Archiving sets the receipt aside and drops the landing bell.`;
  else text = `still importable — proved at boundary v${cand.scope.boundary_version}, the block's boundary now. Archive anyway?`;
  const out = await signedGesture({ gesture: 'archive', mission_id: m.mission_id }, `Archive ${m.mission_id}?`, text, 'archive');
  if (out.declined) return null;
  if (out.cancelled) { say(CANCELLED); return null; }
  if (!out.ok) say(refusal(out), true); else say(`archived ${m.mission_id}`);
  await refresh();
  return out;
}

// ---- compose ------------------------------------------------------------

function renderComposeBlocks() {
  const sel = $('#compose-block');
  const keep = sel.value;
  sel.replaceChildren(...state.blocks.map((b) => el('option', { value: b.block_id, text: `${b.name} (${b.block_id})` })));
  if (keep) sel.value = keep;
}

function renderPolicy() {
  $('#read-only-banner').hidden = !state.policy.read_only;
  renderRunners();
  const modes = state.policy.modes;
  for (const input of document.querySelectorAll('input[name="mode"]')) {
    const mode = modes[input.value];
    input.disabled = !mode.available;
    document.querySelector(`[data-why="${input.value}"]`).textContent = mode.available ? '' : `— ${mode.why}`;
    if (input.checked && input.disabled) $('input[value="clipboard"]').checked = true;
  }
  updateComposeNote();
}

function mode() { return document.querySelector('input[name="mode"]:checked').value; }

// Only the chosen mode's fields show: the agent to deliver to for direct,
// the runner for spawn.
function updateComposeNote() {
  const m = mode();
  $('#compose-agent-label').hidden = m !== 'direct';
  $('#compose-runner-label').hidden = m !== 'spawn';
  $('#compose-note').textContent = {
    clipboard: 'clipboard: the packet is composed and copied; nothing is posted.',
    direct: "direct: posted to the agent's inbox — delivery is not execution.",
    spawn: `spawn: runner ${runnerForSpawn() || '?'} runs the mission in a sibling worktree, up to merge wait; you land it here.`,
  }[m];
  $('#compose-go').textContent = m === 'clipboard' ? 'compose and copy' : m === 'direct' ? 'post and deliver' : 'spawn';
}

// The runner picker lists the live pinned build-runners; a choice holds
// while its runner stays live.
function renderRunners() {
  const sel = $('#compose-runner');
  const keep = sel.value;
  const live = (state.policy && state.policy.build_runners) || [];
  sel.replaceChildren(...live.map((r) => el('option', { value: r, text: r })));
  if (live.includes(keep)) sel.value = keep;
}

function runnerForSpawn() { return $('#compose-runner').value || ''; }

// Compose opens where the human looks: at the top of the page, focused.
function openCompose() {
  const box = $('#compose');
  box.hidden = false;
  box.scrollIntoView({ block: 'start' });
  $('#compose-block').focus({ preventScroll: true });
}

// The bell goes to what needs the human: the tray opens, the lane scrolls
// into view and its first merge wait takes the focus.
function showNeedsYou() {
  setTray(true);
  const lane = $('#needs-you');
  if (lane.hidden) return;
  lane.scrollIntoView({ block: 'start' });
  (lane.querySelector('.card[data-phase="merge_wait"]') || lane).focus({ preventScroll: true });
}

async function compose() {
  const blockID = $('#compose-block').value;
  if (!blockID) { say('no block to compose for: scan the skeleton first', true); return; }
  const packet = await getJSON(`/api/packet?block_id=${encodeURIComponent(blockID)}&ask=${encodeURIComponent($('#compose-ask').value)}`);
  if (!packet.ok) { say(refusal(packet), true); return; }
  $('#compose-packet').value = packet.markdown;
  $('#compose-packet').hidden = false;
  const m = mode();
  if (m === 'clipboard') {
    const area = $('#compose-packet');
    try { await navigator.clipboard.writeText(packet.markdown); } catch (e) { area.select(); document.execCommand('copy'); }
    say(`packet copied (${packet.packet_ref.slice(0, 19)}…); nothing was posted`);
    return;
  }
  if (m === 'spawn') {
    if (!runnerForSpawn()) { say('no live pinned build-runner to spawn on', true); return; }
    const res = await fetch('/api/mission_spawn', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ runner_id: runnerForSpawn(), block_id: blockID, packet_markdown: packet.markdown }) });
    const out = await res.json();
    if (!out.accepted) { say(refusal(out), true); return; }
    say(`runner ${out.runner_id} accepted ${out.mission_id}`);
    await refresh();
    return;
  }
  if (m === 'direct') {
    const to = $('#compose-agent').value.trim();
    if (!to) { say('direct delivery needs the agent to deliver to', true); return; }
    const out = await postJSON('/api/mission_new', { block_id: blockID, agent_id: 'owner', packet_markdown: packet.markdown, deliver_to: to });
    if (!out.ok) { say(refusal(out), true); return; }
    say(`opened ${out.mission.mission_id}; posted to ${to}'s inbox — delivery is not execution`);
    await refresh();
  }
}

// ---- the human's session ---------------------------------------------------

// Once the brain has a passkey, the page logs in with it (one touch): the
// owner then takes gestures and gives a live event stream only to this
// session, so no other process on the machine can ask for the human's
// gestures or use up the page's stream. Without a session the page reads
// and polls.
function renderSession() {
  const s = state.session;
  const needed = !!(s && s.needed);
  $('#session-line').hidden = !needed;
  $('#login').hidden = !needed || s.logged_in;
  $('#session-note').textContent = !needed ? '' : s.logged_in
    ? `logged in with your passkey until ${new Date(s.expires_at).toLocaleTimeString()}`
    : 'read-only until you log in: gestures and the live view need your passkey';
  liveOrPoll();
}

// assertion asks the browser's authenticator to sign the options' challenge.
async function assertion(opts) {
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return { ok: false, lesson: `this browser signs nothing here: open http://localhost:${location.port}/` };
  }
  const publicKey = Object.assign({}, opts.publicKey, {
    challenge: fromB64url(opts.publicKey.challenge),
    allowCredentials: (opts.publicKey.allowCredentials || []).map((c) => Object.assign({}, c, { id: fromB64url(c.id) })),
  });
  let a;
  try {
    a = await navigator.credentials.get({ publicKey });
  } catch (e) {
    // NotAllowedError is what a browser says for a prompt cancelled or
    // timed out, and says nothing more on purpose.
    if (e && (e.name === 'NotAllowedError' || e.name === 'AbortError')) return { ok: false, cancelled: true };
    return { ok: false, lesson: `the passkey made no signature: ${e.message || e}` };
  }
  if (!a) return { ok: false, cancelled: true };
  const r = a.response;
  return { ok: true, credential: { id: toB64url(a.rawId), response: {
    authenticatorData: toB64url(r.authenticatorData), clientDataJSON: toB64url(r.clientDataJSON), signature: toB64url(r.signature),
  } } };
}

async function login() {
  const opts = await postJSON('/api/session/options', {});
  if (!opts.ok) return opts;
  const a = await assertion(opts);
  if (!a.ok) return a;
  const out = await postJSON('/api/session/login', { credential: a.credential });
  if (out.ok) {
    state.session = out;
    renderSession();
    say('logged in with your passkey');
  }
  return out;
}

// liveOrPoll keeps the page current: the owner's event stream where the
// page may have one (no key yet, or logged in), else a look every 10 s.
let events = null;
let poll = null;
function liveOrPoll() {
  const s = state.session;
  const live = !s || !s.needed || s.logged_in;
  if (live && !events) {
    if (poll) { clearInterval(poll); poll = null; }
    events = new EventSource('/api/events');
    events.addEventListener('refs', () => refresh());
    events.addEventListener('queue', () => refresh()); // a branch moved, or runnerd's queue found something
  } else if (!live && !poll) {
    if (events) { events.close(); events = null; }
    poll = setInterval(() => refresh(), 10000);
  }
  document.body.dataset.live = String(live);
}

// ---- passkeys ------------------------------------------------------------

// The owner's first passkey is registered here with the one-time code that
// `m1nd serve` printed on its terminal. WebAuthn wants binary fields; the
// server speaks base64url.
function fromB64url(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out.buffer;
}

function toB64url(buf) {
  let b = '';
  for (const byte of new Uint8Array(buf)) b += String.fromCharCode(byte);
  return btoa(b).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function renderPasskeys() {
  const p = state.passkeys;
  const keys = p ? p.keys : [];
  const line = $('#passkey-line');
  line.hidden = keys.length === 0;
  line.textContent = keys.length ? (keys.length > 1 ? 'passkeys: ' : 'passkey: ') + keys.map((k) => k.label).join(', ') : '';
  line.title = p && p.set_fingerprint ? `key set ${p.set_fingerprint}: what a remote's admin trusts (hooks install --bare --trust-key) and a teammate's first sync names (m1nd sync --trust)` : '';
  renderKeys();
  const panel = $('#passkey');
  if (state.justRegistered) {
    panel.hidden = false;
    panel.classList.add('done');
    panel.querySelector('.passkey-fields').hidden = true;
    panel.querySelector('.note').hidden = true;
    $('#passkey-title').textContent = 'Passkey registered';
    $('#passkey-note').textContent = `passkey registered: ${state.justRegistered}`;
    return;
  }
  panel.hidden = !(p && !p.registered && p.registration && canWrite());
  if (!panel.hidden && location.hostname !== 'localhost') {
    $('#passkey-note').textContent = `passkeys work only at http://localhost:${location.port}/ — open the tray there`;
  }
}

// makePasskey asks the server for creation options and the browser for a
// new passkey; it returns { ok, credential } with the credential as JSON,
// or says in note why none was made.
async function makePasskey(note) {
  const opts = await postJSON('/api/passkey/options', {});
  if (!opts.ok) { note.textContent = refusal(opts); return { ok: false }; }
  const publicKey = opts.publicKey;
  publicKey.challenge = fromB64url(publicKey.challenge);
  publicKey.user.id = fromB64url(publicKey.user.id);
  for (const c of publicKey.excludeCredentials || []) c.id = fromB64url(c.id);
  note.textContent = 'your browser asks for a passkey…';
  let cred;
  try {
    cred = await navigator.credentials.create({ publicKey });
  } catch (e) {
    note.textContent = `no passkey was made: ${e.message || e}`;
    return { ok: false };
  }
  const r = cred.response;
  return { ok: true, credential: {
    id: cred.id, rawId: toB64url(cred.rawId), type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment || undefined,
    clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
    response: {
      clientDataJSON: toB64url(r.clientDataJSON), attestationObject: toB64url(r.attestationObject),
      transports: r.getTransports ? r.getTransports() : [],
    },
  } };
}

async function registerPasskey() {
  const code = $('#passkey-code').value.trim();
  const label = $('#passkey-label').value.trim();
  const note = $('#passkey-note');
  if (!code) { note.textContent = 'type the code `m1nd serve` printed on its terminal'; $('#passkey-code').focus(); return; }
  if (!window.PublicKeyCredential || !navigator.credentials) { note.textContent = `this browser makes no passkeys here: open http://localhost:${location.port}/`; return; }
  const go = $('#passkey-go');
  go.disabled = true;
  try {
    const made = await makePasskey(note);
    if (!made.ok) return;
    const out = await postJSON('/api/passkey/register', { code, label, credential: made.credential });
    if (!out.ok) { note.textContent = refusal(out); return; }
    state.justRegistered = label || 'passkey';
    say('passkey registered');
    await refresh();
  } finally {
    go.disabled = false;
  }
}

// The registered passkeys, each with its remove button, and "add another
// passkey": both are the gesture "keys", signed by a passkey the brain
// already holds (the server refuses removing the last one).
function renderKeys() {
  const p = state.passkeys;
  const box = $('#keys');
  box.hidden = !(p && p.registered);
  if (box.hidden) return;
  const write = canWrite() && !gestureWhy();
  const list = $('#keys-list');
  list.replaceChildren(...p.keys.map((k) => el('li', { 'data-credential': k.credential_id },
    el('span', { class: 'key-label', text: k.label }),
    el('span', { class: 'muted', text: `added ${k.added_at} · fingerprint ${k.fingerprint}`, title: k.credential_id }),
    write ? el('button', { type: 'button', class: 'remove-key', text: 'remove', onclick: () => removePasskey(k) }) : null)));
  $('#keys-add').hidden = !write;
}

// keysGesture signs a change of the key set and says how it went.
async function keysGesture(body, done, title, text) {
  const note = $('#keys-note');
  note.textContent = 'sign the change with a passkey this brain already holds…';
  const out = await signedGesture(body, title, text, 'sign');
  if (out.declined) { note.textContent = ''; return; }
  if (out.cancelled) { note.textContent = CANCELLED; say(CANCELLED); return; }
  if (!out.ok) { note.textContent = refusal(out); say(refusal(out), true); await refresh(); return; }
  note.textContent = `${done} — key set v${out.keys_version}, ${out.keys} passkey${out.keys === 1 ? '' : 's'}`;
  say(done);
  await refresh();
}

async function addPasskey() {
  const note = $('#keys-note');
  if (!window.PublicKeyCredential || !navigator.credentials) { note.textContent = `this browser makes no passkeys here: open http://localhost:${location.port}/`; return; }
  const label = $('#keys-label').value.trim();
  const go = $('#keys-go');
  go.disabled = true;
  try {
    const made = await makePasskey(note);
    if (!made.ok) return;
    await keysGesture({ gesture: 'keys', label, credential: made.credential }, `passkey added: ${label || 'passkey'}`,
      `Add passkey ${label || 'passkey'}?`, 'A passkey this brain already holds signs the new key set.');
    $('#keys-label').value = '';
  } finally {
    go.disabled = false;
  }
}

async function removePasskey(k) {
  const text = `What ${k.label} signed until now stands; nothing it signs after its removal counts, on any clone or remote. A passkey this brain holds (this one too) signs the removal.`;
  await keysGesture({ gesture: 'keys', remove: k.credential_id }, `passkey removed: ${k.label}`, `Remove passkey ${k.label}?`, text);
}

// A teammate's passkey joins the brain in two steps: in their own tray
// (whose brain holds keys their authenticator does not) they make the
// passkey and copy the enrolment request; here, someone who holds a key
// pastes it and signs the new key set. Compare the fingerprint with them.
async function requestEnrolment() {
  const note = $('#keys-note');
  if (!window.PublicKeyCredential || !navigator.credentials) { note.textContent = `this browser makes no passkeys here: open http://localhost:${location.port}/`; return; }
  const label = $('#keys-label').value.trim();
  const made = await makePasskey(note);
  if (!made.ok) return;
  const out = await postJSON('/api/passkey/enrolment', { label, credential: made.credential });
  if (!out.ok) { note.textContent = refusal(out); return; }
  $('#enrol-request').value = out.enrolment;
  $('#enrol-request').hidden = false;
  note.textContent = `enrolment request made for ${out.label} (fingerprint ${out.fingerprint}): send it to someone who holds a passkey of this brain; it counts once they sign it`;
}

async function enrolTeammate() {
  const code = $('#enrol-code').value.trim();
  if (!code) { $('#keys-note').textContent = 'paste the enrolment request your teammate copied from their tray'; return; }
  await keysGesture({ gesture: 'keys', enrol: code }, 'teammate\'s passkey added', 'Add a teammate\'s passkey?',
    'Compare the fingerprint below with the one your teammate\'s tray showed them. A passkey this brain already holds signs the new key set.');
  $('#enrol-code').value = '';
}

// ---- runner pins -----------------------------------------------------------

// The build runners of runners.toml and whether a passkey approved their
// pins; approving them is the gesture "pins".
function renderPins() {
  const p = state.pins;
  const box = $('#pins');
  box.hidden = !(p && p.runners.length);
  if (box.hidden) return;
  const words = { approved: 'approved', changed: 'CHANGED since approved (its gate, command or runnerd key) — runnerd will not run it', new: 'not approved yet — runnerd will not run it' };
  $('#pins-list').replaceChildren(...p.runners.map((r) => el('li', { 'data-runner': r.id, 'data-state': r.state },
    el('code', { text: r.id }), ' gate ', el('code', { text: r.gate_command }), ` · runnerd key ${r.fingerprint || '?'} · `,
    el('span', { class: r.state === 'approved' ? 'muted' : 'why', text: words[r.state] }))));
  const pending = p.runners.some((r) => r.state !== 'approved');
  $('#pins-go').hidden = !(pending && canWrite() && !gestureWhy());
  $('#pins-note').replaceChildren(...(p.problem ? inline(`runners.toml does not load: ${p.problem}`) : []));
  const c = $('#pins-containment');
  c.hidden = !p.containment;
  c.className = p.contained ? 'note' : 'why';
  c.replaceChildren(...(p.containment ? inline(`runnerd: ${p.containment}`) : []));
}

async function approvePins() {
  const out = await signedGesture({ gesture: 'pins' }, 'Approve the runner pins?', 'These gates prove your agents\' work from now on. Read each command.', 'approve');
  if (out.declined) return;
  if (out.cancelled) { say(CANCELLED); return; }
  if (!out.ok) say(refusal(out), true); else say(`runner pins approved (v${out.pins_version}): ${out.approved.join(', ')}`);
  await refresh();
}

// ---- start ---------------------------------------------------------------

function setTray(open) {
  $('#tray').classList.toggle('collapsed', !open);
  document.body.classList.toggle('tray-collapsed', !open);
  $('#tray-toggle').setAttribute('aria-expanded', String(open));
  $('#tray-toggle').textContent = open ? '⟩' : '⟨';
  $('#tray-toggle').title = open ? 'collapse the tray' : 'expand the tray';
  localStorage.setItem('m1nd.tray.open', open ? '1' : '0');
}

async function start() {
  $('#tray-toggle').addEventListener('click', () => setTray($('#tray').classList.contains('collapsed')));
  setTray(localStorage.getItem('m1nd.tray.open') !== '0');
  for (const b of [$('#open-compose'), $('#empty-compose')]) b.addEventListener('click', openCompose);
  $('#compose-close').addEventListener('click', () => { $('#compose').hidden = true; });
  $('#compose-go').addEventListener('click', compose);
  for (const input of document.querySelectorAll('input[name="mode"]')) input.addEventListener('change', updateComposeNote);
  $('#compose-runner').addEventListener('change', updateComposeNote);
  $('#bell').addEventListener('click', showNeedsYou);
  $('#mission-close').addEventListener('click', () => $('#mission').close());
  // A click on the backdrop (the dialog itself, outside its content) closes it.
  $('#mission').addEventListener('click', (e) => { if (e.target === $('#mission')) $('#mission').close(); });
  $('#passkey-go').addEventListener('click', registerPasskey);
  $('#keys-go').addEventListener('click', addPasskey);
  $('#enrol-make').addEventListener('click', requestEnrolment);
  $('#enrol-go').addEventListener('click', enrolTeammate);
  $('#pins-go').addEventListener('click', approvePins);
  $('#login').addEventListener('click', async () => {
    const out = await login();
    if (!out.ok && !out.cancelled) say(refusal(out), true);
  });
  await refresh(); // opens the live stream, or polls until the page logs in
  document.body.dataset.ready = 'true';
  setInterval(() => { renderTray(); tickTimes(); }, 30000); // "3 min ago" moves on
}

start().catch((e) => say(`the tray could not start: ${e}`, true));
