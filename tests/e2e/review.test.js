// End to end: a review the agent can act on. An MCP client (the official TypeScript SDK through
// the real `rdesk mcp`) pushes a preview and waits on `resolve`; in the real window the person
// comments on a line of the diff, the comment survives a reload of the page (it is kept by the
// desk, not the page), then "Request changes" discards the preview and the agent's one
// `resolve` result carries the decision line, the reason and the comment, quoted, in the
// documented `path:line: "quoted line" — comment` form, with the same as data in the details;
// the agent's next preview is round 2, its unchanged file marked; asked again, its changed
// round 3 shows only what changed since round 2.
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

test("a line comment and Request changes reach the waiting agent in one resolve result", async () => {
  const client = await mcpAgent("e2e-reviewer", ws);
  try {
    const before = fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8");
    const preview = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(preview.isError, true, textOf(preview));
    const card = await browser.$('[data-testid="queue-card"]');
    await card.waitForDisplayed(WAIT);
    await card.click();

    // The first added line of the diff: its new-side line number starts a comment.
    const line = await browser.$('[role="row"][data-kind="added"] [data-testid="comment-line"][data-side="new"]');
    await line.waitForDisplayed({ ...WAIT, timeoutMsg: "the diff's added lines can be commented on" });
    const lineNo = Number(await line.getAttribute("data-line"));
    await line.click();
    const input = await browser.$('[data-testid="comment-input"]');
    await input.waitForDisplayed(WAIT);
    await input.setValue("use the shared logger's info level here");
    await browser.$('[data-testid="comment-save"]').click();
    const comment = await browser.$('[data-testid="comment"]');
    await comment.waitForDisplayed({ ...WAIT, timeoutMsg: "the saved comment shows after its line" });
    assert.equal(await comment.getAttribute("data-start"), String(lineNo));

    // Kept by the desk: a reload of the page shows it again.
    await browser.refresh();
    await browser.$('[data-testid="queue-card"]').waitForDisplayed(WAIT);
    await browser.$('[data-testid="queue-card"]').click();
    await browser.$('[data-testid="comment"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the comment survives a reload" });
    const summary = await browser.$('[data-testid="review-line"]');
    await summary.waitForDisplayed(WAIT);
    const rendered = (await summary.getProperty("textContent")).trim();
    assert.match(rendered, new RegExp(`^src/apply\\.ts:${lineNo}: ".*logger\\.debug.*" — use the shared logger's info level here$`));

    // The agent asks; the person answers with Request changes.
    const answer = client.callTool({ name: "resolve", arguments: { action: "apply", reason: "looks right" } }, undefined, {
      timeout: 120000,
      resetTimeoutOnProgress: true,
    });
    await browser.$('[data-testid="proposal-waiting"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the agent waits" });
    await browser.$('[data-testid="reason-input"]').setValue("Not quite: see my comment");
    const request = await browser.$('[data-testid="request-changes-button"]');
    assert.equal((await request.getText()).trim(), "Request changes (1)");
    await browser.saveScreenshot(path.join(SHOTS, "review-comment.png"));
    await request.click();

    const result = await answer;
    assert.notEqual(result.isError, true, textOf(result));
    const text = textOf(result);
    const lines = text.split("\n");
    assert.match(lines[0], /^Decided by the person: discarded\b|^Discarded\b/, text);
    assert.ok(text.includes("Not quite: see my comment"), `the reason is in the result: ${text}`);
    assert.ok(lines.includes(rendered), `the comment line, exactly as the window showed it, is in the result: ${text}`);
    const review = result.structuredContent?.review ?? result._meta?.details?.review ?? findReview(result);
    assert.ok(review, `the details carry the review: ${JSON.stringify(result)}`);
    assert.equal(review.request_changes ?? review.requestChanges, true);
    assert.equal(review.comments.length, 1);
    assert.equal(review.comments[0].path, "src/apply.ts");
    assert.equal(review.comments[0].start_line ?? review.comments[0].startLine, lineNo);
    assert.equal(fs.readFileSync(path.join(ws, "src/apply.ts"), "utf8"), before, "Request changes writes nothing");
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the preview is gone" });

    // The agent answers with a new preview: round 2 of the review, its file proposed exactly
    // as in round 1 (the agent changed nothing there), so it is marked as nothing new to read.
    const again = await client.callTool({ name: "ast_edit", arguments: EDIT });
    assert.notEqual(again.isError, true, textOf(again));
    const round = await browser.$('[data-testid="card-round"]');
    await round.waitForDisplayed({ ...WAIT, timeoutMsg: "the card says which round it is" });
    assert.equal((await round.getText()).trim(), "round 2");
    await browser.$('[data-testid="queue-card"]').click();
    const note = await browser.$('[data-testid="round-note"]');
    await note.waitForDisplayed(WAIT);
    assert.match(await note.getText(), /^Round 2 of “AST Edit: 3 replacements in 1 file”/);
    await browser.$('[data-testid="file-unchanged"]').waitForDisplayed({ ...WAIT, timeoutMsg: "the file proposed as in round 1 is marked" });
    await browser.saveScreenshot(path.join(SHOTS, "review-round-2.png"));

    // Changes requested again; the agent now changes its proposal: round 3, and the file shows
    // only what changed since round 2.
    await browser.$('[data-testid="reason-input"]').setValue("Use info, not debug");
    await browser.$('[data-testid="request-changes-button"]').click();
    await browser.$('[data-testid="queue-empty"]').waitForDisplayed({ ...WAIT, timeoutMsg: "round 2 is gone" });
    const third = await client.callTool({ name: "ast_edit", arguments: { ...EDIT, ops: [{ pat: "console.log($$$A)", out: "logger.info($$$A)" }] } });
    assert.notEqual(third.isError, true, textOf(third));
    await browser.waitUntil(async () => (await browser.$('[data-testid="card-round"]').getText()).trim() === "round 3", {
      ...WAIT,
      timeoutMsg: "the card says round 3",
    });
    await browser.$('[data-testid="queue-card"]').click();
    const since = await browser.$('[data-testid="since-round-button"]');
    await since.waitForDisplayed({ ...WAIT, timeoutMsg: "a changed file offers what changed since round 2" });
    assert.equal(await browser.$('[data-testid="file-unchanged"]').isExisting(), false, "the file changed");
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
    await browser.saveScreenshot(path.join(SHOTS, "review-round-3-interdiff.png"));
  } finally {
    await client.close();
  }
});

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
