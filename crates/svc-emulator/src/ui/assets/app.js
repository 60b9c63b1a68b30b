// The emulator's page (docs/ui.md). Everything it shows comes from the API's own routes through
// the page's relay (`/_emulator/ui/api/relay/{project}/{path}`), which adds the project's key on
// the server: the browser holds no credential. Values from records and requests are set as text
// (never as HTML), so no record can run a script here.
'use strict';

(() => {
  const BASE = '/_emulator/ui';
  const app = { overview: null, gen: 0, timer: null };

  // ---------------------------------------------------------------------------------------------
  // Small helpers

  /** An element with attributes, listeners (`on: {click: f}`) and children (nodes or text). */
  function h(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'on') {
        for (const [event, f] of Object.entries(value)) node.addEventListener(event, f);
      } else if (name === 'text') {
        node.textContent = value;
      } else if (name === 'value') {
        node.value = value;
      } else {
        node.setAttribute(name, value === true ? '' : String(value));
      }
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  const enc = encodeURIComponent;
  const $ = (selector) => document.querySelector(selector);
  const say = (text) => { $('#status').textContent = text; };

  /** A labelled control: `<label>text <control></label>`. */
  function field(text, control) {
    return h('label', {}, text, control);
  }

  /** A value as a cell shows it. */
  function shown(value) {
    if (value === null || value === undefined) return 'null';
    if (typeof value === 'object') return JSON.stringify(value);
    return String(value);
  }

  /** Calls the API through the relay: `{status, ok, json, text}`. */
  async function call(project, method, path, body) {
    const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`${BASE}/api/relay/${enc(project)}/${path}`, init);
    } catch (e) {
      return { status: 0, ok: false, json: null, text: `The emulator did not answer (${e.message}): is it still running?` };
    }
    const text = await response.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
    if (response.ok && text && json === null && (response.headers.get('content-type') || '').includes('json')) {
      return { status: response.status, ok: false, json: null, text: `The answer is not JSON the page can read: ${text.slice(0, 200)}` };
    }
    return { status: response.status, ok: response.ok, json, text };
  }

  /** An answer that is not a success, in words: the API's message and each field's. */
  function refusal(answer) {
    if (answer.status === 0) return answer.text;
    const body = answer.json;
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      return `${answer.status}: ${answer.text || 'no message'}`;
    }
    const lines = [];
    const main = body.error || body.detail;
    if (main) lines.push(String(main));
    for (const [key, value] of Object.entries(body)) {
      if (['error', 'error_code', 'error_decision', 'detail'].includes(key)) continue;
      const text = Array.isArray(value) ? value.join(' ') : shown(value);
      if (key === 'non_field_errors') lines.push(text); else lines.push(`${key}: ${text}`);
    }
    const decision = body.error_decision ? ` (${body.error_decision}: the emulator refuses what the service would misread)` : '';
    return `${answer.status}${body.error_code ? ' ' + body.error_code : ''}${decision}: ${lines.join('\n') || answer.text}`;
  }

  function alertBox(id) {
    return h('div', { id, class: 'error', role: 'alert', hidden: true });
  }

  function showAlert(node, text) {
    node.textContent = text || '';
    node.hidden = !text;
  }

  async function copy(text, what) {
    try {
      await navigator.clipboard.writeText(text);
      say(`Copied ${what}.`);
    } catch (_) {
      say(`${what} is shown below: the browser did not allow copying.`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Where things are

  function project(name) {
    return app.overview.projects.find((p) => p.name === name);
  }

  function dataPath(p, resource, model) {
    return `projects/${enc(p.name)}/${enc(p.environments[0])}/${enc(resource)}/models/${enc(model)}`;
  }

  function pageUrl(p, ...rest) {
    return [BASE, 'projects', enc(p), ...rest.map(enc)].join('/');
  }

  function gridUrl(p, resource, model) {
    return pageUrl(p, 'resources', resource, 'models', model);
  }

  const VIEWS = [
    ['', 'Overview'],
    ['requests', 'Requests'],
    ['state', 'State'],
    ['pages', 'Pages'],
    ['actions', 'Actions'],
  ];

  function route() {
    const rest = location.pathname.slice(BASE.length).replace(/^\/+|\/+$/g, '');
    const parts = rest ? rest.split('/').map(decodeURIComponent) : [];
    const fallback = app.overview.projects[0].name;
    if (parts.length === 0) return { view: '', project: fallback };
    if (parts[0] !== 'projects' || !parts[1]) return { view: 'missing', project: fallback };
    const p = parts[1];
    if (parts[2] === 'resources' && parts[4] === 'models' && parts[5] && parts.length === 6) {
      return { view: 'grid', project: p, resource: parts[3], model: parts[5] };
    }
    const view = parts[2] || '';
    if (parts.length <= 3 && VIEWS.some(([v]) => v === view)) return { view, project: p };
    return { view: 'missing', project: p };
  }

  function go(url) {
    history.pushState(null, '', url);
    render(true);
  }

  document.addEventListener('click', (event) => {
    const link = event.target.closest('a[href]');
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    if (link.origin !== location.origin || !link.pathname.startsWith(BASE + '/')) return;
    event.preventDefault();
    go(link.pathname + link.search);
  });
  window.addEventListener('popstate', () => render(true));

  // ---------------------------------------------------------------------------------------------
  // The frame: navigation and the project picker

  function frame(r) {
    const nav = $('#nav');
    nav.replaceChildren(...VIEWS.map(([view, label]) => {
      const href = view ? pageUrl(r.project, view) : pageUrl(r.project);
      // A model's grid is none of these views: none is marked current there.
      const current = r.view === view;
      return h('a', { href, 'aria-current': current ? 'page' : null }, label);
    }));
    const select = $('#project');
    if (!select.options.length) {
      for (const p of app.overview.projects) select.append(h('option', { value: p.name }, p.name));
      select.addEventListener('change', () => go(pageUrl(select.value)));
    }
    select.value = r.project;
  }

  async function render(moved) {
    const gen = ++app.gen;
    if (app.timer) { clearInterval(app.timer); app.timer = null; }
    const r = route();
    const main = $('#main');
    frame(r);
    const p = project(r.project);
    if (!p) {
      main.replaceChildren(h('h1', {}, 'No such project'),
        h('p', {}, `The emulator serves no project named "${r.project}". `, h('a', { href: `${BASE}/` }, 'See its projects.')));
      return;
    }
    const views = { '': overview, requests, state, pages, actions, grid, missing };
    main.replaceChildren();
    // After a move within the page, the keyboard's focus goes to the new content, as a page
    // load would put it at the top.
    if (moved === true) main.focus({ preventScroll: true });
    await views[r.view](main, p, r, () => gen === app.gen);
    document.title = `${main.querySelector('h1') ? main.querySelector('h1').textContent + ' · ' : ''}svc emulator`;
  }

  function missing(main, p) {
    main.append(h('h1', {}, 'Not a page of the emulator'),
      h('p', {}, 'This address shows nothing. ', h('a', { href: pageUrl(p.name) }, `Go to ${p.name}'s overview.`)));
  }

  // ---------------------------------------------------------------------------------------------
  // Overview: resources, models, fixtures

  function overview(main, p) {
    main.append(h('h1', {}, p.display_name || p.name),
      h('p', { class: 'crumbs' }, `Project ${p.name} · environments: ${p.environments.join(', ')} (the page uses ${p.environments[0]})`));
    if (!p.resources.length) main.append(h('p', {}, 'This project has no resources.'));
    for (const res of p.resources) {
      main.append(h('h2', {}, `Resource ${res.display_name}`, res.display_name !== res.name ? ` (${res.name})` : ''));
      const rows = res.models.map((m) => h('tr', {},
        h('td', {}, h('a', { href: gridUrl(p.name, res.name, m.name) }, m.name)),
        h('td', {}, m.key + (m.promoted_key ? ' (first column: the table declares no key)' : '')),
        h('td', {}, m.fields.map((f) => `${f.name} (${f.family})`).join(', '))));
      main.append(h('div', { class: 'scroll' }, h('table', { 'aria-label': `Models of ${res.name}` },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Model'), h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Fields'))),
        h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 3 }, 'No models.'))))));
      for (const f of res.fixtures) {
        main.append(h('p', { class: 'muted' }, `Fixtures (${f.source}): ${f.outcome}.`));
      }
      if (res.actions.length) {
        main.append(h('p', {}, `${res.actions.length} action(s): `, h('a', { href: pageUrl(p.name, 'actions') }, res.actions.map((a) => a.name).join(', '))));
      }
    }
    if (app.overview.projects.length > 1) {
      main.append(h('h2', {}, 'Other projects'), h('ul', {}, app.overview.projects.filter((o) => o.name !== p.name)
        .map((o) => h('li', {}, h('a', { href: pageUrl(o.name) }, o.name)))));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // A model's records

  const LOOKUP_RUST = {
    exact: 'Exact', gt: 'Gt', gte: 'Gte', lt: 'Lt', lte: 'Lte', icontains: 'IContains',
    istartswith: 'IStartsWith', iendswith: 'IEndsWith', in: 'In', isnull: 'IsNull',
    isempty: 'IsEmpty', json_icontains: 'JsonIContains',
  };

  /** A filter key read against the model's fields: `{exclude, field, lookup}` or null. */
  function filterKey(key, fields) {
    let rest = key;
    let exclude = false;
    if (rest.startsWith('exclude__') && !fields.some((f) => f.name === rest)) {
      exclude = true;
      rest = rest.slice('exclude__'.length);
    }
    const byLength = [...fields].sort((a, b) => b.name.length - a.name.length);
    for (const f of byLength) {
      if (rest === f.name) return { exclude, field: f, lookup: 'exact' };
      if (rest.startsWith(f.name + '__')) {
        const lookup = rest.slice(f.name.length + 2);
        if (LOOKUP_RUST[lookup]) return { exclude, field: f, lookup };
      }
    }
    return null;
  }

  /** A Rust string literal: JSON's escapes, but `\u{..}` for JSON's `\uXXXX`. */
  function rustString(text) {
    return JSON.stringify(text).replace(/(\\+)u([0-9a-fA-F]{4})/g,
      (all, slashes, hex) => (slashes.length % 2 ? `${slashes}u{${hex}}` : all));
  }

  function rustValue(value, f, lookup) {
    if (lookup === 'isnull' || lookup === 'isempty' || f.family === 'boolean') {
      if (['true', '1', 'True'].includes(value)) return 'true';
      if (['false', '0', 'False'].includes(value)) return 'false';
    }
    if (f.family === 'number' && /^-?\d+(\.\d+)?$/.test(value) && lookup !== 'icontains') {
      return value.includes('.') ? value : `${value}_i64`;
    }
    return rustString(value);
  }

  /** The grid's query as svc-api code. */
  function asRust(p, res, model, params) {
    const calls = [];
    const left = [];
    for (const [key, value] of params) {
      if (key === '_order_by') {
        for (const part of value.split(',').filter(Boolean)) {
          calls.push(part.startsWith('-') ? `.order_by_desc(${rustString(part.slice(1))})` : `.order_by(${rustString(part)})`);
        }
      } else if (key === '_search') {
        calls.push(`.search(${rustString(value)})`);
      } else if (key === 'page' && /^\d+$/.test(value)) {
        calls.push(`.page(${value})`);
      } else if (key === '_per_page' && /^\d+$/.test(value)) {
        calls.push(`.per_page(${value})`);
      } else {
        const parsed = filterKey(key, model.fields);
        if (!parsed) { left.push(`${key}=${value}`); continue; }
        const name = rustString(parsed.field.name);
        if (parsed.lookup === 'in' && !parsed.exclude) {
          const items = value.split(',').map((v) => rustValue(v, parsed.field, 'exact'));
          calls.push(`.is_in(${name}, [${items.join(', ')}])`);
        } else if (parsed.lookup === 'exact' && !parsed.exclude) {
          calls.push(`.eq(${name}, ${rustValue(value, parsed.field, 'exact')})`);
        } else {
          const method = parsed.exclude ? 'exclude' : 'filter';
          calls.push(`.${method}(${name}, Lookup::${LOOKUP_RUST[parsed.lookup]}, ${rustValue(value, parsed.field, parsed.lookup)})`);
        }
      }
    }
    const lines = [
      'use svc_api::model::records::{ListQuery, Lookup};',
      '',
      'let client = svc_api::Client::builder()',
      `    .project(${rustString(p.name)})`,
      `    .environment(${rustString(p.environments[0])})`,
      '    .api_base_url(std::env::var("SVC_API_BASE_URL")?)',
      '    .api_key(std::env::var("SVC_API_KEY")?)',
      '    .build()?;',
      'let query = ListQuery::new()',
      ...calls.map((c) => `    ${c}`),
    ];
    lines[lines.length - 1] += ';';
    if (left.length) lines.push(`// ListQuery has no call for ${rustString(left.join('&'))}: send it with curl`);
    lines.push(`let page = client.records(${rustString(res.name)}, ${rustString(model.name)}).list(&query).await?;`);
    return lines.join('\n');
  }

  /** The grid's query as a curl command: the address in single quotes, so that nothing in
   * the query (`$`, a backtick, `;`) is read by the shell. */
  function asCurl(p, res, model, query) {
    const rest = `/${dataPath(p, res.name, model.name)}${query ? '?' + query : ''}`;
    return `curl -fsS -H "Authorization: Bearer $SVC_API_KEY" "$SVC_API_BASE_URL"'${rest.replace(/'/g, "'\\''")}'`;
  }

  /** The page's address for the grid with `params` as its query. */
  function withQuery(params) {
    const q = params.toString();
    return location.pathname + (q ? '?' + q : '');
  }

  async function grid(main, p, r, current) {
    const res = p.resources.find((x) => x.name === r.resource);
    const model = res && res.models.find((m) => m.name === r.model);
    if (!model) {
      main.append(h('h1', {}, 'No such model'), h('p', {}, `Project ${p.name} has no model ${r.model} in a resource ${r.resource}. `,
        h('a', { href: pageUrl(p.name) }, 'See its models.')));
      return;
    }
    const query = location.search.slice(1);
    const params = new URLSearchParams(query);
    const base = dataPath(p, res.name, model.name);

    main.append(h('h1', {}, model.name),
      h('p', { class: 'crumbs' }, h('a', { href: pageUrl(p.name) }, p.name), ` / ${res.name} / ${model.name} · key ${model.key}`));

    // The query string: the address bar's, editable as text.
    const queryInput = h('input', { id: 'query', name: 'query', value: query, placeholder: 'status=paid&total__gte=100&_order_by=-total', spellcheck: 'false', autocomplete: 'off' });
    main.append(h('form', { id: 'query-form', on: { submit: (e) => { e.preventDefault(); go(withQuery(new URLSearchParams(queryInput.value.replace(/^\?/, '')))); } } },
      h('label', { class: 'wide' }, 'Query string (the API\'s own)', queryInput), h('button', { type: 'submit' }, 'Apply')));

    // A filter from controls.
    const fieldSelect = h('select', { id: 'filter-field' }, model.fields.map((f) => h('option', { value: f.name }, f.name)));
    const lookupSelect = h('select', { id: 'filter-lookup' });
    const fillLookups = () => {
      const f = model.fields.find((x) => x.name === fieldSelect.value);
      lookupSelect.replaceChildren(...f.lookups.map((l) => h('option', { value: l }, l)));
    };
    fieldSelect.addEventListener('change', fillLookups);
    fillLookups();
    const valueInput = h('input', { id: 'filter-value', autocomplete: 'off' });
    main.append(h('form', { id: 'filter-form', on: { submit: (e) => {
      e.preventDefault();
      const next = new URLSearchParams(query);
      const lookup = lookupSelect.value;
      next.append(lookup === 'exact' ? fieldSelect.value : `${fieldSelect.value}__${lookup}`, valueInput.value);
      next.delete('page');
      go(withQuery(next));
    } } }, field('Field', fieldSelect), field('Lookup', lookupSelect), field('Value', valueInput),
    h('button', { type: 'submit' }, 'Add filter')));

    const searchInput = h('input', { id: 'search', type: 'search', value: params.get('_search') || '' });
    main.append(h('form', { id: 'search-form', on: { submit: (e) => {
      e.preventDefault();
      const next = new URLSearchParams(query);
      if (searchInput.value) next.set('_search', searchInput.value); else next.delete('_search');
      next.delete('page');
      go(withQuery(next));
    } } }, field('Search', searchInput), h('button', { type: 'submit' }, 'Search')));

    // The query's parts, each removable.
    const chips = [...params].map(([key, value], index) => h('li', {}, `${key}=${value}`,
      h('button', { type: 'button', 'aria-label': `Remove ${key}=${value}`, on: { click: () => {
        const next = new URLSearchParams([...params].filter((_, i) => i !== index));
        go(withQuery(next));
      } } }, '×')));
    if (chips.length) main.append(h('ul', { class: 'chips', 'aria-label': 'The query\'s parameters' }, chips));

    const snippet = h('pre', { id: 'snippet', hidden: true, tabindex: '0', 'aria-label': 'Copied text' });
    const show = (text, what) => { snippet.textContent = text; snippet.hidden = false; copy(text, what); };
    main.append(h('div', { class: 'row' },
      h('button', { type: 'button', id: 'new-record', on: { click: () => edit(null) } }, 'New record'),
      h('button', { type: 'button', class: 'plain', id: 'copy-curl', on: { click: () => show(asCurl(p, res, model, query), 'as curl') } }, 'Copy as curl'),
      h('button', { type: 'button', class: 'plain', id: 'copy-rust', on: { click: () => show(asRust(p, res, model, params), 'as Rust') } }, 'Copy as Rust')),
    snippet);

    const gridError = alertBox('grid-error');
    main.append(gridError);
    const table = h('table', { id: 'records', 'aria-label': `Records of ${model.name}` });
    const pager = h('nav', { class: 'row', 'aria-label': 'Pages' });
    main.append(h('div', { class: 'scroll' }, table), pager);

    // The editor: a record as JSON, created or changed through the API's routes.
    const editorText = h('textarea', { id: 'record-json', spellcheck: 'false', rows: 14 });
    const editorError = alertBox('editor-error');
    const editorTitle = h('h2', { id: 'editor-title' });
    let editing = null;
    const editor = h('dialog', { id: 'editor', 'aria-labelledby': 'editor-title' },
      h('form', { method: 'dialog', on: { submit: async (e) => { e.preventDefault(); await save(); } } },
        editorTitle, h('label', { class: 'wide' }, 'Record (JSON)', editorText), editorError,
        h('div', { class: 'row' }, h('button', { type: 'submit', id: 'save-record' }, 'Save'),
          h('button', { type: 'button', class: 'plain', on: { click: () => editor.close() } }, 'Cancel'))));
    main.append(editor);

    function edit(record) {
      editing = record;
      showAlert(editorError, '');
      if (record) {
        editorTitle.textContent = `Edit record ${shown(record[model.key])}`;
        editorText.value = JSON.stringify(record, null, 2);
      } else {
        editorTitle.textContent = `New record of ${model.name}`;
        const blank = {};
        for (const f of model.fields) if (f.name !== model.key || f.family !== 'number') blank[f.name] = null;
        editorText.value = JSON.stringify(blank, null, 2);
      }
      editor.showModal();
      editorText.focus();
    }

    async function save() {
      let value;
      try { value = JSON.parse(editorText.value); } catch (e) {
        showAlert(editorError, `Not JSON, nothing sent: ${e.message}`);
        return;
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        showAlert(editorError, 'A record is a JSON object of fields; nothing sent.');
        return;
      }
      let answer;
      if (editing) {
        const changed = {};
        for (const [k, v] of Object.entries(value)) {
          if (JSON.stringify(v) !== JSON.stringify(editing[k])) changed[k] = v;
        }
        if (!Object.keys(changed).length) { showAlert(editorError, 'Nothing changed; nothing sent.'); return; }
        const pk = editing[model.key];
        answer = await call(p.name, 'PATCH', `${base}/${enc(shown(pk))}`, changed);
        if (!current()) return;
        if (!answer.ok) { showAlert(editorError, refusal(answer)); return; }
        say(`Saved record ${shown(pk)}: PATCH answered ${answer.status}.`);
      } else {
        answer = await call(p.name, 'POST', base, value);
        if (!current()) return;
        if (!answer.ok) { showAlert(editorError, refusal(answer)); return; }
        say(`Created record ${shown(answer.json && answer.json[model.key])}: POST answered ${answer.status}.`);
      }
      editor.close();
      await load();
    }

    async function remove(record, button) {
      if (button.dataset.armed !== 'yes') {
        button.dataset.armed = 'yes';
        button.textContent = 'Confirm delete';
        button.setAttribute('aria-label', `Confirm delete of record ${button.dataset.pk}`);
        return;
      }
      const pk = shown(record[model.key]);
      const answer = await call(p.name, 'DELETE', `${base}/${enc(pk)}`);
      if (!current()) return;
      if (!answer.ok) { showAlert(gridError, refusal(answer)); return; }
      say(`Deleted record ${pk}: DELETE answered ${answer.status}.`);
      await load();
    }

    const order = params.get('_order_by') || '';
    function sortBy(name) {
      const next = new URLSearchParams(query);
      next.set('_order_by', order === name ? `-${name}` : name);
      next.delete('page');
      go(withQuery(next));
    }

    async function load() {
      const answer = await call(p.name, 'GET', base + (query ? '?' + query : ''));
      if (!current()) return;
      table.replaceChildren();
      pager.replaceChildren();
      if (!answer.ok) { showAlert(gridError, refusal(answer)); return false; }
      showAlert(gridError, '');
      const body = answer.json || {};
      // A page (`results`), or every record as a bare list (`_no_pagination`).
      const rows = Array.isArray(body) ? body : Array.isArray(body.results) ? body.results : [];
      const head = h('tr', {}, model.fields.map((f) => {
        const sort = order === f.name ? 'ascending' : order === `-${f.name}` ? 'descending' : null;
        return h('th', { scope: 'col', 'aria-sort': sort },
          h('button', { type: 'button', title: `Order by ${f.name}`, on: { click: () => sortBy(f.name) } },
            f.name, sort === 'ascending' ? ' ▲' : sort === 'descending' ? ' ▼' : ''));
      }), h('th', { scope: 'col' }, 'Actions'));
      const lines = rows.map((record) => {
        const pk = shown(record[model.key]);
        const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete record ${pk}` }, 'Delete');
        del.dataset.pk = pk;
        del.addEventListener('click', () => remove(record, del));
        return h('tr', { 'data-pk': pk }, model.fields.map((f) => h('td', { class: record[f.name] === null ? 'null' : null }, shown(record[f.name]))),
          h('td', {}, h('div', { class: 'row' },
            h('button', { type: 'button', class: 'plain', 'aria-label': `Edit record ${pk}`, on: { click: () => edit(record) } }, 'Edit'), del)));
      });
      table.append(h('thead', {}, head), h('tbody', {}, lines.length ? lines
        : h('tr', {}, h('td', { colspan: model.fields.length + 1 }, 'No records match.'))));
      const count = typeof body.count === 'number' ? body.count : rows.length;
      pager.append(h('span', { id: 'count' }, `${count} record${count === 1 ? '' : 's'}`));
      for (const [rel, label] of [['previous', 'Previous page'], ['next', 'Next page']]) {
        if (body[rel]) {
          const target = location.pathname + new URL(body[rel]).search;
          pager.append(h('a', { href: target, id: `${rel}-page` }, label));
        }
      }
      return true;
    }

    // At a glance: an aggregate and a group over the grid's filters.
    const filtersOnly = new URLSearchParams([...params].filter(([k]) => !k.startsWith('_') && k !== 'page'));
    const summaryQuery = filtersOnly.toString() ? '?' + filtersOnly.toString() : '';
    const funcSelect = h('select', { id: 'agg-func' }, ['count', 'sum', 'avg', 'min', 'max'].map((f) => h('option', { value: f }, f)));
    const columnSelect = h('select', { id: 'agg-column' }, model.fields.map((f) => h('option', { value: f.name }, f.name)));
    const aggResult = h('output', { id: 'agg-result' });
    const groupSelect = h('select', { id: 'group-column' }, model.fields.map((f) => h('option', { value: f.name }, f.name)));
    const groupResult = h('div', { id: 'group-result' });
    const guess = model.fields.find((f) => f.name !== model.key && (f.family === 'text' || f.family === 'boolean'));
    if (guess) groupSelect.value = guess.name;
    async function aggregate() {
      const body = { func: funcSelect.value };
      if (funcSelect.value !== 'count') body.column = columnSelect.value;
      const answer = await call(p.name, 'POST', `${base}/aggregate${summaryQuery}`, body);
      if (!current()) return;
      aggResult.textContent = answer.ok ? `${funcSelect.value}: ${shown(answer.json && answer.json.y_func)}` : refusal(answer);
      aggResult.className = answer.ok ? '' : 'error';
    }
    async function group() {
      const answer = await call(p.name, 'POST', `${base}/group${summaryQuery}`, { x_column: groupSelect.value, y_func: 'count' });
      if (!current()) return;
      if (!answer.ok || !Array.isArray(answer.json)) {
        groupResult.replaceChildren(h('p', { class: 'error' }, refusal(answer)));
        return;
      }
      groupResult.replaceChildren(h('div', { class: 'scroll' }, h('table', { 'aria-label': `Records by ${groupSelect.value}` },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, groupSelect.value), h('th', { scope: 'col' }, 'count'))),
        h('tbody', {}, answer.json.map((row) => h('tr', {}, h('td', {}, shown(row.group)), h('td', {}, shown(row.y_func))))))));
    }
    main.append(h('h2', {}, 'At a glance'),
      h('p', { class: 'muted' }, filtersOnly.toString() ? `Over the filters ${filtersOnly.toString()}.` : 'Over every record.'),
      h('form', { id: 'aggregate-form', on: { submit: (e) => { e.preventDefault(); aggregate(); } } },
        field('Function', funcSelect), field('Column', columnSelect), h('button', { type: 'submit' }, 'Aggregate'), aggResult),
      h('form', { id: 'group-form', on: { submit: (e) => { e.preventDefault(); group(); } } },
        field('Group by', groupSelect), h('button', { type: 'submit' }, 'Count by group')), groupResult);

    const loaded = await load();
    if (!current()) return;
    // Refused filters are refused once, above: the summaries would only say it again.
    if (!loaded) {
      aggResult.textContent = 'Not run: the filters were refused (above).';
      return;
    }
    await Promise.all([aggregate(), group()]);
  }

  // ---------------------------------------------------------------------------------------------
  // The request journal, live

  async function requests(main, p, _r, current) {
    const params = new URLSearchParams(location.search);
    const bodies = app.overview.journal_bodies;
    main.append(h('h1', {}, 'Requests'),
      h('p', { class: 'muted' }, app.overview.journal_enabled
        ? `New requests appear as they arrive, newest first. ${bodies ? 'Bodies are kept.' : 'Bodies are not kept: start the emulator with --journal-bodies to see them.'} Keys and tokens show as ***.`
        : 'The journal is off (journal capacity 0): nothing is recorded.'));
    const method = h('select', { id: 'journal-method', name: 'method' }, ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => h('option', { value: m }, m || 'any')));
    method.value = params.get('method') || '';
    const status = h('input', { id: 'journal-status', name: 'status', value: params.get('status') || '', placeholder: '4xx or 201', size: 8 });
    const prefix = h('input', { id: 'journal-prefix', name: 'path_prefix', value: params.get('path_prefix') || '', placeholder: '/projects/...' });
    main.append(h('form', { id: 'journal-filter', on: { submit: (e) => {
      e.preventDefault();
      const next = new URLSearchParams();
      if (method.value) next.set('method', method.value);
      if (status.value) next.set('status', status.value);
      if (prefix.value) next.set('path_prefix', prefix.value);
      go(withQuery(next));
    } } }, field('Method', method), field('Status', status), h('label', { class: 'wide' }, 'Path starts with', prefix),
    h('button', { type: 'submit' }, 'Filter'),
    h('button', { type: 'button', class: 'danger', id: 'clear-journal', on: { click: async () => {
      const answer = await call(p.name, 'DELETE', `_emulator/projects/${enc(p.name)}/requests`);
      say(answer.ok ? 'The journal of this project is cleared.' : refusal(answer));
      await refresh(true);
    } } }, 'Clear')));

    const journalError = alertBox('journal-error');
    const journalNote = h('p', { id: 'journal-note', class: 'muted', hidden: true });
    const table = h('table', { id: 'journal', 'aria-label': 'Requests, newest first' });
    const detail = h('section', { id: 'request-detail', 'aria-label': 'The request chosen', hidden: true });
    const stubsBox = h('section', { id: 'stubs', 'aria-label': 'Stubs' });
    // The chosen request's details above the table, where they are seen without scrolling.
    main.append(stubsBox, journalError, journalNote, detail, h('div', { class: 'scroll' }, table));

    const filters = new URLSearchParams([...params].filter(([k]) => ['method', 'status', 'path_prefix'].includes(k)));
    const journalPath = (more) => {
      // The page's own requests too, dimmed: the tests' expectations leave them out.
      const q = new URLSearchParams(filters);
      q.set('source', 'any');
      for (const [k, v] of Object.entries(more)) q.set(k, v);
      return `_emulator/projects/${enc(p.name)}/requests?${q}`;
    };
    // The requests seen so far, oldest first. After the first read, each look asks only for
    // what arrived since the newest one (times are to the millisecond; ids tell them apart),
    // so an open page costs the journal little however many requests it holds.
    let seen = [];
    let dropped = 0;
    let chosen = null;
    let busy = false;
    let epoch = 0;
    const SHOWN = 500;
    async function refresh(force) {
      // One look at a time; a forced one (Clear) starts a new epoch, and an answer of an
      // older epoch is dropped, so cleared rows never come back.
      if (busy && !force) return;
      if (force) epoch += 1;
      const mine = epoch;
      busy = true;
      try { await look(force, mine); await showStubs(); } finally { if (mine === epoch) busy = false; }
    }
    async function look(force, mine) {
      const newest = seen.length && !force ? seen[seen.length - 1] : null;
      const answer = await call(p.name, 'GET', journalPath(newest ? { since: newest.time } : {}));
      if (!current() || mine !== epoch) return;
      if (!answer.ok) { showAlert(journalError, refusal(answer)); return; }
      showAlert(journalError, '');
      const got = answer.json.requests || [];
      dropped = answer.json.dropped || 0;
      const fresh = newest ? got.filter((q) => q.id > newest.id) : got;
      if (newest && !fresh.length) return;
      seen = newest ? seen.concat(fresh) : fresh;
      const list = seen.slice(-SHOWN).reverse();
      table.replaceChildren(h('thead', {}, h('tr', {}, ['#', 'Time', 'Method', 'Path and query', 'Status', 'ms', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, list.length ? list.map((q) => h('tr', { 'data-id': q.id, class: q.source === 'ui' ? 'from-ui' : '', title: q.source === 'ui' ? 'Sent by this page' : '' },
          h('td', {}, q.id), h('td', {}, q.time.replace('T', ' ').replace(/\.\d+/, '')), h('td', {}, q.method),
          h('td', {}, q.path + (q.query ? '?' + q.query : '')),
          h('td', { class: `status-${String(q.status)[0]}` }, (q.status || 'cut') + (q.stub ? ` (stub ${q.stub})` : '')),
          h('td', {}, q.duration_ms),
          h('td', {}, h('button', { type: 'button', class: 'plain', 'aria-label': `Details of request ${q.id}`, on: { click: () => { chosen = q.id; showDetail(q); } } }, 'Details'))))
          : h('tr', {}, h('td', { colspan: 7 }, 'No requests recorded yet.'))));
      const notes = [];
      if (seen.length > SHOWN) notes.push(`Showing the newest ${SHOWN} of ${seen.length}: filter to see older ones.`);
      if (dropped) notes.push(`The journal dropped ${dropped} older request(s) past its capacity (--journal-capacity).`);
      showAlert(journalNote, notes.join(' '));
    }
    // The project's stubs, with what each met; removed here as with DELETE .../stubs/{id}.
    async function showStubs() {
      const answer = await call(p.name, 'GET', `_emulator/projects/${enc(p.name)}/stubs`);
      if (!current() || !answer.ok) return;
      const stubs = answer.json.stubs || [];
      if (!stubs.length) { stubsBox.replaceChildren(); return; }
      const when = (s) => `${s.after ? `after ${s.after}, ` : ''}${s.times ? `${s.times} time(s)` : 'always'}`;
      const answerText = (r) => r.connection ? `${r.connection} the connection` : `${r.status || 200}`;
      stubsBox.replaceChildren(h('h2', {}, 'Stubs'),
        h('p', { class: 'muted' }, 'Tried in this order; a stubbed request never reaches the data. A reset removes those not declared in the config.'),
        h('div', { class: 'scroll' }, h('table', { id: 'stub-list', 'aria-label': 'Stubs, in order' },
          h('thead', {}, h('tr', {}, ['#', 'Requests', 'Answer', 'When', 'Matched', 'Answered', ''].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, stubs.map((s) => h('tr', { 'data-stub': s.id },
            h('td', {}, s.id), h('td', {}, JSON.stringify(s.request)), h('td', {}, answerText(s.response)),
            h('td', {}, when(s) + (s.from_config ? ' (config)' : '')), h('td', {}, s.matched), h('td', {}, s.answered),
            h('td', {}, h('button', { type: 'button', class: 'plain', 'aria-label': `Remove stub ${s.id}`, on: { click: async () => {
              const gone = await call(p.name, 'DELETE', `_emulator/projects/${enc(p.name)}/stubs/${s.id}`);
              say(gone.ok ? `Stub ${s.id} is removed.` : refusal(gone));
              await showStubs();
            } } }, 'Remove'))))))));
    }
    async function showDetail(q) {
      let full = q;
      let problem = null;
      if (bodies) {
        // The bodies of this one request: its method and path from its millisecond on, by id.
        const answer = await call(p.name, 'GET', journalPath({ since: q.time, method: q.method, path: q.path, bodies: 'true' }));
        if (!current() || chosen !== q.id) return;
        const found = answer.ok && (answer.json.requests || []).find((r) => r.id === q.id);
        if (found) full = found; else problem = answer.ok ? 'The journal no longer holds this request.' : refusal(answer);
      }
      const shownBody = (body) => {
        if (body === undefined) return 'not kept (start the emulator with --journal-bodies)';
        if (body === null) return 'none';
        const cut = body.truncated ? `\n… cut: the journal keeps the first 64 KiB of ${body.bytes} bytes` : '';
        if (body.json !== undefined) return JSON.stringify(body.json, null, 2) + cut;
        if (body.text !== undefined) return body.text + cut;
        return `binary, ${body.bytes} bytes: not shown`;
      };
      const part = (title, body) => [h('h3', {}, title), h('pre', {}, shownBody(body))];
      detail.replaceChildren(h('h2', {}, `Request ${full.id}: ${full.method} ${full.path}`),
        h('p', {}, `${full.stub ? `Answered by stub ${full.stub}: ${full.status || 'the connection was cut'}` : `Answered ${full.status}`} in ${full.duration_ms} ms at ${full.time}. Project ${full.project || '-'}, resource ${full.resource || '-'}, model ${full.model || '-'}.${full.source === 'ui' ? ' Sent by this page.' : ''}`),
        h('p', {}, full.query ? `Query: ${full.query}` : 'No query.'),
        ...(problem ? [h('p', { class: 'error', role: 'alert' }, problem)] : []),
        ...part('Request body', bodies ? full.request_body : undefined), ...part('Answer body', bodies ? full.response_body : undefined));
      detail.hidden = false;
      detail.scrollIntoView({ block: 'nearest' });
    }

    // An expectation, as a test would write it, with its near misses.
    const eMethod = h('select', { id: 'expect-method' }, ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => h('option', { value: m }, m || 'any')));
    const ePath = h('input', { id: 'expect-path', placeholder: '/projects/demo/prod/shop/models/orders' });
    const eStatus = h('input', { id: 'expect-status', placeholder: '201 or 2xx', size: 8 });
    const eTimes = h('input', { id: 'expect-times', type: 'number', min: '0', value: '1', size: 4 });
    const eResult = h('div', { id: 'expect-result', 'aria-live': 'polite' });
    main.append(h('h2', {}, 'Expect a request'),
      h('p', { class: 'muted' }, 'What Emulator::assert_received checks in a test: when it is not met, the near misses say what came instead.'),
      h('form', { id: 'expect-form', on: { submit: async (e) => {
        e.preventDefault();
        const q = new URLSearchParams();
        if (eMethod.value) q.set('method', eMethod.value);
        if (ePath.value) q.set('path', ePath.value);
        if (eStatus.value) q.set('status', eStatus.value);
        q.set('at_least', eTimes.value || '1');
        const answer = await call(p.name, 'GET', `_emulator/projects/${enc(p.name)}/requests/expect?${q}`);
        if (!current()) return;
        if (!answer.ok) { eResult.replaceChildren(h('p', { class: 'error' }, refusal(answer))); return; }
        const c = answer.json;
        eResult.replaceChildren(c.met
          ? h('p', { class: 'ok' }, `Met: ${c.matched.length} request(s) match (expected ${c.expected}).`)
          : h('div', {}, h('p', { class: 'error' }, `Not met: expected ${c.expected}.`), h('pre', {}, c.report),
            c.near_misses.length ? h('p', {}, `${c.near_misses.length} near miss(es), best first, above.`) : null));
      } } }, field('Method', eMethod), h('label', { class: 'wide' }, 'Path', ePath), field('Status', eStatus), field('At least', eTimes),
      h('button', { type: 'submit' }, 'Check')), eResult);

    await refresh(true);
    if (!current()) return;
    app.timer = setInterval(() => { if (!document.hidden) refresh(false); }, 1000);
  }

  // ---------------------------------------------------------------------------------------------
  // State: reset, snapshots, fixtures

  async function state(main, p, _r, current) {
    const base = `_emulator/projects/${enc(p.name)}`;
    main.append(h('h1', {}, 'State'),
      h('p', { class: 'muted' }, 'A reset puts back the state at start (fixtures included). A snapshot keeps the state now, to put back later; snapshots end with the emulator.'));
    const stateError = alertBox('state-error');
    const nameInput = h('input', { id: 'snapshot-name', placeholder: 'before-import', pattern: '[A-Za-z0-9._-]{1,64}', required: true });
    const list = h('table', { id: 'snapshots', 'aria-label': 'Snapshots' });
    main.append(h('div', { class: 'row' }, h('button', { type: 'button', class: 'danger', id: 'reset', on: { click: (e) => {
        const button = e.currentTarget;
        if (button.dataset.armed !== 'yes') { button.dataset.armed = 'yes'; button.textContent = 'Confirm reset'; return; }
        button.dataset.armed = '';
        button.textContent = 'Reset to the state at start';
        act('POST', `${base}/reset`, 'Reset to the state at start');
      } } }, 'Reset to the state at start')),
      h('form', { id: 'snapshot-form', on: { submit: async (e) => { e.preventDefault(); await act('POST', `${base}/snapshots`, `Snapshot ${nameInput.value} taken`, { name: nameInput.value }); } } },
        field('Snapshot name', nameInput), h('button', { type: 'submit' }, 'Take snapshot')),
      stateError, h('h2', {}, 'Snapshots'), h('div', { class: 'scroll' }, list));
    const resources = p.resources.filter((r) => r.fixtures.length);
    main.append(h('h2', {}, 'Fixtures loaded at start'), resources.length
      ? h('ul', { id: 'fixtures' }, resources.flatMap((r) => r.fixtures.map((f) => h('li', {}, `${r.name}: ${f.outcome} (${f.source})`))))
      : h('p', { id: 'fixtures' }, 'None: no resource of this project names fixtures.'));
    const notReset = p.resources.filter((r) => !r.reset).map((r) => r.name);
    if (notReset.length) main.append(h('p', { class: 'muted' }, `Not put back by resets or snapshots (databases of your own without "reset": true): ${notReset.join(', ')}.`));

    async function act(method, path, done, body) {
      const answer = await call(p.name, method, path, body);
      if (!current()) return;
      if (!answer.ok) { showAlert(stateError, refusal(answer)); return; }
      showAlert(stateError, '');
      say(`${done}.`);
      await load();
    }
    async function load() {
      const answer = await call(p.name, 'GET', `${base}/snapshots`);
      if (!current()) return;
      if (!answer.ok) { showAlert(stateError, refusal(answer)); return; }
      const snaps = answer.json.snapshots || [];
      list.replaceChildren(h('thead', {}, h('tr', {}, ['Name', 'Saved at', 'Resources', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, snaps.map((s) => h('tr', { 'data-name': s.name }, h('td', {}, s.name === 'start' ? 'start (the state at start)' : s.name), h('td', {}, s.saved_at),
          h('td', {}, (s.resources || []).join(', ')),
          h('td', {}, h('div', { class: 'row' },
            h('button', { type: 'button', 'aria-label': `Restore snapshot ${s.name}`, on: { click: () => act('POST', `${base}/snapshots/${enc(s.name)}/restore`, `Snapshot ${s.name} restored`) } }, 'Restore'),
            s.name === 'start' ? null : h('button', { type: 'button', class: 'danger', 'aria-label': `Delete snapshot ${s.name}`, on: { click: () => act('DELETE', `${base}/snapshots/${enc(s.name)}`, `Snapshot ${s.name} deleted`) } }, 'Delete')))))));
    }
    await load();
  }

  // ---------------------------------------------------------------------------------------------
  // Page settings: draft and published side by side

  async function pages(main, p, _r, current) {
    const env = p.environments[0];
    main.append(h('h1', {}, 'Pages'), h('p', { class: 'muted' }, `Page settings of ${p.name}/${env}: the published set and the draft set, side by side.`));
    const path = (draft) => `api/projects/${enc(p.name)}/${enc(env)}/view_settings/?draft=${draft}`;
    const [published, draft] = await Promise.all([call(p.name, 'GET', path(0)), call(p.name, 'GET', path(1))]);
    if (!current()) return;
    for (const answer of [published, draft]) {
      if (!answer.ok) { main.append(h('p', { class: 'error', role: 'alert' }, refusal(answer))); return; }
    }
    const items = (answer) => (Array.isArray(answer.json) ? answer.json : answer.json.results || []);
    const byUid = new Map();
    for (const [side, answer] of [['published', published], ['draft', draft]]) {
      for (const page of items(answer)) {
        const row = byUid.get(page.uid) || {};
        row[side] = page;
        byUid.set(page.uid, row);
      }
    }
    const cell = (page) => {
      if (!page) return h('td', { class: 'null' }, 'not in this set');
      let params = page.params;
      try { params = JSON.stringify(JSON.parse(page.params), null, 2); } catch (_) { /* shown as stored */ }
      return h('td', {}, h('strong', {}, page.unique_name || page.name || page.uid), h('pre', {}, params === undefined ? '' : String(params)));
    };
    main.append(h('div', { class: 'scroll' }, h('table', { id: 'pages', 'aria-label': 'Pages, published and draft' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Page'), h('th', { scope: 'col' }, 'Published'), h('th', { scope: 'col' }, 'Draft'))),
      h('tbody', {}, byUid.size ? [...byUid].map(([uid, row]) => h('tr', {}, h('td', {}, uid), cell(row.published), cell(row.draft)))
        : h('tr', {}, h('td', { colspan: 3 }, 'No pages yet: create them through the API (svc pages create).'))))));
  }

  // ---------------------------------------------------------------------------------------------
  // Actions and workflows, with a form to run each

  function runner(p, id, title, path, inputs, description) {
    const data = {};
    for (const name of inputs) data[name] = null;
    const text = h('textarea', { id: `${id}-data`, spellcheck: 'false', rows: 4 }, JSON.stringify(data, null, 2));
    const out = h('div', { id: `${id}-result`, 'aria-live': 'polite' });
    return h('section', { class: 'card', 'aria-label': title }, h('h3', {}, title), description,
      h('form', { on: { submit: async (e) => {
        e.preventDefault();
        let value;
        try { value = JSON.parse(text.value); } catch (err) {
          out.replaceChildren(h('p', { class: 'error' }, `Not JSON, nothing sent: ${err.message}`));
          return;
        }
        const answer = await call(p.name, 'POST', path, { data: value });
        out.replaceChildren(answer.ok
          ? h('pre', {}, JSON.stringify(answer.json, null, 2))
          : h('p', { class: 'error' }, refusal(answer)));
      } } }, h('label', { class: 'wide' }, 'Inputs (JSON)', text), h('button', { type: 'submit', id: `${id}-run` }, 'Run')), out);
  }

  function actions(main, p) {
    const env = p.environments[0];
    main.append(h('h1', {}, 'Actions'));
    let any = false;
    for (const res of p.resources) {
      if (!res.actions.length) continue;
      any = true;
      main.append(h('h2', {}, `Resource ${res.name}`), h('div', { class: 'cols' }, res.actions.map((a) => runner(p, `action-${res.name}-${a.name}`, a.name,
        `projects/${enc(p.name)}/${enc(env)}/${enc(res.name)}/actions/${enc(a.name)}`, a.inputs,
        a.answer ? h('p', { class: 'muted' }, 'Answers a fixed value.') : h('pre', {}, a.sql.join(';\n'))))));
    }
    if (p.workflows.length) {
      any = true;
      main.append(h('h2', {}, 'Workflows'), h('div', { class: 'cols' }, p.workflows.map((w) => {
        const inputs = new Set();
        for (const s of w.steps) {
          const res = p.resources.find((r) => r.name === s.resource);
          const a = res && res.actions.find((x) => x.name === s.action);
          for (const i of (a ? a.inputs : [])) inputs.add(i);
        }
        return runner(p, `workflow-${w.uid}`, w.uid, `projects/${enc(p.name)}/${enc(env)}/workflows/${enc(w.uid)}/run`, [...inputs],
          h('p', { class: 'muted' }, `Steps: ${w.steps.map((s) => `${s.resource}.${s.action}`).join(' → ')}`));
      })));
    }
    if (!any) main.append(h('p', {}, 'This project declares no actions or workflows (the config\'s "actions" and "workflows").'));
  }

  // ---------------------------------------------------------------------------------------------

  // A fault of the page itself is said, not hidden in the console.
  window.addEventListener('error', (e) => say(`The page failed: ${e.message}`));
  window.addEventListener('unhandledrejection', (e) => say(`The page failed: ${e.reason && e.reason.message ? e.reason.message : e.reason}`));

  async function start() {
    let response;
    try {
      response = await fetch(`${BASE}/api/overview`, { credentials: 'same-origin' });
    } catch (e) {
      $('#main').replaceChildren(h('p', { class: 'error', role: 'alert' }, `The emulator did not answer (${e.message}): is it still running?`));
      return;
    }
    const text = await response.text();
    if (!response.ok) {
      let message = text;
      try { message = JSON.parse(text).error; } catch (_) { /* plain text */ }
      $('#main').replaceChildren(h('h1', {}, 'Not signed in'), h('p', { class: 'error', role: 'alert' }, message));
      return;
    }
    app.overview = JSON.parse(text);
    say(`Emulator ${app.overview.version} at ${app.overview.api_base_url}`);
    await render();
  }

  start();
})();
