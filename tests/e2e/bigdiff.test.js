// End to end: a 20,000-line file with 5,000 rewrites in the real app. The diff opens (windowed:
// a few dozen rows in the DOM of ~25,000), a block comment spanning lines is coloured as a
// comment on every line (the whole file is highlighted, then cut into lines), the lines after
// the last change unfold from the file's text, and the end of the file scrolls into view.
// Saves (to SHOTS) long-diff-multiline-comment.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";
import { bigFile } from "./bigfiles.js";

const WAIT = { timeout: 60000, interval: 100 };

let driver;
let browser;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  const { ws, script } = bigFile();
  driver = await startDriver();
  browser = await driver.startApp([ws, "--script", script, "--data-dir", tempDir("rd-e2e-big-data-")]);
  await browser.$('[data-testid="queue-card"]').waitForExist(WAIT);
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

/** In the page: the rows on screen as [old no, new no, text, comment text]. */
const rows = () =>
  browser.execute(() =>
    [...document.querySelectorAll('[data-testid="diff-line"]')].map((r) => {
      const [o, n] = r.querySelectorAll(".no");
      return [Number(o.textContent) || null, Number(n.textContent) || null, r.querySelector(".text").textContent, [...r.querySelectorAll(".text .hljs-comment")].map((c) => c.textContent).join("")];
    }),
  );

test("the 20,000-line diff opens windowed, highlighted as a whole file", async () => {
  await browser.$('[data-testid="queue-card"]').click();
  await browser.$('[data-testid="diff-line"]').waitForExist(WAIT);
  const total = Number(await browser.$('[data-testid="diff-table"]').getAttribute("aria-rowcount"));
  assert.ok(total > 20000, `~25,000 rows in the diff, got ${total}`);
  assert.ok((await rows()).length < 200, "only the rows in view are in the DOM");
  // Line 5 is the second line of a block comment that mentions console.log(here).
  await browser.waitUntil(async () => (await rows()).some(([, n, , comment]) => n === 5 && comment.includes("console.log(here)")), {
    ...WAIT,
    timeoutMsg: "line 5 (inside a block comment) was not coloured as a comment",
  });
  const line5 = (await rows()).find(([, n]) => n === 5);
  assert.equal(line5[3].trim(), line5[2].trim(), "the whole of line 5 is comment");
  await browser.saveScreenshot(path.join(SHOTS, "long-diff-multiline-comment.png"));
});

test("the lines after the last change unfold from the file and the end scrolls into view", async () => {
  const scroller = await browser.$('[data-testid="diff-scroll"]');
  await browser.execute((el) => (el.scrollTop = el.scrollHeight), scroller);
  // The fold after the last change is the one that only grows downwards (no "↑" button). Keep
  // scrolling to the end until it is rendered (rows are measured as they appear), then expand it.
  await browser.waitUntil(
    () =>
      browser.execute((el) => {
        el.scrollTop = el.scrollHeight;
        const last = [...document.querySelectorAll('[data-testid="expand-gap"]')]
          .map((g) => g.closest('[role="row"]'))
          .find((row) => row.querySelector('[data-testid="unfold-down"]') && !row.querySelector('[data-testid="unfold-up"]'));
        last?.querySelector('[data-testid="unfold-all"]').click();
        return !!last;
      }, scroller),
    { ...WAIT, timeoutMsg: "no fold after the last change" },
  );
  await browser.waitUntil(
    async () => {
      await browser.execute((el) => (el.scrollTop = el.scrollHeight), scroller);
      return (await rows()).some(([, n]) => n === 20000);
    },
    { ...WAIT, timeoutMsg: "line 20,000 never showed" },
  );
  const last = (await rows()).find(([, n]) => n === 20000);
  assert.match(last[2], /const tail19999 = 19999;/);
});

test("the 20,000-line file opens in the editor, drawn a screen at a time, and an edit in it is kept", async () => {
  await browser.$('[data-testid="edit-file-button"]').click();
  const text = await browser.$('[data-testid="editor-text"]');
  await text.waitForDisplayed({ ...WAIT, timeoutMsg: "the editor opens on the 20,000-line file" });
  const drawn = () => browser.execute(() => document.querySelectorAll(".cm-merge-b .cm-line").length);
  assert.ok((await drawn()) < 600, `only the lines in view are drawn, got ${await drawn()}`);
  // Scrolled to the end: the last lines are drawn with their numbers, and still only a screenful.
  await browser.waitUntil(
    () =>
      browser.execute(() => {
        const scroller = document.querySelector(".cm-mergeView");
        scroller.scrollTop = scroller.scrollHeight;
        return [...document.querySelectorAll(".cm-merge-b .cm-lineNumbers .cm-gutterElement")].some((g) => Number(g.textContent) >= 20000);
      }),
    { ...WAIT, timeoutMsg: "line 20,000 never showed in the editor" },
  );
  assert.ok((await drawn()) < 600, `still only the lines in view, got ${await drawn()}`);
  const last = await browser.$$(".cm-merge-b .cm-line");
  await last[last.length - 1].click();
  for (const key of "// checked") await browser.keys(key);
  await browser.waitUntil(
    () => browser.execute(() => [...document.querySelectorAll(".cm-merge-b .cm-line")].some((l) => l.textContent.includes("// checked"))),
    { ...WAIT, timeoutMsg: "the typed text is in the editor" },
  );
  await browser.saveScreenshot(path.join(SHOTS, "edit-20000-lines.png"));
  await browser.$('[data-testid="editor-keep"]').click();
  await browser.$('[data-testid="file-edited"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the edit is kept" });
  assert.match(await browser.$('[data-testid="apply-button"]').getText(), /Apply with my edits \(1 file\)/);
});
