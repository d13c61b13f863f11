// The output views' own behaviour, beside playground.js: copy buttons on commands, the
// last good prompt kept (dimmed, marked stale) while the template has an error, and the
// Diff layout toggle. Everything is delegated to `document`, so it survives htmx swaps.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);

  // --- Copy buttons: each copies the command right after its heading ---
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (error) {
      // No clipboard API (an http page on another host): copy through a selection.
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "offscreen";
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
  }

  document.addEventListener("click", async (event) => {
    const button = event.target.closest(".copy-command");
    if (!button) return;
    const pre = button.closest(".command-head").nextElementSibling;
    await copyText(pre.textContent);
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1200);
  });

  // --- The last good prompt, kept while the template has an error ---
  // Only answers newer than the shown one are swapped in (playground.js drops the rest),
  // so the prompt seen last is the newest good one, whatever order answers arrive in.
  let lastGood = null; // the nodes of the last prompt view that had a prompt
  let seen = null; // the #output element handled last

  /** Ids made unique, so the stale copy is never read as the current prompt. */
  function renameIds(root) {
    root.querySelectorAll("[id]").forEach((element) => {
      if (!element.id.startsWith("stale-")) element.id = "stale-" + element.id;
    });
  }

  function keepLastGoodPrompt() {
    const output = $("#output");
    if (!output || output === seen) return;
    seen = output;
    const view = $("#view-prompt", output);
    if (!view) return;
    if ($("#prompt-raw", view)) {
      lastGood = view; // a good prompt: remember it (its nodes move only if an error follows)
      return;
    }
    if (!lastGood || !$("#problem", output)) return;
    const content = document.createElement("div");
    content.append(...Array.from(lastGood.childNodes));
    renameIds(content);
    const stale = document.createElement("div");
    stale.className = "stale";
    const note = document.createElement("p");
    note.className = "notice";
    note.id = "stale-note";
    note.textContent = "The last prompt that rendered, before this error (stale):";
    stale.append(note, content);
    const empty = $("#no-prompt", view);
    if (empty) empty.hidden = true;
    view.append(stale);
    lastGood = content;
  }

  document.body.addEventListener("htmx:afterSwap", keepLastGoodPrompt);
  keepLastGoodPrompt();
})();

// --- The Diff view: one layout at a time (unified, side by side, by tokens) ---
(function () {
  const picked = () => {
    const checked = document.querySelector('#diff-layouts input:checked');
    return checked ? checked.value : "unified";
  };
  function showLayout() {
    const view = document.getElementById("view-diff");
    if (!view) return;
    const layouts = Array.from(view.querySelectorAll(".diff-layout")).map((e) => e.dataset.layout);
    // "by tokens" needs a vocabulary: without one, the unified lines show.
    view.dataset.layout = layouts.includes(picked()) ? picked() : "unified";
  }
  // On the fieldset itself: it is `.local`, so its changes never bubble past it.
  const picker = document.getElementById("diff-layouts");
  if (picker) picker.addEventListener("change", showLayout);
  document.body.addEventListener("htmx:afterSwap", showLayout);
  showLayout();
})();
