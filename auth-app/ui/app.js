// The vitals settings window. Every action is one Rust command; the window only shows what the
// commands return (states and sentences, never a token or a saved secret).
const { invoke } = window.__TAURI__.core;

const STATE_WORDS = { not_set_up: 'not set up', app_saved: 'app credentials saved', needs_code: 'code needed', connected: 'connected', error: 'error' };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function say(p, text, kind) {
  const m = document.getElementById(`${p}-message`);
  m.textContent = text;
  m.className = `message ${kind}`;
}

// While an action runs, nothing in the card can be pressed; after it, each button is enabled only
// when it can act (`data-can`, re-checked as the user types).
function busy(p, on) {
  document.querySelectorAll(`#provider-${p} button, #provider-${p} input, #provider-${p} select`).forEach((b) => { b.disabled = on; });
  if (!on) refresh(p);
}

function refresh(p) {
  document.querySelectorAll(`#provider-${p} [data-can]`).forEach((b) => { b.disabled = !CAN[b.dataset.can](p); });
}

const value = (id) => (document.getElementById(id) || {}).value || '';
const typed = (id) => value(id).trim() !== '';
const saved = {};
// Why each button can act; the window re-checks them on every keystroke in the card.
const CAN = {
  // Saving changes something: a new secret, or another ID beside the saved secret.
  save_app: (p) => typed(`${p}-client-id`) && (typed(`${p}-client-secret`) || (saved[p].secret_saved && value(`${p}-client-id`).trim() !== saved[p].client_id)),
  connect: (p) => saved[p].can_connect,
  revoke: (p) => saved[p].can_revoke,
  forget_app: (p) => saved[p].can_forget_app,
  save_key: (p) => typed(`${p}-key`),
  sign_in: (p) => typed(`${p}-email`) && typed(`${p}-password`),
  send_code: (p) => typed(`${p}-code`),
};

// Ask once, inline: the action runs only after "Yes".
function confirmThen(p, question, yes, action) {
  const bar = document.getElementById(`${p}-confirm`);
  bar.replaceChildren(
    el('span', {}, question + ' '),
    el('button', { id: `${p}-confirm-yes`, class: 'danger', onclick: () => { bar.classList.add('hidden'); action(); } }, yes),
    el('button', { id: `${p}-confirm-no`, onclick: () => { bar.classList.add('hidden'); say(p, 'Nothing was changed.', 'ok'); } }, 'Cancel'),
  );
  bar.classList.remove('hidden');
  document.getElementById(`${p}-confirm-yes`).focus();
}

async function run(p, action, waiting) {
  busy(p, true);
  if (waiting) say(p, waiting, 'wait');
  try {
    const done = await action();
    render(done.state);
    say(p, done.message, 'ok');
  } catch (e) {
    say(p, String(e), 'bad');
  } finally {
    busy(p, false);
  }
}

// Start the login, say where the browser went (or the address to open), then wait for it.
function connect(s) {
  const p = s.provider;
  return run(p, async () => {
    const started = await invoke('connect_start', { provider: p });
    say(p, started.browser_opened
      ? `Your browser opened ${s.display}'s sign-in page. Waiting for you to sign in and allow access…`
      : `No browser could be opened. Open this address to sign in: ${started.url}`, 'wait');
    return invoke('connect_wait', { provider: p });
  });
}

function copy(p, text) {
  const done = () => say(p, 'Redirect URL copied.', 'ok');
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(p, text, done));
  } else {
    fallbackCopy(p, text, done);
  }
}

function fallbackCopy(p, text, done) {
  const t = el('textarea', { 'aria-hidden': 'true' });
  t.value = text;
  document.body.append(t);
  t.select();
  const ok = document.execCommand('copy');
  t.remove();
  if (ok) done(); else say(p, 'Copy did not work here: select the address and copy it by hand.', 'bad');
}

