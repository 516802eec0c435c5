// Edit, then apply on the 20,000-line file with 5,000 rewrites (a benchmark, not a test): the
// time from a click on "Edit before applying" to the editor showing the proposal (both sides
// of the file fetched, CodeMirror loaded on first use, the merge view drawn), over RUNS opens,
// and how many lines the editable side draws.
//
//   RESOLVE_DESK_BIN=$CARGO_TARGET_DIR/release/resolve-desk xvfb-run -a node bench-edit.js [RUNS]
//
// Polled every 10 ms through WebDriver: each figure includes up to one round trip.
import { appBinary, median, startDriver, tempDir } from "./launch.js";
import { bigFile } from "./bigfiles.js";

const RUNS = Number(process.argv[2] ?? 10);
const WAIT = { timeout: 60000, interval: 10 };

const { ws, script } = bigFile();
const driver = await startDriver({ bin: appBinary(process.env.RD_PROFILE ?? "release") });
const browser = await driver.startApp([ws, "--script", script, "--data-dir", tempDir("rd-bench-edit-data-")]);
try {
  await browser.$('[data-testid="queue-card"]').waitForExist(WAIT);
  await browser.$('[data-testid="queue-card"]').click();
  await browser.$('[data-testid="edit-file-button"]').waitForDisplayed(WAIT);
  const opens = [];
  let drawn = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await browser.$('[data-testid="edit-file-button"]').click();
    await browser.$('[data-testid="editor-text"]').waitForDisplayed(WAIT);
    opens.push(performance.now() - t);
    drawn = await browser.execute(() => document.querySelectorAll(".cm-merge-b .cm-line").length);
    await browser.$('[data-testid="editor-cancel"]').click();
    await browser.$('[data-testid="file-editor"]').waitForExist({ ...WAIT, reverse: true });
  }
  const fmt = (xs) => `median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`"Edit before applying" → editor shown (20,000 lines, 5,000 changes): ${fmt(opens)} over ${RUNS} opens (the first loads CodeMirror: ${opens[0].toFixed(0)} ms)`);
  console.log(`lines drawn on the editable side: ${drawn}`);
} finally {
  await browser.deleteSession().catch(() => {});
  driver.kill();
}
