// Headless Chromium for the dashboard test (test_dashboard.py): reads one JSON command a line
// on stdin, does it in the page with puppeteer-core, and answers one JSON line on stdout, so
// that the Python test drives the browser between its own steps (load, edits, a restart).
import readline from 'node:readline';
import puppeteer from 'puppeteer-core';

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 1600 });
const problems = [];
page.on('pageerror', (e) => problems.push(String(e)));

const ops = {
  goto: (c) => page.goto(c.url, { waitUntil: 'load' }).then((r) => r.status()),
  eval: (c) => page.evaluate(c.js),
  wait: (c) => page.waitForFunction(c.js, { timeout: c.timeout || 10000, polling: 100 }).then((h) => h.jsonValue()),
  type: async (c) => {
    await page.$eval(c.selector, (e) => { e.value = ''; });
    await page.type(c.selector, c.text);
  },
  click: (c) => page.click(c.selector),
  screenshot: (c) => page.screenshot({ path: c.path, fullPage: true }).then(() => c.path),
  errors: () => problems.splice(0),
  close: async () => { await browser.close(); process.exit(0); },
};

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  try {
    const c = JSON.parse(line);
    answer = { ok: true, value: (await ops[c.op](c)) ?? null };
  } catch (e) {
    answer = { ok: false, error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
await browser.close();
