// The tray: the brain's blocks, and the right-edge fixed tray of mission
// cards where a human lands work. The human's gestures (receipt import,
// archive) are signed by the owner's passkey: the server hands out a
// challenge bound to the exact change, the browser's authenticator signs
// it with the user present, and the server verifies and records the proof.
// The page never claims an origin; without a passkey it makes no gesture.
'use strict';

const PHASES = {
  judging: { glyph: '⚖', label: 'judging', accent: 'blue' },
  executing: { glyph: '▶', label: 'executing', accent: 'blue' },
  gate: { glyph: '⚙', label: 'gate', accent: 'amber' },
  review: { glyph: '⊙', label: 'review', accent: 'amber' },
  merge_wait: { glyph: '⏳', label: 'merge wait', accent: 'amber' },
  landed: { glyph: '✓', label: 'landed', accent: 'sage' },
  failed: { glyph: '✗', label: 'failed', accent: 'clay' },
  archived: { glyph: '▪', label: 'archived', accent: 'muted' },
};
const PHASE_ORDER = Object.keys(PHASES);
const STAGNANT_MS = 24 * 3600 * 1000;
const NO_PASSKEY_WHY = 'register a passkey to land here — or land from a terminal: m1nd receipt import … then m1nd mission post';
const STAGNANT_CONFIRM = 'hides from the tray; the letter itself stays on the mailbox — a contract transition is future work.';

const state = { heads: [], blocks: [], storeVersion: 0, skeleton: null, policy: null, brain: '', passkeys: null, justRegistered: '' };

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

