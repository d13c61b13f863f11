// The Completion box's menu: fill the completion with what this template writes for a
// final assistant message (a plain answer, reasoning then an answer, one tool call or two
// at once), computed by the server from the form as it is (POST /fragments/completion).
// A tool-call entry for a conversation without tools brings its example tools along, and
// says so. Undo brings back the text (and tools) a fill replaced; the user edits the text
// freely afterwards, and the Response view reads it.
"use strict";

(function () {
  const form = document.getElementById("state");
  const kind = document.getElementById("completion-kind");
  const fill = document.getElementById("completion-fill");
  const undo = document.getElementById("completion-undo");
  const completion = document.getElementById("completion");
  const status = document.getElementById("completion-status");
  const tools = document.getElementById("tools");
  if (!form || !kind || !fill || !undo || !completion || !status || !tools) return;
  const history = []; // what each fill replaced, newest last

  function say(text) {
    status.textContent = text;
    undo.disabled = history.length === 0;
  }

  function put(completionText, toolsText) {
    completion.value = completionText;
    tools.value = toolsText;
    if (toolsText.trim()) tools.closest("details").open = true;
    completion.dispatchEvent(new Event("input", { bubbles: true }));
  }

  async function request(chosen) {
    const body = new FormData(form);
    body.set("completion_kind", chosen);
    const response = await fetch(form.dataset.completionUrl, {
      method: "POST",
      body,
      headers: { Accept: "application/json" },
    });
    return { ok: response.ok, answer: await response.json() };
  }

  async function fillIn() {
    const label = kind.options[kind.selectedIndex].textContent;
    say("Rendering…");
    let reply;
    try {
      reply = await request(kind.value);
    } catch (error) {
      say(`The completion could not be made: ${error.message}`);
      return;
    }
    if (!reply.ok) {
      say(`This template cannot write ${label}: ${reply.answer.error.message}`);
      return;
    }
    const answer = reply.answer;
    history.push({ completion: completion.value, tools: tools.value });
    let said = `Filled with what this template writes for ${label}.`;
    let toolsText = tools.value;
    if (answer.tools && !toolsText.trim()) {
      toolsText = JSON.stringify(answer.tools, null, 2);
      said += " Its tools were added to Tools: a runtime reads tool calls only when the request offers tools.";
    }
    if (answer.notes.length) said += " " + answer.notes.join(" ");
    put(answer.completion, toolsText);
    say(said);
    completion.focus();
  }

  fill.addEventListener("click", fillIn);
  undo.addEventListener("click", () => {
    if (!history.length) return;
    const before = history.pop();
    put(before.completion, before.tools);
    say("Restored the completion before the last fill.");
  });
})();
