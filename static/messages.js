// The structured message editor, kept in sync with the raw JSON text area (`#messages`),
// which stays the form field the server reads. Fields the editor does not know (content
// blocks, names, ...) are kept as they are.
"use strict";

(function () {
  const raw = document.getElementById("messages");
  const editor = document.getElementById("message-editor");
  if (!raw || !editor) return;
  const ROLES = ["system", "developer", "user", "assistant", "tool"];
  let messages = [];
  let publishing = false;

  function element(tag, attributes = {}, text = null) {
    const node = document.createElement(tag);
    Object.entries(attributes).forEach(([key, value]) => node.setAttribute(key, value));
    if (text !== null) node.textContent = text;
    return node;
  }

  /** Write the messages to the raw JSON field and let the form re-render. */
  function publish() {
    raw.value = JSON.stringify(messages, null, 2);
    publishing = true; // our own edit: do not redraw the editor being typed in
    raw.dispatchEvent(new Event("input", { bubbles: true }));
    publishing = false;
  }

  function input(labelText, value, onChange, multiline = false) {
    const label = element("label", { class: "field" }, labelText);
    const field = multiline ? element("textarea", { rows: "2", spellcheck: "false" }) : element("input");
    field.value = value;
    field.addEventListener("input", (event) => {
      event.stopPropagation(); // the JSON field's own event triggers the render
      onChange(field.value);
      publish();
    });
    label.appendChild(field);
    return label;
  }

  /** A field that may be absent: empty text removes the key. */
  function optional(message, key) {
    return (text) => {
      if (text === "") delete message[key];
      else message[key] = text;
    };
  }

  function contentField(message) {
    if (Array.isArray(message.content)) {
      return input("content (blocks, JSON)", JSON.stringify(message.content), (text) => {
        try { message.content = JSON.parse(text); } catch (error) { /* keep the last valid */ }
      }, true);
    }
    return input("content", message.content == null ? "" : String(message.content),
      (text) => { message.content = text; }, true);
  }

  function toolCallsField(message) {
    const box = element("div", { class: "tool-calls" });
    (message.tool_calls || []).forEach((call, index) => {
      const fn = call.function || (call.function = {});
      const row = element("div", { class: "tool-call" });
      row.appendChild(input("tool call name", fn.name || "", (text) => { fn.name = text; }));
      const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments || {});
      row.appendChild(input("arguments (JSON)", args, (text) => {
        try { fn.arguments = JSON.parse(text); } catch (error) { fn.arguments = text; }
      }));
      row.appendChild(input("id", call.id || "", optional(call, "id")));
      row.appendChild(button("Remove call", () => { message.tool_calls.splice(index, 1); }));
      box.appendChild(row);
    });
    box.appendChild(button("Add tool call", () => {
      message.tool_calls = message.tool_calls || [];
      message.tool_calls.push({ type: "function", function: { name: "", arguments: {} } });
    }));
    return box;
  }

  function button(text, action) {
    const node = element("button", { type: "button", class: "button small" }, text);
    node.addEventListener("click", () => { action(); draw(); publish(); });
    return node;
  }

  function roleSelect(message) {
    const select = element("select", { "aria-label": "role" });
    const roles = ROLES.includes(message.role) ? ROLES : ROLES.concat([message.role]);
    roles.forEach((role) => {
      const option = element("option", { value: role }, role);
      option.selected = role === message.role;
      select.appendChild(option);
    });
    select.addEventListener("change", (event) => {
      event.stopPropagation();
      message.role = select.value;
      draw();
      publish();
    });
    return select;
  }

  function card(message, index) {
    const node = element("div", { class: "message role-" + message.role });
    const head = element("div", { class: "message-head" });
    head.appendChild(roleSelect(message));
    head.appendChild(button("↑", () => move(index, -1)));
    head.appendChild(button("↓", () => move(index, 1)));
    head.appendChild(button("Remove", () => messages.splice(index, 1)));
    node.appendChild(head);
    node.appendChild(contentField(message));
    if (message.role === "assistant") {
      node.appendChild(input("reasoning_content", message.reasoning_content || "",
        optional(message, "reasoning_content"), true));
      node.appendChild(toolCallsField(message));
    }
    if (message.role === "tool") {
      node.appendChild(input("tool_call_id", message.tool_call_id || "", optional(message, "tool_call_id")));
    }
    return node;
  }

  function move(index, step) {
    const target = index + step;
    if (target < 0 || target >= messages.length) return;
    [messages[index], messages[target]] = [messages[target], messages[index]];
  }

  function draw() {
    editor.replaceChildren(...messages.map(card));
  }

  /** Read the raw field; an OpenAI request body also fills tools and kwargs. */
  function readRaw() {
    if (publishing) return;
    let value;
    try { value = JSON.parse(raw.value || "[]"); } catch (error) { return; }
    if (value && !Array.isArray(value) && Array.isArray(value.messages)) {
      const fill = (id, data) => {
        if (data === undefined) return;
        document.getElementById(id).value = JSON.stringify(data, null, 2);
      };
      fill("tools", value.tools);
      fill("kwargs", value.chat_template_kwargs);
      value = value.messages;
      raw.value = JSON.stringify(value, null, 2);
    }
    if (!Array.isArray(value) || !value.every((m) => m && typeof m === "object")) return;
    messages = value;
    draw();
  }

  raw.addEventListener("input", readRaw);
  document.getElementById("add-message").addEventListener("click", () => {
    const last = messages[messages.length - 1];
    messages.push({ role: last && last.role === "user" ? "assistant" : "user", content: "" });
    draw();
    publish();
  });
  document.getElementById("toggle-raw").addEventListener("click", () => {
    const box = document.getElementById("raw-messages");
    box.hidden = !box.hidden;
  });

  editor.hidden = false;
  document.getElementById("message-actions").hidden = false;
  document.getElementById("raw-messages").hidden = true;
  readRaw();
})();