function nowStamp() { return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'); }

function elapsed(from, to) {
  let s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return s + 's';
  s = Math.round(s / 60); if (s < 60) return s + 'm';
  s = Math.round(s / 60); if (s < 48) return s + 'h';
  return Math.round(s / 24) + 'd';
}

function blockById(id) { return state.blocks.find((b) => b.block_id === id); }

// Dismissals are browser-local and hold for one head only: a head that
// moves shows again.
function dismissKey(m) { return `m1nd.dismissed.${state.brain}.${m.mission_id}`; }
function isDismissed(m) { return localStorage.getItem(dismissKey(m)) === m.head_letter_id; }
function dismiss(m) { localStorage.setItem(dismissKey(m), m.head_letter_id); render(); }

function confirmDialog(title, text, okLabel) {
  return new Promise((resolve) => {
    const d = $('#confirm');
    $('#confirm-title').textContent = title;
    $('#confirm-text').textContent = text;
    $('#confirm-ok').textContent = okLabel || 'confirm';
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
    d.returnValue = '';
    d.showModal();
  });
}

// ---- loading -------------------------------------------------------------

async function refresh() {
  const [heads, blocks, policy, passkeys] = await Promise.all([getJSON('/api/mailbox?kind=mission'), getJSON('/api/system_blocks'), getJSON('/api/policy'), getJSON('/api/passkeys')]);
  state.policy = policy;
  state.passkeys = passkeys.ok ? passkeys : null;
  renderPasskeys();
  renderPolicy();
  state.heads = heads.missions || [];
  state.brain = heads.served_brain || blocks.served_brain || '';
  state.blocks = blocks.blocks || [];
  state.storeVersion = blocks.store_version || 0;
  state.skeleton = blocks.skeleton;
  render();
}

// ---- rendering -----------------------------------------------------------

function render() {
  $('#brain-name').textContent = state.brain;
  $('#store-line').textContent = state.skeleton
    ? `store v${state.storeVersion} · skeleton ${state.skeleton.skeleton_id} ${state.skeleton.state} · ${state.blocks.length} blocks`
    : 'no store yet';
  const bell = state.heads.filter((m) => m.head.phase === 'merge_wait').length;
  $('#bell').hidden = bell === 0;
  $('#bell').textContent = `⏳ landing bell: ${bell} waiting in merge wait`;
  renderBlocks();
  renderTray();
  renderComposeBlocks();
}

function renderBlocks() {
  const box = $('#blocks');
  box.replaceChildren();
  $('#blocks-empty').hidden = state.blocks.length > 0;
  for (const b of state.blocks) {
    const receipts = el('ul', {});
    for (const r of b.receipts || []) {
      const rc = r.receipt || {};
      const exit = rc.evidence && rc.evidence.exit_status !== undefined ? ` · exit ${rc.evidence.exit_status}` : '';
      receipts.append(el('li', { text: `${rc.type} receipt · boundary v${rc.scope ? rc.scope.boundary_version : '?'}${exit} · store v${r.store_version}` }));
    }
    if (!(b.receipts || []).length) receipts.append(el('li', { class: 'muted', text: 'no receipts' }));
    box.append(el('article', { class: 'block', id: 'block-' + b.block_id, 'data-colour': b.colour, tabindex: '0' },
      el('h3', { text: b.name }),
      el('div', { class: 'id', text: `${b.block_id} · ${b.state} · boundary v${b.boundary_version}` }),
      el('div', { class: 'colour', text: b.colour }),
      el('div', { class: 'muted', text: b.why }),
      receipts));
  }
}

function renderTray() {
  const now = Date.now();
  const strip = $('#tray-strip');
  strip.replaceChildren();
  const counts = {};
  for (const m of state.heads) counts[m.head.phase] = (counts[m.head.phase] || 0) + 1;
  for (const p of PHASE_ORDER) {
    if (!counts[p]) continue;
    strip.append(el('div', { class: 'strip-phase', title: PHASES[p].label, 'data-phase': p },
      el('span', { text: PHASES[p].glyph }), el('span', { class: 'count', text: String(counts[p]) })));
  }
  const cards = $('#cards');
  cards.replaceChildren();
  const visible = state.heads.filter((m) => !isDismissed(m));
  $('#tray-empty').hidden = state.heads.length > 0;
  // Failed first (pinned until dismissed), then the newest.
  visible.sort((a, b) => {
    const fa = a.head.phase === 'failed' ? 0 : 1, fb = b.head.phase === 'failed' ? 0 : 1;
    if (fa !== fb) return fa - fb;
    return (b.head.updated_at || '').localeCompare(a.head.updated_at || '');
  });
  for (const m of visible) cards.append(card(m, now));
}

function card(m, now) {
  const l = m.head;
  const meta = PHASES[l.phase] || { glyph: '?', label: l.phase, accent: 'muted' };
  const block = blockById(l.block_id);
  const started = Date.parse(l.started_at), updated = Date.parse(l.updated_at);
  const terminal = ['landed', 'failed', 'archived'].includes(l.phase);
  const c = el('article', { class: 'card' + (l.phase === 'failed' ? ' pinned' : ''), 'data-mission': m.mission_id, 'data-phase': l.phase, 'data-accent': meta.accent, tabindex: '0' });
  c.append(el('div', {},
    el('button', { type: 'button', class: 'link block-link', text: block ? block.name : l.block_id, onclick: () => showBlock(l.block_id) }),
    el('span', { class: 'muted', text: ` · ${m.mission_id}` })));
  c.append(el('div', { class: 'meta', text: [l.seat, l.capability, l.runner_id].filter(Boolean).join(' · ') }));
  c.append(el('div', { class: 'phase', text: `${meta.glyph} ${meta.label}` },
    el('span', { class: 'muted', text: ` · ${elapsed(started, terminal ? updated : now)} · #${l.mission_seq}` })));
  if (l.verdict && l.verdict.gist) c.append(el('div', { class: 'gist', text: `${l.verdict.decision}: ${l.verdict.gist}` }));
  if (l.gate) {
    const exit = l.gate.exit_status === undefined ? '' : ` · exit ${l.gate.exit_status}`;
    c.append(el('div', { class: 'gate', text: `${l.gate.command}${exit}` }));
  }
  const actions = el('div', { class: 'actions' });
  if (l.phase === 'merge_wait') {
    c.append(el('div', { class: 'muted', text: 'gate green — receipt not landed' }));
    const why = gestureWhy();
    if (l.receipt_candidate && canWrite()) actions.append(el('button', { type: 'button', class: 'primary import', text: 'import this receipt', disabled: !!why, title: why || undefined, onclick: () => land(m) }));
    if (canWrite()) actions.append(el('button', { type: 'button', class: 'archive', text: 'archive…', disabled: !!why, title: why || undefined, onclick: () => archive(m) }));
    if (canWrite() && why) actions.append(el('span', { class: 'why', 'data-why': 'gesture', text: why }));
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
  if (l.phase === 'failed') actions.append(el('button', { type: 'button', class: 'dismiss', text: 'dismiss', onclick: () => dismiss(m) }));
  if ((l.phase === 'judging' || l.phase === 'executing') && now - updated > STAGNANT_MS) {
    c.append(el('div', { class: 'muted', text: `no movement for ${elapsed(updated, now)}` }));
    actions.append(el('button', { type: 'button', class: 'dismiss-stagnant', text: 'dismiss…', onclick: async () => {
      if (await confirmDialog('Dismiss this stagnant mission?', STAGNANT_CONFIRM, 'dismiss')) dismiss(m);
    } }));
  }
  if (actions.childElementCount) c.append(actions);
  return c;
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

// ---- the human gestures --------------------------------------------------

// signedGesture makes one gesture signed by the owner's passkey: the
// server's options bind a challenge to the exact change, the browser's
// authenticator signs it, and the commit verifies the assertion and writes.
// It returns the gesture's reply or a refusal; a prompt the user cancelled
// returns { ok: false, cancelled: true }.
async function signedGesture(body) {
  const opts = await postJSON('/api/gesture/options', body);
  if (!opts.ok) return opts;
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return { ok: false, lesson: `this browser signs no gestures here: open http://localhost:${location.port}/` };
  }
  const challenge = opts.publicKey.challenge;
  const publicKey = Object.assign({}, opts.publicKey, {
    challenge: fromB64url(challenge),
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
  return postJSON('/api/gesture/commit', { challenge, credential: { id: toB64url(a.rawId), response: {
    authenticatorData: toB64url(r.authenticatorData), clientDataJSON: toB64url(r.clientDataJSON), signature: toB64url(r.signature),
  } } });
}

const CANCELLED = 'not signed: the passkey prompt was cancelled — nothing changed';

function extend(m, phase) {
  const next = Object.assign({}, m.head, { mission_seq: m.head.mission_seq + 1, prev_letter_id: m.head_letter_id, phase, updated_at: nowStamp() });
  delete next.receipt_candidate;
  delete next.receipt;
  return next;
}

// Import the merge_wait letter's candidate exactly as it was proposed, at
// the store version the page shows, signed by the passkey, then post the
// landed letter naming the store version the import wrote. If the store
// moved since, the import is refused store_version_conflict and the page
// refreshes: a human never lands onto a store not yet seen.
async function land(m) {
  const cand = m.head.receipt_candidate;
  const imp = await signedGesture({ gesture: 'receipt_import', expected_store_version: state.storeVersion, block_id: cand.block_id, receipt: cand });
  if (imp.cancelled) { say(CANCELLED); return; }
  if (!imp.ok) { say(refusal(imp), true); await refresh(); return; }
  const landed = extend(m, 'landed');
  landed.receipt = { imported: true, store_version: imp.store_version };
  const post = await postJSON('/api/mission_post', { agent_id: 'owner', letter: landed });
  if (!post.ok) say(`the receipt is in store v${imp.store_version}, but the landed letter was ${refusal(post)}`, true);
  else say(`landed ${m.mission_id}: receipt ✓ store v${imp.store_version}`);
  await refresh();
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
  if (!(await confirmDialog(`Archive ${m.mission_id}?`, text, 'archive'))) return;
  const out = await signedGesture({ gesture: 'archive', mission_id: m.mission_id });
  if (out.cancelled) { say(CANCELLED); return; }
  if (!out.ok) say(refusal(out), true); else say(`archived ${m.mission_id}`);
  await refresh();
}

// ---- compose ------------------------------------------------------------

function renderComposeBlocks() {
  const sel = $('#compose-block');
  const keep = sel.value;
  sel.replaceChildren(...state.blocks.map((b) => el('option', { value: b.block_id, text: `${b.name} (${b.block_id})` })));
  if (keep) sel.value = keep;
}

function renderPolicy() {
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

function updateComposeNote() {
  const m = mode();
  $('#compose-agent-label').hidden = m !== 'direct';
  $('#compose-note').textContent = {
    clipboard: 'clipboard: the packet is composed and copied; nothing is posted.',
    direct: "direct: posted to the agent's inbox — delivery is not execution.",
    spawn: `spawn: runner ${runnerForSpawn() || '?'} runs the mission in a sibling worktree, up to merge wait; you land it here.`,
  }[m];
  $('#compose-go').textContent = m === 'clipboard' ? 'compose and copy' : m === 'direct' ? 'post and deliver' : 'spawn';
}

function runnerForSpawn() {
  const live = (state.policy && state.policy.build_runners) || [];
  return live[0] || '';
}

function openCompose() {
  $('#compose').hidden = false;
  $('#compose-block').focus();
}

async function compose() {
  const blockID = $('#compose-block').value;
  if (!blockID) { say('no block to compose for: scan the skeleton first', true); return; }
  const packet = await getJSON(`/api/packet?block_id=${encodeURIComponent(blockID)}&ask=${encodeURIComponent($('#compose-ask').value)}`);
  if (!packet.ok) { say(refusal(packet), true); return; }
  $('#compose-packet').value = packet.markdown;
  const m = mode();
  if (m === 'clipboard') {
    const area = $('#compose-packet');
    try { await navigator.clipboard.writeText(packet.markdown); } catch (e) { area.select(); document.execCommand('copy'); }
    say(`packet copied (${packet.packet_ref.slice(0, 19)}…); nothing was posted`);
    return;
  }
  if (m === 'spawn') {
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
    el('span', { class: 'muted', text: `added ${k.added_at} · id ${k.credential_id.slice(0, 10)}…`, title: k.credential_id }),
    write ? el('button', { type: 'button', class: 'remove-key', text: 'remove', onclick: () => removePasskey(k) }) : null)));
  $('#keys-add').hidden = !write;
}

// keysGesture signs a change of the key set and says how it went.
async function keysGesture(body, done) {
  const note = $('#keys-note');
  note.textContent = 'sign the change with a passkey this brain already holds…';
  const out = await signedGesture(body);
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
    await keysGesture({ gesture: 'keys', label, credential: made.credential }, `passkey added: ${label || 'passkey'}`);
    $('#keys-label').value = '';
  } finally {
    go.disabled = false;
  }
}

async function removePasskey(k) {
  const text = `Gestures signed by ${k.label} stop counting once it is removed. A passkey this brain holds (this one too) signs the removal.`;
  if (!(await confirmDialog(`Remove passkey ${k.label}?`, text, 'remove'))) return;
  await keysGesture({ gesture: 'keys', remove: k.credential_id }, `passkey removed: ${k.label}`);
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
  $('#passkey-go').addEventListener('click', registerPasskey);
  $('#keys-go').addEventListener('click', addPasskey);
  await refresh();
  document.body.dataset.ready = 'true';
  const events = new EventSource('/api/events');
  events.addEventListener('refs', () => refresh());
  setInterval(() => renderTray(), 30000); // elapsed times move on
}

start().catch((e) => say(`the tray could not start: ${e}`, true));
