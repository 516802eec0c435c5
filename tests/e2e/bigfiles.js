// Workspaces at the sizes people review (shared by bigdiff.test.js and bench-review.js).
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./launch.js";

const EDIT = { tool: "ast_edit", params: { ops: [{ pat: "console.log($$$A)", out: "logger.debug($$$A)" }], lang: "ts" } };

function withScript(ws, call) {
  const script = path.join(path.dirname(ws), path.basename(ws) + ".jsonl");
  fs.writeFileSync(script, JSON.stringify(call) + "\n");
  return { ws, script };
}

/**
 * One 20,000-line TypeScript file with 5,000 console.log calls, block comments that span
 * lines (one of them holding a `console.log(` that is not code) and template literals over
 * several lines. Line 5 is inside the first block comment.
 */
export function bigFile() {
  const ws = tempDir("rd-big-file-");
  const lines = ["// A long file.", "import { logger } from './logger';", "", "/* A block comment", "   over three lines: console.log(here) is prose */"];
  let n = 0;
  while (lines.length < 19990) {
    const i = lines.length;
    if (i % 100 === 7) lines.push("const banner = `a template", "  literal over lines ${i}`;");
    else if (n < 5000 && i % 3 === 0) { lines.push(`  console.log("value", x${i});`); n++; }
    else lines.push(`  const v${i} = compute(${i}) + other.field;`);
  }
  while (lines.length < 20000) lines.push(`  const tail${lines.length} = ${lines.length};`);
  fs.writeFileSync(path.join(ws, "big.ts"), lines.join("\n") + "\n");
  fs.writeFileSync(path.join(ws, "logger.ts"), "export const logger = { debug: (..._a: unknown[]) => {} };\n");
  return { ...withScript(ws, { ...EDIT, params: { ...EDIT.params, path: "big.ts" } }), replacements: n };
}

/** 1,000 TypeScript files with 5 console.log calls each (5,000 replacements). */
export function manyFiles() {
  const ws = tempDir("rd-many-files-");
  for (let d = 0; d < 20; d++) {
    fs.mkdirSync(path.join(ws, `pkg${d}`));
    for (let f = 0; f < 50; f++) {
      let src = `import { logger } from "../logger";\n\nexport function f${f}(x: number): number {\n`;
      for (let i = 0; i < 5; i++) src += `  console.log("step ${i}", x + ${i});\n  x = x * ${i + 2} - ${f};\n`;
      src += "  return x;\n}\n";
      fs.writeFileSync(path.join(ws, `pkg${d}`, `mod${f}.ts`), src);
    }
  }
  fs.writeFileSync(path.join(ws, "logger.ts"), "export const logger = { debug: (..._a: unknown[]) => {} };\n");
  return withScript(ws, EDIT);
}
