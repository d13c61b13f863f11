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
  // Only the latest Fill is applied: a double click asks twice, and the earlier answer,
  // arriving first, would otherwise be recorded as what the later one replaced.
  let latest = 0;

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
    const asked = ++latest;
    say("Rendering…");
    let reply;
    try {
      reply = await request(kind.value);
    } catch (error) {
      if (asked === latest) say(`The completion could not be made: ${error.message}`);
      return;
    }
    if (asked !== latest) return;
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
    latest += 1; // a fill still on its way would undo the Undo
    const before = history.pop();
    put(before.completion, before.tools);
    say("Restored the completion before the last fill.");
  });
})();
