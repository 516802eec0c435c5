// Review at size (a benchmark, not a test): for a 5,000-replacement / 1,000-file ast_edit action
// and for one 20,000-line file with 5,000 rewrites, measures
// - open: click on the card → the first diff rows painted (the action was previewed at start);
// - highlighted: → the whole-file highlighting painted (the 20,000-line file);
// - scroll frame time: the diff scrolled 600 frames at 120 px a frame (requestAnimationFrame
//   deltas, performance.now() in the page): median, p95, max; and the floor: a hand-written
//   windowed list of the same rows, geometry and font in the same page, scrolled the same way;
// - resident memory once scrolled: the app process, and WebKit's processes (its children).
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/release/resolve-desk xvfb-run -a --server-args="-screen 0 1400x900x24" node bench-review.js [RUNS]
import { appBinary, appPid, median, rendererAsPeopleGetIt, residentKiB, startDriver, tempDir } from "./launch.js";
import { bigFile, manyFiles } from "./bigfiles.js";

const BIN = appBinary("release");
const RENDERER = rendererAsPeopleGetIt();
const RUNS = Number(process.argv[2] ?? 3);
const WAIT = { timeout: 180000, interval: 20 };

async function measure(driver, { ws, script }, waitHighlight) {
  const browser = await driver.startApp([ws, "--script", script, "--data-dir", tempDir("rd-bench-review-data-")]);
  try {
    // 600 frames under load can outlast WebDriver's default 30 s script timeout.
    await browser.setTimeout({ script: 600000 });
    await browser.$('[data-testid="queue-card"]').waitForDisplayed(WAIT);
    const t0 = Date.now();
    await browser.execute(() => {
      window.__rows = null;
      window.__lit = null;
      const obs = new MutationObserver(() => {
        if (!window.__rows && document.querySelector('[data-testid="diff-line"]')) requestAnimationFrame(() => (window.__rows = Date.now()));
        if (!window.__lit && document.querySelector('[data-testid="diff-line"] .hljs-comment, [data-testid="diff-line"] .hljs-string')) {
          requestAnimationFrame(() => (window.__lit = Date.now()));
        }
        if (window.__rows && window.__lit) obs.disconnect();
      });
      obs.observe(document.body, { childList: true, subtree: true });
    });
    await browser.$('[data-testid="queue-card"]').click();
    await browser.waitUntil(() => browser.execute(() => window.__rows !== null), WAIT);
    const open = (await browser.execute(() => window.__rows)) - t0;
    let lit = null;
    if (waitHighlight) {
      await browser.waitUntil(() => browser.execute(() => window.__lit !== null), WAIT);
      lit = (await browser.execute(() => window.__lit)) - t0;
    }
    // One scroll loop for the app and its floor: 600 frames, 120 px a frame, the deltas between
    // animation frames.
    await browser.execute(() => {
      window.__scrollFrames = (el, done) => {
        const deltas = [];
        let last = performance.now();
        let n = 0;
        const step = (t) => {
          deltas.push(t - last);
          last = t;
          el.scrollTop += 120;
          if (++n < 600) requestAnimationFrame(step);
          else done(deltas);
        };
        requestAnimationFrame(step);
      };
    });
    const frames = await browser.executeAsync((done) => {
      const el = document.querySelector('[data-testid="diff-scroll"]');
      window.__scrollFrames(el, (deltas) => done({ deltas, rows: el.querySelectorAll('[data-testid="diff-line"]').length }));
    });
    const pid = appPid(BIN);
    const mem = residentKiB(pid);
    // The floor, in the same page and window: a hand-written windowed list (no framework, rows
    // recycled, a row's HTML set only when it shows a new line) of the same geometry, font and
    // highlighted lines (taken from the diff's rows), scrolled the same way.
    const floor = await browser.executeAsync((done) => {
      const src = document.querySelector('[data-testid="diff-scroll"]');
      const rect = src.getBoundingClientRect();
      const font = getComputedStyle(document.querySelector('[data-testid="diff-table"]')).font;
      const lines = [...document.querySelectorAll('[data-testid="diff-line"] .text')].map((e) => e.innerHTML);
      const H = 20;
      const box = document.createElement("div");
      box.style.cssText = `position:fixed;left:${rect.left}px;top:${rect.top}px;width:${rect.width}px;height:${rect.height}px;overflow:auto;contain:strict;background:#fff;z-index:99999`;
      const inner = document.createElement("div");
      inner.style.cssText = `position:relative;height:${src.scrollHeight}px;font:${font}`;
      box.appendChild(inner);
      const slots = Math.ceil(rect.height / H) + 24;
      const rows = [];
      for (let i = 0; i < slots; i++) {
        const r = document.createElement("div");
        r.style.cssText = "position:absolute;top:0;left:0;width:100%;display:grid;grid-template-columns:52px 52px 18px minmax(0,1fr)";
        r.innerHTML = '<span class="no"></span><span class="no"></span><span class="sg"></span><span class="text" style="white-space:pre-wrap"></span>';
        r.dataset.k = "-1";
        inner.appendChild(r);
        rows.push(r);
      }
      const place = () => {
        const first = Math.max(0, Math.floor(box.scrollTop / H) - 12);
        for (let k = first; k < first + slots; k++) {
          const r = rows[k % slots];
          if (r.dataset.k === String(k)) continue;
          r.dataset.k = String(k);
          r.style.transform = `translateY(${k * H}px)`;
          r.children[0].textContent = String(k + 1);
          r.children[1].textContent = String(k + 1);
          r.children[3].innerHTML = lines[k % lines.length];
        }
      };
      box.addEventListener("scroll", place, { passive: true });
      place();
      document.body.appendChild(box);
      window.__scrollFrames(box, (deltas) => {
        box.remove();
        done(deltas);
      });
    });
    const pct = (xs, q) => {
      const s = xs.slice(1).sort((a, b) => a - b);
      return q === 1 ? s.at(-1) : s[Math.floor(s.length * q)];
    };
    const d = frames.deltas;
    return { open, lit, p50: pct(d, 0.5), p95: pct(d, 0.95), max: pct(d, 1), floor50: pct(floor, 0.5), floor95: pct(floor, 0.95), rows: frames.rows, mem };
  } finally {
    await browser.deleteSession();
  }
}