// The card of one provider: a header and the state, the fields its connection kind needs
// (`s.connection`), and Revoke. The window knows kinds, never providers.
function card(s) {
  const p = s.provider;
  const details = [];
  if (s.state === 'connected' && s.scopes.length) {
    details.push(el('p', { class: 'details', id: `${p}-scopes` }, `Access granted: ${s.scopes.join(', ')}`));
  }
  if (s.app_source) details.push(el('p', { class: 'details' }, `App credentials from: ${s.app_source}`));
  if (s.token_store) details.push(el('p', { class: 'details' }, `Login kept in: ${s.token_store}`));
  if (s.caution) details.push(el('p', { class: 'details', id: `${p}-caution` }, s.caution));
  const body = (KINDS[s.connection] || (() => []))(s);
  const revokeWords = s.revokes_at_provider
    ? `Revoke vitals' access at ${s.display} and delete the saved login?`
    : `Delete the saved ${s.display} login? (${s.display} has no revoke we can call: remove vitals' access in your ${s.display} account as well.)`;
  return el('section', { class: 'card', id: `provider-${p}`, 'aria-labelledby': `${p}-title` },
    el('h2', { id: `${p}-title` }, s.display, el('span', { class: `badge ${s.state}`, id: `${p}-state` }, STATE_WORDS[s.state] || s.state)),
    el('p', { class: 'summary', id: `${p}-summary` }, s.summary),
    ...details,
    ...body,
    el('div', { class: 'row' },
      el('button', { id: `${p}-revoke`, class: 'danger', 'data-can': 'revoke', onclick: () => confirmThen(p, revokeWords, 'Yes, revoke',
        () => run(p, () => invoke('revoke', { provider: p }), 'Revoking…')) }, 'Revoke'),
      ...(s.connection === 'oauth' ? [el('button', { id: `${p}-forget`, class: 'danger', 'data-can': 'forget_app', onclick: () => confirmThen(p, `Delete the saved ${s.display} client ID and secret?`, 'Yes, delete',
        () => run(p, () => invoke('forget_app', { provider: p }), 'Deleting…')) }, 'Forget app credentials')] : [])),
    el('div', { class: 'confirm hidden', id: `${p}-confirm`, role: 'alertdialog', 'aria-live': 'assertive' }),
    el('p', { class: 'message', id: `${p}-message`, role: 'status', 'aria-live': 'polite' }));
}

// A form whose inputs are read, then cleared, when it is sent; its button acts when `can` says so.
function form(p, id, fields, submit, label, can) {
  const attrs = { type: 'submit', form: id, id: `${id}-send`, class: 'primary' };
  if (can) attrs['data-can'] = can;
  return [
    el('form', { class: 'fields', id, onsubmit: (ev) => { ev.preventDefault(); if (!can || CAN[can](p)) submit(); } }, ...fields),
    el('div', { class: 'row' }, el('button', attrs, label)),
  ];
}

function take(id) {
  const input = document.getElementById(id);
  const v = input.value;
  if (input.type === 'password') input.value = '';
  return v;
}

function portalButton(s) {
  return s.portal
    ? [el('button', { class: 'linklike', id: `${s.provider}-portal`, onclick: () => invoke('open_portal', { provider: s.provider }).catch((e) => say(s.provider, String(e), 'bad')) }, `Open ${s.portal}`)]
    : [];
}

function importForm(s) {
  const p = s.provider;
  if (!s.import_from) return [];
  return [el('p', { class: 'details', id: `${p}-import-offer` }, s.import_offer || ''), ...form(p, `${p}-import`, [
    el('label', { for: `${p}-folder` }, 'Folder to import from'),
    el('input', { id: `${p}-folder`, autocomplete: 'off', spellcheck: 'false', placeholder: s.import_from }),
  ], () => run(p, () => invoke('import', { provider: p, folder: take(`${p}-folder`) || null }), 'Importing…'), 'Import')];
}

