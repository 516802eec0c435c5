// App measurements (a benchmark, not a test): cold start to first paint of the queue, time to
// open a 5,000-replacement / 1,000-file ast_edit action, and resident memory with it open.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/release/resolve-desk xvfb-run -a node bench.js [RUNS]
//
// Each run starts the real app through tauri-driver + WebKitWebDriver (so times include the
// WebDriver session set-up, an upper bound on what a person waits). Prints a Markdown table.
import { appBinary, appPid, median, residentKiB, startDriver, tempDir } from "./launch.js";
import { manyFiles } from "./bigfiles.js";

const BIN = appBinary("release");
const RUNS = Number(process.argv[2] ?? 3);
const WAIT = { timeout: 120000, interval: 20 };

async function measure(driver, args, openBig) {
  const t0 = performance.now();
  const browser = await driver.startApp(args);
  await browser.$('[data-testid="queue-card"]').waitForDisplayed(WAIT);
  const firstPaint = performance.now() - t0;
  const out = { firstPaint, label: await browser.$('[data-testid="queue-card"]').getAttribute("data-label") };
  if (openBig) {
    const t1 = performance.now();
    await browser.$('[data-testid="queue-card"]').click();
    await browser.$('[data-testid="file-row"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="file-row"]').click();
    await browser.waitUntil(async () => (await browser.$('[data-testid="diff-view"]').getText()).includes("logger.debug"), WAIT);
    out.open = performance.now() - t1;
    const pid = appPid(BIN);
    out.rss = residentKiB(pid);
  }
  await browser.deleteSession();
  return out;
}

const driver = await startDriver({ bin: BIN, logLevel: "error", quiet: true });
const data = tempDir("rd-bench-data-");
const demo = [];
const big = [];
try {
  for (let i = 0; i < RUNS; i++) demo.push(await measure(driver, ["--data-dir", data], false));
  for (let i = 0; i < RUNS; i++) {
    const { ws, script } = manyFiles();
    big.push(await measure(driver, [ws, "--script", script, "--data-dir", data], true));
  }
} finally {
  driver.kill();
}
const ms = (x) => `${Math.round(x)} ms`;
const mib = (k) => `${(k / 1024).toFixed(0)} MiB`;
console.log(`binary: ${BIN}\nruns: ${RUNS} (median; all: demo ${demo.map((d) => ms(d.firstPaint)).join(", ")})\n`);
console.log(`action measured: ${big[0]?.label}\n`);
console.log("| measurement | median |\n|---|---:|");
console.log(`| cold start to first paint of the queue (demo workspace) | ${ms(median(demo.map((d) => d.firstPaint)))} |`);
console.log(`| cold start to first paint, 5,000-replacement action queued at start (includes its preview) | ${ms(median(big.map((d) => d.firstPaint)))} |`);
console.log(`| open the 5,000-replacement / 1,000-file action (file list + first diff shown) | ${ms(median(big.map((d) => d.open)))} |`);
console.log(`| resident memory with it open: app process | ${mib(median(big.map((d) => d.rss.app)))} |`);
console.log(`| resident memory with it open: app + WebKit processes | ${mib(median(big.map((d) => d.rss.app + d.rss.webkit)))} |`);
