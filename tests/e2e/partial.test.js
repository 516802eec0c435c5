// End to end: a partial apply in the real app. An ast_edit preview rewrites `console.log` in
// three files; the person unticks one file (space on its focused row) and one replacement of
// another, Apply says what it will do, and exactly the rest is written: the left-out file is
// untouched, the left-out replacement is kept as it was. The history says
// `applied 3 of 5 replacements in 2 of 3 files`. Saves (to SHOTS) partial-apply.png
// and partial-apply-history.png.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { root, startDriver, tempDir, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };

let driver;
let browser;

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

const A = "export function a(x: number) {\n  console.log('a', x);\n  console.log('a twice', x);\n  return x;\n}\n";
const B = "export function b() {\n  console.log('b');\n}\n";
const C = "export function c(y: string) {\n  console.log('c', y);\n  console.log('c again');\n  return y;\n}\n";

test("untick a file and a replacement, apply the rest, and the history says so", async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  const ws = tempDir("rd-e2e-partial-ws-");
  const data = tempDir("rd-e2e-partial-data-");
  fs.mkdirSync(path.join(ws, "src"));
  fs.writeFileSync(path.join(ws, "src/a.ts"), A);
  fs.writeFileSync(path.join(ws, "src/b.ts"), B);
  fs.writeFileSync(path.join(ws, "src/c.ts"), C);
  const script = path.join(data, "partial.jsonl");
  fs.writeFileSync(
    script,
    JSON.stringify({ tool: "ast_edit", params: { ops: [{ pat: "console.log($$$A)", out: "logger.info($$$A)" }], lang: "ts", path: "src" } }) + "\n",
  );
  driver = await startDriver();
  browser = await driver.startApp([ws, "--script", script, "--data-dir", data]);
  await browser.setWindowSize(1400, 900).catch(() => {});

  const rows = () => browser.$$('[data-testid="file-row"]');
  await browser.waitUntil(async () => (await rows()).length === 3, { ...WAIT, timeoutMsg: "three file rows" });
  const row = (p) => browser.$(`[data-testid="file-row"][data-path="${p}"]`);

  // Space on the focused row unticks src/b.ts.
  await (await row("src/b.ts")).click();
  await browser.keys(" ");
  await browser.waitUntil(async () => (await (await row("src/b.ts")).getAttribute("aria-checked")) === "false", {
    ...WAIT,
    timeoutMsg: "src/b.ts unticked by space",
  });

  // One replacement of src/c.ts unticked in its list.
  await (await row("src/c.ts")).click();
  const repRow = () => browser.$('[data-testid="replacement-row"][data-id="2"]');
  await browser.waitUntil(async () => (await repRow()).isExisting(), { ...WAIT, timeoutMsg: "replacement rows of src/c.ts" });
  await (await (await repRow()).$("input")).click();

  const apply = await browser.$('[data-testid="apply-button"]');
  await browser.waitUntil(async () => (await apply.getText()).includes("Apply 2 of 3 files, leaving out 1 replacement"), {
    ...WAIT,
    timeoutMsg: "Apply says what it will do",
  });
  const reason = "b.ts keeps its console; c's second log stays";
  await (await browser.$('[data-testid="reason-input"]')).setValue(reason);
  await browser.waitUntil(async () => (await (await browser.$('[data-testid="reason-input"]')).getValue()) === reason, WAIT);
  await browser.saveScreenshot(path.join(SHOTS, "partial-apply.png"));
  await apply.click();

  const banner = () => browser.$('[data-testid="result-banner"]');
  await browser.waitUntil(async () => (await (await banner()).isExisting()) && (await (await banner()).getText()).includes("Left out"), {
    ...WAIT,
    timeoutMsg: "the result banner with what was left out",
  });
  const text = await (await banner()).getText();
  assert.match(text, /Applied: AST Edit: 5 replacements in 3 files\./);
  assert.match(text, /Left out 1 of 3 files: src\/b\.ts/);
  assert.match(text, /Left out 1 of 2 replacements in src\/c\.ts/);

  assert.equal(fs.readFileSync(path.join(ws, "src/a.ts"), "utf8"), A.replaceAll("console.log(", "logger.info("));
  assert.equal(fs.readFileSync(path.join(ws, "src/b.ts"), "utf8"), B, "the left-out file is untouched");
  assert.equal(
    fs.readFileSync(path.join(ws, "src/c.ts"), "utf8"),
    "export function c(y: string) {\n  logger.info('c', y);\n  console.log('c again');\n  return y;\n}\n",
    "the left-out replacement is kept as it was",
  );

  // The history shows the engine's words.
  await browser.$('[data-testid="history-button"]').click();
  const partial = () => browser.$('[data-testid="history-partial"]');
  await browser.waitUntil(async () => (await partial()).isExisting(), { ...WAIT, timeoutMsg: "history shows the partial apply" });
  assert.equal(await (await partial()).getText(), "applied 3 of 5 replacements in 2 of 3 files");
  await (await partial()).scrollIntoView().catch(() => {});
  await browser.saveScreenshot(path.join(SHOTS, "partial-apply-history.png"));
});
