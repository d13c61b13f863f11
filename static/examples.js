// Example conversations, each picked to exercise one part of a chat template, and the
// menu that loads them. Loading one replaces the conversation (messages, tools and the
// generation options), as an action Undo (or Ctrl-Z in the menu) and Back take back
// (undo.js). The menu is built from the list the page embeds (#example-data).
"use strict";

(function () {
  // The examples are the server's (app/analysis/examples.py, which the portability report
  // renders too), embedded in the page as JSON.
  const data = document.getElementById("example-data");
  const EXAMPLES = data ? JSON.parse(data.textContent) : [];

  const box = document.getElementById("examples");
  const select = document.getElementById("example-select");
  const load = document.getElementById("example-load");
  if (!box || !select || !load) return;
  const field = (id) => document.getElementById(id);

  /** Put an example in the form; the messages' input event redraws and re-renders. */
  function put(example) {
    const tools = example.tools ? JSON.stringify(example.tools, null, 2) : "";
    field("tools").value = tools;
    if (tools) field("tools").closest("details").open = true;
    field("add_generation_prompt").checked = example.add_generation_prompt !== false;
    field("continue_final_message").value = example.continue_final_message ? "true" : "";
    field("messages").value = JSON.stringify(example.messages, null, 2);
    field("messages").dispatchEvent(new Event("input", { bubbles: true }));
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
    const action = {
      label: `The example “${example.title}” replaced the conversation.`,
      names: ["messages", "tools", "add_generation_prompt", "continue_final_message"],
      anchor: "examples",
      focus: "example-select",
    };
    window.playground.replacing(action, () => put(example));
  });
  box.hidden = false;
})();