const KINDS = {
  oauth(s) {
    const p = s.provider;
    const secretHint = s.secret_saved ? 'saved, hidden: type a new one to replace it' : 'paste the client secret';
    return [
      el('div', { class: 'row redirect' },
        el('span', {}, 'Redirect URL to register:'),
        el('code', { id: `${p}-redirect` }, s.redirect),
        el('button', { id: `${p}-copy`, onclick: () => copy(p, s.redirect) }, 'Copy'),
        ...portalButton(s)),
      el('form', { class: 'fields', id: `${p}-form`, onsubmit: (ev) => {
        ev.preventDefault();
        const id = document.getElementById(`${p}-client-id`).value;
        const secret = take(`${p}-client-secret`);
        run(p, () => invoke('save_app', { provider: p, clientId: id, clientSecret: secret || null }), 'Saving…');
      } },
        el('label', { for: `${p}-client-id` }, 'Client ID'),
        Object.assign(el('input', { id: `${p}-client-id`, autocomplete: 'off', spellcheck: 'false' }), { value: s.client_id || '' }),
        el('label', { for: `${p}-client-secret` }, 'Client secret'),
        el('input', { id: `${p}-client-secret`, type: 'password', autocomplete: 'off', placeholder: secretHint, 'aria-describedby': `${p}-secret-note` }),
        el('span', {}),
        el('span', { class: 'details', id: `${p}-secret-note` }, 'The secret is kept on this computer and never shown again.')),
      el('div', { class: 'row' },
        el('button', { type: 'submit', form: `${p}-form`, id: `${p}-save`, class: 'primary', 'data-can': 'save_app' }, 'Save'),
        el('button', { id: `${p}-connect`, 'data-can': 'connect', onclick: () => connect(s) }, s.state === 'connected' ? 'Connect again' : 'Connect')),
    ];
  },
  api_key(s) {
    const p = s.provider;
    const days = el('select', { id: `${p}-days` },
      el('option', { value: '' }, 'not said'), el('option', { value: '30' }, '30 days'), el('option', { value: '90' }, '90 days'),
      el('option', { value: '180' }, '180 days'), el('option', { value: '365' }, '1 year'));
    return [
      el('div', { class: 'row' }, ...portalButton(s)),
      ...form(p, `${p}-keyform`, [
        el('label', { for: `${p}-key` }, 'Key'),
        el('input', { id: `${p}-key`, type: 'password', autocomplete: 'off', placeholder: s.state === 'connected' ? 'saved, hidden: paste a new one to replace it' : 'paste the key' }),
        el('label', { for: `${p}-days` }, 'Expires in'),
        days,
      ], () => {
        const d = document.getElementById(`${p}-days`).value;
        run(p, () => invoke('save_key', { provider: p, key: take(`${p}-key`), days: d ? Number(d) : null }), 'Checking the key…');
      }, 'Save', 'save_key'),
    ];
  },
  session(s) {
    const p = s.provider;
    const signIn = s.state === 'needs_code'
      ? form(p, `${p}-codeform`, [
        el('label', { for: `${p}-code` }, 'One-time code'),
        el('input', { id: `${p}-code`, autocomplete: 'one-time-code', inputmode: 'numeric' }),
      ], () => run(p, () => invoke('session_code', { provider: p, code: take(`${p}-code`) }), 'Signing in…'), 'Send code', 'send_code')
      : form(p, `${p}-signin`, [
        el('label', { for: `${p}-email` }, 'Email'),
        el('input', { id: `${p}-email`, type: 'email', autocomplete: 'off' }),
        el('label', { for: `${p}-password` }, 'Password'),
        el('input', { id: `${p}-password`, type: 'password', autocomplete: 'off', placeholder: 'used once, never stored' }),
      ], () => run(p, () => invoke('session_login', { provider: p, email: document.getElementById(`${p}-email`).value, password: take(`${p}-password`) }), 'Signing in…'), 'Connect', 'sign_in');
    return [...signIn, ...importForm(s)];
  },
  import(s) {
    return importForm(s);
  },
  file(s) {
    const p = s.provider;
    return [
      el('p', { class: 'details', id: `${p}-file-what` }, `Choose ${s.file_what || 'the file'}: vitals reads it where it is and never copies it.`),
      ...form(p, `${p}-fileform`, [
        el('label', { for: `${p}-path` }, 'File'),
        Object.assign(el('input', { id: `${p}-path`, autocomplete: 'off', spellcheck: 'false', placeholder: '/path/to/export.zip' }), { value: s.file || '' }),
      ], () => run(p, () => invoke('choose_file', { provider: p, path: document.getElementById(`${p}-path`).value }), 'Saving…'), 'Use this file'),
    ];
  },
};

// Replace one provider's card (keeping its last message), or add it.
function render(s) {
  saved[s.provider] = s;
  const old = document.getElementById(`provider-${s.provider}`);
  const fresh = card(s);
  fresh.addEventListener('input', () => refresh(s.provider));
  if (old) {
    fresh.querySelector('.message').textContent = old.querySelector('.message').textContent;
    old.replaceWith(fresh);
  } else {
    document.getElementById('providers').append(fresh);
  }
  refresh(s.provider);
}

async function load() {
  const main = document.getElementById('providers');
  try {
    const all = await invoke('providers');
    main.replaceChildren();
    all.forEach(render);
  } catch (e) {
    main.replaceChildren(el('p', { class: 'message bad' }, `The settings could not be read: ${e}`));
  } finally {
    main.setAttribute('aria-busy', 'false');
  }
}

load();
