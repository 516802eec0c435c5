// End to end: a review the agent can act on, in rounds, as the issue tells it. An MCP client
// (the official TypeScript SDK through the real `rdesk mcp`) pushes a preview and waits on
// `resolve`; in the real window the person comments on two lines of the diff (the comments
// survive a reload of the page: the desk keeps them), marks the file viewed and presses
// "Request changes": the agent's one `resolve` result carries the decision line, the reason
// and exactly those comments, quoted, in the documented `path:line: "quoted line" — comment`
// form, with the same as data in the details. The agent's next preview, proposed as before,
// is round 2: the file is marked "= round 1", keeps its viewed mark, and each earlier comment
// shows beside its line as "not changed since". Asked again, the agent changes its proposal:
// round 3 clears the viewed mark, marks the comments "changed since", and shows only what
// changed since round 2 (the interdiff); the person edits one line by hand and applies, the
// bytes on disk are the edited ones, and the agent reads "Applied with the person's edits".
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { mcpAgent, startAppWithMcp, textOf, SHOTS } from "./launch.js";

const WAIT = { timeout: 20000, interval: 100 };
const EDIT = { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts", path: "src/apply.ts" };

let driver;
let browser;
let ws;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  ({ ws, driver, browser } = await startAppWithMcp("rd-e2e-review"));
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
});

