// Example conversations, each picked to exercise one part of a chat template, and the
// menu that loads them. Loading one replaces the conversation (messages, tools and the
// generation options); Undo (or Ctrl-Z in the menu) brings back what was there before.
// The menu is built from the list the page embeds (#example-data).
"use strict";

(function () {
  // The examples are the server's (app/analysis/examples.py, which the portability report
  // renders too), embedded in the page as JSON.
  const data = document.getElementById("example-data");
  const EXAMPLES = data ? JSON.parse(data.textContent) : [];

  const box = document.getElementById("examples");
  const select = document.getElementById("example-select");
  const load = document.getElementById("example-load");
  const undo = document.getElementById("example-undo");
  const status = document.getElementById("example-status");
  if (!box || !select || !load || !undo) return;
  const field = (id) => document.getElementById(id);
  const history = []; // what each load replaced, newest last

  /** The form fields an example sets, as they are now. */
  function current() {
    return {
      messages: field("messages").value,
      tools: field("tools").value,
      add_generation_prompt: field("add_generation_prompt").checked,
      continue_final_message: field("continue_final_message").value,
    };
  }

  /** Put a saved state in the form; the messages' input event redraws and re-renders. */
  function restore(state) {
    field("tools").value = state.tools;
    if (state.tools) field("tools").closest("details").open = true;
    field("add_generation_prompt").checked = state.add_generation_prompt;
    field("continue_final_message").value = state.continue_final_message;
    field("messages").value = state.messages;
    field("messages").dispatchEvent(new Event("input", { bubbles: true }));
  }

  function asState(example) {
    return {
      messages: JSON.stringify(example.messages, null, 2),
      tools: example.tools ? JSON.stringify(example.tools, null, 2) : "",
      add_generation_prompt: example.add_generation_prompt !== false,
      continue_final_message: example.continue_final_message ? "true" : "",
    };
  }

  function say(text) {
    status.textContent = text;
    undo.disabled = history.length === 0;
  }

  function undoLoad() {
    if (!history.length) return;
    restore(history.pop());
    say(history.length ? "Restored the conversation before the last example." : "Restored your conversation.");
  }

  EXAMPLES.forEach((example) => {
    const option = document.createElement("option");
    option.value = example.name;
    option.textContent = example.title;
    select.appendChild(option);
  });
  load.addEventListener("click", () => {
    const example = EXAMPLES.find((e) => e.name === select.value);
    if (!example) return;
    history.push(current());
    restore(asState(example));
    say(`Loaded “${example.title}”. Undo brings back the previous conversation.`);
  });
  undo.addEventListener("click", undoLoad);
  box.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
      event.preventDefault();
      undoLoad();
    }
  });
  box.hidden = false;
})();
