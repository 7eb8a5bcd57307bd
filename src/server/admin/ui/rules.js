// The rule set, editable: each rule's limit and dry-run switch go to PUT /v1/rules/{name}, as
// any admin client's change does; a refusal is shown beside the field its error names.
import { api } from './api.js';

function cell(tr, content) {
  const td = document.createElement('td');
  if (content instanceof Node) td.appendChild(content); else td.textContent = content ?? '';
  tr.appendChild(td);
  return td;
}

// The rule as PUT takes it back: its own JSON, with the fields the form changes.
function edited(rule, limit, dryRun) {
  const body = { ...rule, limit };
  delete body.name;
  if (dryRun) {
    body.action = 'dry-run';
    delete body.max_wait;
  } else if (rule.action === 'dry-run') {
    body.action = 'reject';
  }
  return body;
}

async function save(rule, tr) {
  const limit = tr.querySelector('input.limit').value.trim();
  const dryRun = tr.querySelector('input.dry-run').checked;
  for (const e of tr.querySelectorAll('.field-error')) e.textContent = '';
  tr.querySelector('.saved').textContent = '';
  const r = await api('/v1/rules/' + encodeURIComponent(rule.name), {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(edited(rule, limit, dryRun)),
  });
  const answer = await r.json();
  if (!r.ok) {
    const field = tr.querySelector(`.field-error[data-field="${answer.field}"]`)
      || tr.querySelector('.field-error[data-field="rule"]');
    field.textContent = answer.error;
    return;
  }
  await loadRules();
  const now = document.querySelector(`#rule-rows tr[data-rule="${CSS.escape(rule.name)}"] .saved`);
  if (now) now.textContent = 'saved';
}

function row(rule) {
  const tr = document.createElement('tr');
  tr.dataset.rule = rule.name;
  cell(tr, rule.name);
  const limitTd = cell(tr, '');
  const limit = document.createElement('input');
  limit.className = 'limit';
  limit.name = 'limit';
  limit.value = rule.limit;
  const limitError = document.createElement('span');
  limitError.className = 'field-error';
  limitError.dataset.field = 'limit';
  limitTd.append(limit, limitError);
  cell(tr, (rule.key || []).join(', '));
  cell(tr, rule.action);
  const dry = document.createElement('input');
  dry.type = 'checkbox';
  dry.className = 'dry-run';
  dry.checked = rule.action === 'dry-run';
  dry.addEventListener('change', () => save(rule, tr));
  cell(tr, dry);
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'save';
  button.textContent = 'Save';
  button.addEventListener('click', () => save(rule, tr));
  const saveTd = cell(tr, button);
  const saved = document.createElement('span');
  saved.className = 'saved';
  const other = document.createElement('span');
  other.className = 'field-error';
  other.dataset.field = 'rule';
  saveTd.append(saved, other);
  return tr;
}

export let ruleNames = [];
// The rules with on_deny: their blocked keys are listed beside their top keys.
export let blockingRules = [];

export async function loadRules() {
  const r = await api('/v1/rules');
  if (!r.ok) return;
  const rules = await r.json();
  ruleNames = rules.map((x) => x.name);
  blockingRules = rules.filter((x) => x.on_deny).map((x) => x.name);
  const body = document.getElementById('rule-rows');
  body.replaceChildren(...rules.map(row));
  const select = document.getElementById('key-rule');
  const chosen = select.value;
  select.replaceChildren(...ruleNames.map((n) => new Option(n, n)));
  if (ruleNames.includes(chosen)) select.value = chosen;
  await loadLastChange();
}

// A line diff (longest common subsequence; a rule's YAML is a few lines).
export function diff(a, b) {
  const x = a ? a.replace(/\n$/, '').split('\n') : [];
  const y = b ? b.replace(/\n$/, '').split('\n') : [];
  const L = Array.from({ length: x.length + 1 }, () => new Array(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { out.push([' ', x[i]]); i++; j++; }
    else if (i < x.length && (j === y.length || L[i + 1][j] >= L[i][j + 1])) out.push(['-', x[i++]]);
    else out.push(['+', y[j++]]);
  }
  return out;
}

async function loadLastChange() {
  const r = await api('/v1/changes/last');
  if (!r.ok) return;
  const c = await r.json();
  if (!c.rule) return;
  const where = document.getElementById('last-change');
  const head = document.createElement('p');
  head.textContent = `rule ${c.rule}, ${new Date(c.at * 1000).toLocaleString()}`;
  const pre = document.createElement('pre');
  pre.className = 'diff';
  for (const [mark, line] of diff(c.before, c.after)) {
    const span = document.createElement('div');
    span.className = mark === '+' ? 'add' : mark === '-' ? 'del' : 'same';
    span.textContent = mark + ' ' + line;
    pre.appendChild(span);
  }
  where.replaceChildren(head, pre);
}
