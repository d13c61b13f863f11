"use strict";
// The Node side of the transformers.js engine: renders chat templates with @huggingface/jinja,
// the library transformers.js's apply_chat_template compiles them with.
//
// One JSON request per line on stdin: {"template", "context", "max_chars", "now"}, where
// `context` holds the template variables exactly as apply_chat_template passes them (the
// Python side builds it) and `now` the local clock fields [y, m, d, H, M, S, ms] that
// `strftime_now` reads. One JSON answer per line on stdout: {"prompt"} or
// {"error": {"type", "message", "limit"}}. The process serves requests until stdin closes;
// the Python side bounds its time and memory and replaces it when it runs out.
const readline = require("node:readline");
const v8 = require("node:v8");
const { Template, Interpreter } = require("@huggingface/jinja");

// Compiled templates by source, as transformers.js caches them per tokenizer; a few suffice
// (a page renders one template many times), and a bound keeps memory flat.
const COMPILED_CACHE_SIZE = 8;
const compiled = new Map();

class OutputLimit extends Error {}

// @huggingface/jinja builds each block's text in memory and has no output bound: check every
// block as it completes, so a template that writes too much stops at the first block past
// the limit. Renders within the limit are untouched.
let maxChars = Infinity;
const evaluateBlock = Interpreter.prototype.evaluateBlock;
Interpreter.prototype.evaluateBlock = function (statements, environment) {
  const result = evaluateBlock.call(this, statements, environment);
  if (result.value.length > maxChars) {
    throw new OutputLimit(`The template wrote more than ${maxChars.toLocaleString("en-US")} characters.`);
  }
  return result;
};

// strftime_now reads `new Date()`: during a render it gives the pinned local time instead.
const RealDate = Date;
let pinnedMillis = null;
class PinnedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0 && pinnedMillis !== null) super(pinnedMillis);
    else super(...args);
  }
  static now() {
    return pinnedMillis === null ? RealDate.now() : pinnedMillis;
  }
}
globalThis.Date = PinnedDate;

function compile(source) {
  let template = compiled.get(source);
  if (template === undefined) {
    template = new Template(source);
    if (compiled.size >= COMPILED_CACHE_SIZE) compiled.delete(compiled.keys().next().value);
    compiled.set(source, template);
  }
  return template;
}

// What went wrong, named like the Python engines name it: JavaScript's own overflow errors
// are the limits they stand for.
function problem(error) {
  if (error instanceof OutputLimit) {
    return { type: "LimitExceeded", message: error.message, limit: "output_chars" };
  }
  const message = String(error && error.message !== undefined ? error.message : error);
  if (error instanceof RangeError && /call stack/i.test(message)) {
    return { type: "LimitExceeded", message: "The template nests or recurses too deeply to render.", limit: "recursion" };
  }
  if (error instanceof RangeError && /Invalid (string|array) length/i.test(message)) {
    return { type: "LimitExceeded", message: `The template built a text or list too long to hold (${message}).`, limit: "memory" };
  }
  const type = error && error.constructor && error.constructor.name ? error.constructor.name : "Error";
  return { type, message, limit: null };
}

function render(request) {
  maxChars = request.max_chars;
  pinnedMillis = request.now ? new RealDate(...request.now.map((n, i) => (i === 1 ? n - 1 : n))).getTime() : null;
  try {
    return { prompt: compile(request.template).render(request.context) };
  } catch (error) {
    return { error: problem(error) };
  } finally {
    maxChars = Infinity;
    pinnedMillis = null;
    // A render that nearly filled the heap leaves its garbage behind, and V8 counts what
    // was live when a collection starts: the next render, however small, could die of the
    // last one's text. Collecting here gives every render the whole allowance (node runs
    // with --expose-gc); below a quarter of the heap, V8's own pace is cheaper.
    const heap = v8.getHeapStatistics();
    if (heap.used_heap_size > heap.heap_size_limit / 4) global.gc();
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  process.stdout.write(JSON.stringify(render(JSON.parse(line))) + "\n");
});
lines.on("close", () => process.exit(0));
// Loaded and listening: the Python side starts timing renders from here.
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
