#!/usr/bin/env node
// Runs a tool module: `resolve-desk-tool tool.mjs` (or `tsx run.js tool.ts`). The module's
// default export is a CustomToolFactory.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { serve } from "./index.js";

const file = process.argv[2];
if (!file) {
  console.error("usage: resolve-desk-tool <tool module (.js, .mjs, or .ts through tsx)>");
  process.exit(2);
}
const mod = await import(pathToFileURL(resolve(file)).href);
const factory = mod.default?.default ?? mod.default ?? mod.factory;
if (typeof factory !== "function") {
  console.error(`${file}: export default a CustomToolFactory (a function receiving { typebox, pushPendingAction })`);
  process.exit(2);
}
serve(factory);
