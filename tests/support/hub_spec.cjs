"use strict";
// Runs @huggingface/ollama-utils's own spec (src/chat-template.spec.ts, shipped in the
// package) as data: esbuild bundles it with `vitest` replaced by a small recorder and its
// `./chat-template` by a function the caller chooses, then every case runs.
//
//   node hub_spec.cjs SPEC             -> the cases run against the package itself, with the
//                                         inputs each one passed: [{name, inputs, failure}]
//   node hub_spec.cjs SPEC ANSWERS     -> the same cases run against ANSWERS (a JSON file
//                                         mapping each input, as [chat_template, bos, eos],
//                                         to what the engine reported for it)
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const util = require("node:util");
const esbuild = require("esbuild");
const { convertGGUFTemplateToOllama: real } = require("@huggingface/ollama-utils");

const [spec, answersFile] = process.argv.slice(2);
const answers = answersFile ? JSON.parse(fs.readFileSync(answersFile, "utf8")) : null;
const tests = [];
let inputs = [];

function key(gguf) {
  return JSON.stringify([gguf.chat_template, gguf.bos_token ?? null, gguf.eos_token ?? null]);
}

// The engine's answer in the package's shape. `tokens` (the table entry's token list, which
// the engine does not report) is the package's own.
function fromEngine(gguf) {
  const reported = answers[key(gguf)];
  if (reported === undefined) throw new Error(`no engine answer for ${key(gguf).slice(0, 80)}`);
  if (reported === null) return undefined;
  const params = { ...reported.params };
  if (reported.stop.length) params.stop = reported.stop;
  const own = real(gguf);
  return {
    model: reported.model,
    gguf: gguf.chat_template,
    ollama: { template: reported.template, tokens: own ? own.ollama.tokens : [], params },
  };
}

globalThis.__hubSpec = {
  convert(gguf) {
    inputs.push({ chat_template: gguf.chat_template, bos_token: gguf.bos_token ?? null, eos_token: gguf.eos_token ?? null });
    return answers ? fromEngine(gguf) : real(gguf);
  },
  it(name, fn) {
    tests.push({ name, fn });
  },
  expect(actual) {
    const fail = (what, expected) => {
      throw new Error(`expected ${what} ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    };
    return {
      toEqual(expected) {
        if (!util.isDeepStrictEqual(actual, expected)) fail("", expected);
      },
      toContain(expected) {
        if (!actual || !actual.includes(expected)) fail("to contain", expected);
      },
    };
  },
};

const VITEST = `
const s = globalThis.__hubSpec;
function it(name, fn) { s.it(name, fn); }
it.each = (cases) => (name, fn) => cases.forEach((c, i) => s.it(name.replace("$desc", c.desc || String(i)), () => fn(c)));
module.exports = { describe: (name, fn) => fn(), it, expect: s.expect };
`;
const CONVERT = "module.exports = { convertGGUFTemplateToOllama: (g, o) => globalThis.__hubSpec.convert(g, o) };";

const replaced = {
  name: "replaced",
  setup(build) {
    build.onResolve({ filter: /^(vitest|\.\/chat-template)$/ }, (args) => ({ path: args.path, namespace: "replaced" }));
    build.onLoad({ filter: /.*/, namespace: "replaced" }, (args) => ({
      contents: args.path === "vitest" ? VITEST : CONVERT,
      loader: "js",
    }));
  },
};

async function main() {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "hub-spec-")), "spec.cjs");
  await esbuild.build({ entryPoints: [spec], bundle: true, platform: "node", format: "cjs", outfile: out, plugins: [replaced], logLevel: "silent" });
  require(out);
  const results = [];
  for (const test of tests) {
    inputs = [];
    let failure = null;
    try {
      await test.fn();
    } catch (error) {
      failure = String(error.message);
    }
    results.push({ name: test.name, inputs, failure });
  }
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  process.stdout.write(JSON.stringify(results));
}

main().catch((error) => {
  process.stderr.write(String(error.stack || error));
  process.exit(2);
});