test("comments, Request changes, rounds with earlier comments and viewed marks, then edit and apply", async () => {
  const client = await mcpAgent("e2e-reviewer", ws);
  try {
    const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
    const preview = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(preview.isError, true, textOf(preview));
    const card = await browser.$('[data-testid="queue-card"]');
    await card.waitForDisplayed(WAIT);
    await card.click();

    // Two added lines of the diff: their new-side line numbers start comments.
    const added = '[role="row"][data-kind="added"] [data-testid="comment-line"][data-side="new"]';
    await browser.$(added).waitForDisplayed({ ...WAIT, timeoutMsg: "the diff's added lines can be commented on" });
    const lineNos = [];
    for (const [k, words] of [[0, "use the shared logger's info level here"], [1, "and here too"]]) {
      const line = (await browser.$$(added))[k];
      lineNos.push(Number(await line.getAttribute("data-line")));
      await line.click();
      const input = await browser.$('[data-testid="comment-input"]');
      await input.waitForDisplayed(WAIT);
      await input.setValue(words);
      await browser.$('[data-testid="comment-save"]').click();
      await browser.waitUntil(async () => (await browser.$$('[data-testid="comment"]')).length === k + 1, {
        ...WAIT,
        timeoutMsg: `comment ${k + 1} shows after its line`,
      });
    }
    assert.ok(lineNos[0] < lineNos[1], `two different lines: ${lineNos}`);

    // Kept by the desk: a reload of the page shows them again.
    await browser.refresh();
    await browser.$('[data-testid="queue-card"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="queue-card"]').click();
    await browser.waitUntil(async () => (await browser.$$('[data-testid="comment"]')).length === 2, {
      ...WAIT,
      timeoutMsg: "both comments survive a reload",
    });
    const rendered = [];
    for (const el of await browser.$$('[data-testid="review-line"]')) rendered.push((await el.getProperty("textContent")).trim());
    assert.equal(rendered.length, 2, `the decision panel lists both: ${rendered}`);
    assert.match(rendered[0], new RegExp(`^src/apply\\.ts:${lineNos[0]}: ".*logger\\.debug.*" — use the shared logger's info level here$`));
    assert.match(rendered[1], new RegExp(`^src/apply\\.ts:${lineNos[1]}: ".*logger\\.debug.*" — and here too$`));

    // The person marks the file viewed.
    await viewedBox().then((box) => box.click());
    await waitText('[data-testid="files-viewed"]', "1/1 viewed", "the file is marked viewed");

    // The agent asks; the person answers with Request changes.
    let answer = waitingResolve(client);
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits" });
    await browser.$('[data-testid="reason-input"]').setValue("Not quite: see my comments");
    const request = await browser.$('[data-testid="request-changes-button"]');
    assert.equal((await request.getText()).trim(), "Request changes (2)");
    await browser.saveScreenshot(path.join(SHOTS, "review-comment.png"));
    await request.click();

    const result = await answer;
    assert.notEqual(result.isError, true, textOf(result));
    const text = textOf(result);
    const lines = text.split("\n");
    assert.match(lines[0], /^Decided by the person: discarded\b|^Discarded\b/, text);
    assert.ok(text.includes("Not quite: see my comments"), `the reason is in the result: ${text}`);
    const at = rendered.map((r) => lines.indexOf(r));
    assert.ok(at[0] > 0 && at[1] === at[0] + 1, `both comment lines, exactly as the window showed them, in file order: ${text}`);
    assert.equal(lines.filter((l) => l.startsWith("src/apply.ts:")).length, 2, `exactly those comments: ${text}`);
    const review = findReview(result);
    assert.ok(review, `the details carry the review: ${JSON.stringify(result)}`);
    assert.equal(review.request_changes ?? review.requestChanges, true);
    assert.deepEqual(review.comments.map((c) => [c.path, c.start_line ?? c.startLine]), [["src/apply.ts", lineNos[0]], ["src/apply.ts", lineNos[1]]]);
    assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "Request changes writes nothing");
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the preview is gone" });

    // Round 2, proposed exactly as round 1: marked so, still viewed, comments unchanged.
    const again = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(again.isError, true, textOf(again));
    await waitText('[data-testid="card-round"]', "round 2", "the card says which round it is");
    await browser.$('[data-testid="queue-card"]').click();
    const note = await browser.$('[data-testid="round-note"]');
    await note.waitForDisplayed(WAIT);
    assert.match(await note.getText(), /^Round 2 of “AST Edit: 3 replacements in 1 file”/);
    assert.match(await note.getText(), /Your 2 earlier comments are shown beside their lines: 0 on lines the agent changed, 2 on lines it did not\./);
    await browser.$('[data-testid="file-unchanged"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the file proposed as in round 1 is marked" });
    await waitText('[data-testid="files-viewed"]', "1/1 viewed", "a file proposed as before keeps its viewed mark");
    const earlier = await earlierNotes(2);
    assert.deepEqual(earlier.map((e) => e.line), lineNos.map(String), "each earlier comment after its line");
    assert.deepEqual(earlier.map((e) => e.mark), ["not changed since", "not changed since"]);
    await browser.saveScreenshot(path.join(SHOTS, "review-round-2.png"));

    answer = waitingResolve(client);
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits on round 2" });
    await browser.$('[data-testid="reason-input"]').setValue("Use info, not debug");
    await browser.$('[data-testid="request-changes-button"]').click();
    assert.match(textOf(await answer), /Use info, not debug/);
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "round 2 is gone" });

    // Round 3 changes the proposal: the viewed mark is cleared, the comments' lines changed,
    // and the file can show only what changed since round 2.
    const third = await client.callTool({ name: "ast_edit", arguments: { ...EDIT, ops: [{ pat: "console.log($$$A)", out: "logger.info($$$A)" }] } });
    assert.notEqual(third.isError, true, textOf(third));
    await waitText('[data-testid="card-round"]', "round 3", "the card says round 3");
    await browser.$('[data-testid="queue-card"]').click();
    await waitText('[data-testid="files-viewed"]', "0/1 viewed", "the changed file's viewed mark is cleared");
    assert.equal(await browser.$('[data-testid="file-unchanged"]').isExisting(), false, "the file changed");
    const moved = await earlierNotes(2);
    assert.deepEqual(moved.map((e) => e.line), lineNos.map(String));
    assert.deepEqual(moved.map((e) => e.mark), ["changed since", "changed since"], "the agent changed the lines they were on");
    assert.deepEqual(moved.map((e) => e.round), ["1", "1"], "written in round 1");
    await browser.saveScreenshot(path.join(SHOTS, "review-round-3-earlier-comments.png"));
    const since = await browser.$('[data-testid="since-round-button"]');
    await since.waitForDisplayed({ ...WAIT, timeoutMsg: "a changed file offers what changed since round 2" });
    await since.click();
    const interdiff = await browser.$('[data-testid="round-diff"]');
    await interdiff.waitForDisplayed(WAIT);
    await browser.waitUntil(
      async () => {
        const text = await interdiff.getText();
        return text.includes("logger.info") && text.includes("logger.debug") && !text.includes("console.log");
      },
      { ...WAIT, timeoutMsg: "round 2's logger.debug → round 3's logger.info, without the file's original console.log" },
    );
    await browser.waitUntil(async () => (await browser.$$('[data-testid="round-diff"] [data-testid="earlier-comment"]')).length === 2, {
      ...WAIT,
      timeoutMsg: "the interdiff shows the earlier comments on round 2's lines",
    });
    await browser.saveScreenshot(path.join(SHOTS, "review-round-3-interdiff.png"));
    await since.click();

    // The person fixes one line by hand and applies: the disk holds the edited bytes.
    answer = waitingResolve(client);
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits on round 3" });
    await browser.$('[data-testid="edit-file-button"]').click();
    const editor = await browser.$('[data-testid="editor-text"]');
    await editor.waitForDisplayed({ ...WAIT, timeoutMsg: "CodeMirror opens with round 3's proposal" });
    await editor.click();
    await browser.keys(["Control", "Home"]);
    for (const key of [...MINE, "Enter"]) await browser.keys(key);
    await browser.waitUntil(async () => (await browser.execute(() => document.querySelector(".cm-merge-b .cm-line")?.textContent ?? "")) === MINE, {
      ...WAIT,
      timeoutMsg: "the typed line is the first line of what will be written",
    });
    await browser.$('[data-testid="editor-keep"]').click();
    await browser.$('[data-testid="file-edited"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the edit is kept with the action" });
    await browser.$('[data-testid="reason-input"]').setValue("Good; one line of mine on top");
    await browser.$('[data-testid="apply-button"]').click();
    const applied = await answer;
    assert.notEqual(applied.isError, true, textOf(applied));
    assert.match(textOf(applied), /Applied with the person's edits: AST Edit: 3 replacements in 1 file\./);
    assert.ok(textOf(applied).includes(`+${MINE}\n`), textOf(applied));
    const proposal = before.replaceAll(/console\.log\(/g, "logger.info(");
    assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), `${MINE}\n${proposal}`, "the disk holds exactly the edited text");
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the review is over" });
    await browser.saveScreenshot(path.join(SHOTS, "review-applied-with-edits.png"));
  } finally {
    await client.close();
  }
});

