// The classic Jupyter Notebook, served on loopback with the tracebook kernel
// registered in JUPYTER_PATH, opened in Debian's headless Chromium: every
// notebook in notebooks/ runs all its cells, and the rendered outputs (an
// HTML table at least) must be on the page. Screenshots go to
// test-artifacts/ at the repository root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const artifacts = join(root, 'test-artifacts');
const port = 18888 + Math.floor(Math.random() * 1000);

function startNotebook(dir) {
  const proc = spawn('/usr/bin/python3', ['-m', 'notebook', '--no-browser', `--port=${port}`,
    '--ip=127.0.0.1', '--NotebookApp.token=', '--NotebookApp.password=',
    '--NotebookApp.open_browser=False', `--notebook-dir=${dir}`,
    ...(process.getuid && process.getuid() === 0 ? ['--allow-root'] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('notebook server did not start:\n' + log)), 60000);
    const onData = (d) => {
      log += d;
      if (log.includes(`127.0.0.1:${port}`)) { clearTimeout(timer); resolve(); }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`notebook server exited ${code}:\n${log}`)));
  });
  return { proc, ready };
}

test('classic Notebook runs the notebooks with the tracebook kernel', { timeout: 600000 }, async () => {
  mkdirSync(artifacts, { recursive: true });
  // The notebooks refer to ../testdata: serve a copy of both folders.
  const dir = mkdtempSync(join(tmpdir(), 'tb-nb-'));
  cpSync(join(root, 'notebooks'), join(dir, 'notebooks'), { recursive: true });
  cpSync(join(root, 'testdata'), join(dir, 'testdata'), { recursive: true });
  const notebooks = readdirSync(join(dir, 'notebooks')).filter((f) => f.endsWith('.ipynb')).sort();
  assert.ok(notebooks.length > 0, 'no notebooks');

  const server = startNotebook(dir);
  await server.ready;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const nb of notebooks) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`http://127.0.0.1:${port}/notebooks/notebooks/${nb}`);
      await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel
        && Jupyter.notebook.kernel.is_connected(), null, { timeout: 120000 });
      await page.evaluate(() => { Jupyter.notebook.clear_all_output(); Jupyter.notebook.execute_all_cells(); });
      // Done when no cell is still queued or running and the kernel is idle.
      await page.waitForFunction(() => {
        const cells = Jupyter.notebook.get_cells().filter((c) => c.cell_type === 'code');
        const running = cells.some((c) => c.element.hasClass('running'));
        const ran = cells.every((c) => c.input_prompt_number !== null && c.input_prompt_number !== '*');
        return !running && ran && document.querySelector('#kernel_indicator_icon.kernel_idle_icon');
      }, null, { timeout: 300000, polling: 500 });
      await page.screenshot({ path: join(artifacts, `notebook-${nb.replace('.ipynb', '')}.png`), fullPage: true });
      const tables = await page.locator('.output_area table').count();
      assert.ok(tables > 0, `${nb}: no rendered table in the outputs`);
      const errorsShown = await page.locator('.output_area .output_error').count();
      assert.equal(errorsShown, 0, `${nb}: a cell shows an error`);
      assert.deepEqual(errors, [], `${nb}: page errors`);
      await page.close();
    }
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
  }
});
