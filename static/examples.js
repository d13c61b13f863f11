// Example conversations, each picked to exercise one part of a chat template, and the
// menu that loads them. Loading one replaces the conversation (messages, tools and the
// generation options); Undo (or Ctrl-Z in the menu) brings back what was there before.
// The examples live here only: the menu is built from this list.
"use strict";

(function () {
  const EXAMPLES = [
    {
      name: "plain",
      title: "Plain: one question",
      messages: [{ role: "user", content: "What is the boiling point of water at sea level?" }],
    },
    {
      name: "multi-turn",
      title: "System prompt and several turns",
      messages: [
        { role: "system", content: "You are a concise assistant for a hardware store." },
        { role: "user", content: "Do you sell cordless drills?" },
        { role: "assistant", content: "Yes: we carry 12 V and 18 V models from three brands." },
        { role: "user", content: "Which one is lighter?" },
        { role: "assistant", content: "The 12 V model, about 1.1 kg with its battery." },
        { role: "user", content: "Does its battery fit your 18 V saw?" },
      ],
    },
    {
      name: "parallel-tools",
      title: "Tools: two calls at once, and their results",
      tools: [
        tool("get_weather", "The current weather in a city.", {
          city: { type: "string", description: "The city, e.g. Lisbon" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        }, ["city"]),
        tool("get_local_time", "The local time in a city.", {
          city: { type: "string", description: "The city, e.g. Lisbon" },
        }, ["city"]),
      ],
      messages: [
        { role: "user", content: "What's the weather and the local time in Lisbon?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            call("call_1", "get_weather", { city: "Lisbon", unit: "celsius" }),
            call("call_2", "get_local_time", { city: "Lisbon" }),
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temperature": 21, "sky": "clear"}' },
        { role: "tool", tool_call_id: "call_2", content: '{"time": "14:05"}' },
        { role: "assistant", content: "It is 21 °C and clear in Lisbon, and 14:05 there." },
        { role: "user", content: "And in Oslo?" },
      ],
    },
    {
      name: "reasoning",
      title: "Reasoning in earlier turns",
      messages: [
        { role: "user", content: "Is 221 a prime number?" },
        {
          role: "assistant",
          reasoning_content: "221 = 13 × 17, so it has divisors other than 1 and itself.",
          content: "No: 221 = 13 × 17.",
        },
        { role: "user", content: "And 223?" },
        {
          role: "assistant",
          reasoning_content: "√223 < 15, and 223 is not divisible by 2, 3, 5, 7, 11 or 13.",
          content: "Yes, 223 is prime.",
        },
        { role: "user", content: "What about 227?" },
      ],
    },
    {
      name: "continue",
      title: "Continue the final message (prefill)",
      add_generation_prompt: false,
      continue_final_message: "true",
      messages: [
        { role: "user", content: "Write a haiku about autumn rain." },
        { role: "assistant", content: "Cold rain on the roof," },
      ],
    },
  ];

  function tool(name, description, properties, required) {
    return { type: "function", function: { name, description, parameters: { type: "object", properties, required } } };
  }

  function call(id, name, args) {
    return { id, type: "function", function: { name, arguments: args } };
  }

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
      continue_final_message: example.continue_final_message || "",
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