const MINE = "// reviewed in three rounds";

/** The agent's `resolve`, waiting for the person (the SDK's time-out reset by progress). */
function waitingResolve(client) {
  return client.callTool({ name: "resolve", arguments: { action: "apply", reason: "looks right" } }, undefined, {
    timeout: 120000,
    resetTimeoutOnProgress: true,
  });
}

async function viewedBox() {
  const box = await browser.$('[data-testid="viewed-toggle"] input');
  await box.waitForDisplayed({ ...WAIT, timeoutMsg: "the diff offers a Viewed mark" });
  return box;
}

async function waitText(selector, expected, timeoutMsg) {
  await browser.waitUntil(async () => {
    const el = await browser.$(selector);
    return (await el.isExisting()) && (await el.getText()).trim() === expected;
  }, { ...WAIT, timeoutMsg });
}

/** The earlier comments shown in the diff of the whole proposal: line now, mark, round. */
async function earlierNotes(count) {
  const selector = '[data-testid="diff-view"] [data-testid="earlier-comment"]';
  await browser.waitUntil(async () => (await browser.$$(selector)).length === count, {
    ...WAIT,
    timeoutMsg: `${count} earlier comments beside their lines`,
  });
  return browser.execute((sel) =>
    [...document.querySelectorAll(sel)].map((el) => ({
      line: el.getAttribute("data-now-line"),
      round: el.getAttribute("data-round"),
      mark: el.querySelector('[data-testid="earlier-mark"]').textContent.trim(),
    })), selector);
}

/** The review in whatever part of the result carries the resolve details. */
function findReview(value) {
  if (!value || typeof value !== "object") return undefined;
  if (value.review && typeof value.review === "object" && Array.isArray(value.review.comments)) return value.review;
  for (const v of Object.values(value)) {
    const found = findReview(v);
    if (found) return found;
  }
  return undefined;
}
