// The live rates: each series' last 15 minutes of GET /v1/stats/series, kept here and
// extended each second with only the seconds after the last one, drawn as SVG polylines.
const OUTCOMES = ['allowed', 'denied', 'delayed', 'dry_run_denied'];
const POINTS = 900;
const SVG = 'http://www.w3.org/2000/svg';

// series key "rule:api" -> {kind, name, first, allowed: [...], ...}; `last`: the latest second.
const held = new Map();
let last = 0;

function keep(s, first) {
  const key = s.kind + ':' + s.name;
  let h = held.get(key);
  if (!h) {
    h = { kind: s.kind, name: s.name, first };
    for (const o of OUTCOMES) h[o] = [];
    held.set(key, h);
  }
  // Seconds this series missed (it was not in an answer) are zeros.
  const gap = first - (h.first + h.allowed.length);
  for (const o of OUTCOMES) {
    if (gap > 0) h[o].push(...new Array(gap).fill(0));
    h[o].push(...s[o]);
    const over = h[o].length - POINTS;
    if (over > 0) h[o].splice(0, over);
  }
  h.first = first + s.allowed.length - h.allowed.length;
}

export function merge(answer) {
  if (!answer.last) return;
  for (const s of answer.series) keep(s, answer.first);
  last = answer.last;
}

export function since() { return last; }

function chart(h) {
  const box = document.createElement('div');
  box.className = 'chart';
  box.dataset.series = h.kind + ':' + h.name;
  const title = document.createElement('div');
  title.className = 'title';
  title.textContent = h.name;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${POINTS} 100`);
  svg.setAttribute('preserveAspectRatio', 'none');
  for (const o of OUTCOMES) {
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('class', o);
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.appendChild(line);
  }
  const latest = document.createElement('div');
  latest.className = 'latest';
  for (const o of OUTCOMES) {
    const span = document.createElement('span');
    span.className = o;
    span.dataset.outcome = o;
    latest.appendChild(span);
  }
  box.append(title, svg, latest);
  return box;
}

// Draws every series held; the newest second sits at the right edge.
export function draw() {
  for (const h of held.values()) {
    const where = document.getElementById('charts-' + h.kind);
    let box = [...where.children].find((c) => c.dataset.series === h.kind + ':' + h.name);
    if (!box) {
      box = chart(h);
      where.appendChild(box);
    }
    const n = h.allowed.length;
    const top = Math.max(1, ...OUTCOMES.flatMap((o) => h[o]));
    const offset = POINTS - n;
    const lines = box.querySelectorAll('polyline');
    OUTCOMES.forEach((o, i) => {
      const pts = h[o].map((v, x) => `${offset + x},${(100 - (v / top) * 96).toFixed(1)}`);
      lines[i].setAttribute('points', pts.join(' '));
      const latest = n ? h[o][n - 1] : 0;
      const span = box.querySelector(`span[data-outcome="${o}"]`);
      span.textContent = `${o.replace(/_/g, ' ')} ${latest}/s`;
      box.dataset['latest_' + o] = String(latest);
    });
    box.dataset.last = String(last);
  }
}
