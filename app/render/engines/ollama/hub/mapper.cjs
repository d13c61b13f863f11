"use strict";
// The Node side of the Hub's mapping: what the Hugging Face Hub serves as an Ollama model's
// TEMPLATE and params for `ollama run hf.co/USER/REPO`, by @huggingface/ollama-utils's own
// convertGGUFTemplateToOllama (the package the Hub uses), run as it is.
//
// One JSON request per line on stdin: {"chat_template", "bos_token", "eos_token",
// "max_chars"}. One JSON answer per line on stdout: {"mapped": null} when the package maps
// the template to nothing, {"mapped": {"model", "template", "params"}} when it does, or
// {"error": {"type", "message", "limit"}}. The Python side (mapper.py, through the
// transformers.js engine's sandboxed Node runner) bounds its time and memory.
const readline = require("node:readline");
const { Interpreter } = require("@huggingface/jinja");
const { convertGGUFTemplateToOllama } = require("@huggingface/ollama-utils");

// The package renders the Jinja with @huggingface/jinja (the same module instance) and
// swallows every error, so a render past the output bound must be remembered here: such a
// template is answered with the limit, not with the package's "no mapping".
let maxChars = Infinity;
let limitHit = null;
const evaluateBlock = Interpreter.prototype.evaluateBlock;
Interpreter.prototype.evaluateBlock = function (statements, environment) {
  // Once past the bound, every render stops at once: the package retries a render that
  // failed, calling itself again until the stack runs out, and each retry would
  // otherwise run up to the bound again.
  if (limitHit !== null) throw new Error(limitHit);
  const result = evaluateBlock.call(this, statements, environment);
  if (result.value.length > maxChars) {
    limitHit = `The template wrote more than ${maxChars.toLocaleString("en-US")} characters.`;
    throw new Error(limitHit);
  }
  return result;
};

function map(request) {
  maxChars = request.max_chars;
  limitHit = null;
  try {
    const entry = convertGGUFTemplateToOllama({
      chat_template: request.chat_template,
      bos_token: request.bos_token,
      eos_token: request.eos_token,
    });
    if (limitHit !== null) {
      return { error: { type: "LimitExceeded", message: limitHit, limit: "output_chars" } };
    }
    if (entry === undefined) return { mapped: null };
    return { mapped: { model: entry.model, template: entry.ollama.template, params: entry.ollama.params ?? {} } };
  } catch (error) {
    // The package throws for a template it refuses outright (OuteTTS's).
    const message = String(error && error.message !== undefined ? error.message : error);
    return { error: { type: "HubMapping", message, limit: null } };
  } finally {
    maxChars = Infinity;
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  process.stdout.write(JSON.stringify(map(JSON.parse(line))) + "\n");
});
lines.on("close", () => process.exit(0));
// Loaded and listening: the Python side starts timing requests from here.
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
