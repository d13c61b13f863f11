"use strict";
// The reference for the transformers.js engine: @huggingface/jinja called directly, with the
// variables transformers.js's PreTrainedTokenizer.apply_chat_template passes, written here
// from its source independently of the engine's runner.
//
// Reads a JSON list of cases from the file named by argv[2]: {template, messages, tools,
// documents, add_generation_prompt, continue_final_message, special_tokens, kwargs, now}.
// Writes a JSON list of {"prompt"} or {"error": {"type", "message"}} to stdout.
const fs = require("node:fs");
const { Template } = require("@huggingface/jinja");

// transformers.js's SPECIAL_TOKEN_ATTRIBUTES.
const SPECIAL = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

const compiled = new Map();

// apply_chat_template(conversation, {tokenize: false, ...options}): it destructures its own
// options and spreads the rest into the template's variables after the special tokens.
function applyChatTemplate(template, conversation, config, options) {
  const {
    tools = null, documents = null, chat_template = null, add_generation_prompt = false,
    tokenize = true, padding = false, truncation = false, max_length = null,
    return_tensor = true, return_dict = true, tokenizer_kwargs = {}, ...kwargs
  } = options;
  const special = Object.create(null);
  for (const key of SPECIAL) {
    if (config[key]) special[key] = config[key];
  }
  // transformers.js compiles each template once (its _compiled_template_cache).
  if (!compiled.has(template)) compiled.set(template, new Template(template));
  return compiled.get(template).render({
    messages: conversation, add_generation_prompt, tools, documents, ...special, ...kwargs,
  });
}

// Pin `new Date()` (what strftime_now reads) to the case's local time fields.
const RealDate = Date;
function pinClock(fields) {
  const millis = new RealDate(fields[0], fields[1] - 1, ...fields.slice(2)).getTime();
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(millis);
      else super(...args);
    }
  };
}

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const results = cases.map((c) => {
  globalThis.Date = RealDate;
  if (c.now) pinClock(c.now);
  const options = { ...c.kwargs, tokenize: false };
  // The request's own fields, as a caller of transformers.js passes them.
  options.tools = c.tools;
  options.documents = c.documents;
  options.add_generation_prompt = c.add_generation_prompt;
  if (c.continue_final_message) options.continue_final_message = c.continue_final_message;
  try {
    return { prompt: applyChatTemplate(c.template, c.messages, c.special_tokens, options) };
  } catch (error) {
    return { error: { type: error.constructor.name, message: String(error.message) } };
  }
});
process.stdout.write(JSON.stringify(results));