const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
const results = { many: [], big: [] };
try {
  for (let i = 0; i < RUNS; i++) {
    results.many.push(await measure(driver, manyFiles(), false));
    results.big.push(await measure(driver, bigFile(), true));
  }
} finally {
  driver.kill();
}
const ms = (x) => (x === null ? "—" : `${Math.round(x)} ms`);
const f1 = (x) => `${x.toFixed(1)} ms`;
const mib = (k) => `${(k / 1024).toFixed(0)} MiB`;
const row = (name, rs) => {
  const m = (k) => median(rs.map(k));
  return `| ${name} | ${ms(m((r) => r.open))} | ${ms(rs[0].lit === null ? null : m((r) => r.lit))} | ${f1(m((r) => r.p50))} / ${f1(m((r) => r.p95))} / ${f1(m((r) => r.max))} | ${f1(m((r) => r.floor50))} / ${f1(m((r) => r.floor95))} | ${m((r) => r.rows)} | ${mib(m((r) => r.mem.app))} | ${mib(m((r) => r.mem.webkit))} |`;
};
console.log(`binary: ${BIN}; runs: ${RUNS} (medians); WEBKIT_DISABLE_DMABUF_RENDERER: ${RENDERER}\n`);
console.log("| action | open (click → rows painted) | whole-file highlighting painted | scroll frame p50 / p95 / max | floor p50 / p95 | rows in DOM | app RSS | WebKit RSS |\n|---|---:|---:|---:|---:|---:|---:|---:|");
console.log(row("5,000 replacements in 1,000 files (first file's diff)", results.many));
console.log(row("one 20,000-line file, 5,000 rewrites", results.big));
