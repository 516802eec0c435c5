// The renderer the app picks for WebKit (src-tauri/src/renderer.rs), on the real binary under Xvfb
// without WebDriver (as a person starts it): the app's start-up profile (RESOLVE_DESK_STARTUP_MARK,
// written once the page has painted the queue) records the WEBKIT_DISABLE_DMABUF_RENDERER the
// process ran with. Without a GPU render node the DMA-BUF renderer is turned off; with one, or when
// the person set the variable, or under WebDriver, WebKit's choice is left alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { appBinary, hasGpuRenderNode, tempDir, until } from "./launch.js";

const hasRenderNode = hasGpuRenderNode();

/** Starts the app on its demo with `env` added, waits for its profile, stops it; returns the profile. */
async function profileWith(env) {
  const home = tempDir("rd-e2e-renderer-");
  const mark = path.join(home, "startup.json");
  const base = { ...process.env };
  delete base.WEBKIT_DISABLE_DMABUF_RENDERER;
  delete base.TAURI_WEBVIEW_AUTOMATION;
  const app = spawn(appBinary(), ["--data-dir", path.join(home, "data")], {
    env: {
      ...base,
      XDG_CONFIG_HOME: path.join(home, "config"),
      XDG_DATA_HOME: path.join(home, "data-home"),
      XDG_CACHE_HOME: path.join(home, "cache"),
      RESOLVE_DESK_STARTUP_MARK: mark,
      ...env,
    },
    stdio: "ignore",
  });
  try {
    await until(() => fs.existsSync(mark) && fs.statSync(mark).size > 0, "the app's start-up profile (the queue painted)", 90000);
    return JSON.parse(fs.readFileSync(mark, "utf8"));
  } finally {
    app.kill("SIGKILL");
  }
}

test("started by a person, the app picks WebKit's renderer by the machine's GPU, and paints", async () => {
  const profile = await profileWith({});
  assert.ok(profile.page_ms_since_main.painted > 0, `the page reported the queue painted: ${JSON.stringify(profile)}`);
  assert.equal(profile.webkit_disable_dmabuf_renderer, hasRenderNode ? null : "1",
    hasRenderNode ? "with a GPU render node WebKit keeps its default" : "without a GPU render node the DMA-BUF renderer is off");
});

test("a renderer the person chose is kept", async () => {
  const profile = await profileWith({ WEBKIT_DISABLE_DMABUF_RENDERER: "0" });
  assert.equal(profile.webkit_disable_dmabuf_renderer, "0");
});

test("under WebDriver WebKit keeps its default renderer (its screenshots wait for a rendering update otherwise)", async () => {
  const profile = await profileWith({ TAURI_WEBVIEW_AUTOMATION: "true" });
  assert.equal(profile.webkit_disable_dmabuf_renderer, null);
});
