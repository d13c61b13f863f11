// The output views' own behaviour, beside playground.js: copy buttons on commands, the
// last good output of every view kept (dimmed, marked stale) while the template has an error, and the
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

  // --- The last good output, kept in every view while the template has an error ---
  // Only answers newer than the shown one are swapped in (playground.js drops the rest),
  // so the output seen last is the newest good one, whatever order answers arrive in.
  let kept = {}; // per view: the element holding that view's last good output
  let seen = null; // the #output element handled last

  /** Ids made unique, so the stale copy is never read as the current output. */
  function renameIds(root) {
    root.querySelectorAll("[id]").forEach((element) => {
      if (!element.id.startsWith("stale-")) element.id = "stale-" + element.id;
    });
  }

  /** Move the view's kept output into `view`, dimmed under a note saying it is stale;
   * what the error output put there ("No prompt to tokenize", ...) is hidden, but for
   * its warnings (what the engine does instead of this template holds for the failed
   * render too), which the stale copy then leaves out, and its quiet facts. */
  function showStale(view, from) {
    const content = document.createElement("div");
    content.className = "stale-content";
    content.append(...Array.from(from.childNodes));
    content.querySelectorAll(".caveats").forEach((list) => list.remove());
    content.querySelectorAll(".warnings").forEach((box) => {
      if (!box.querySelector("li")) box.remove();
    });
    renameIds(content);
    const note = document.createElement("p");
    note.className = "notice stale-note";
    // The Prompt view's note keeps the id the page had before every view kept its output.
    note.id = view.dataset.view === "prompt" ? "stale-note" : "stale-note-" + view.dataset.view;
    note.textContent = "The last output that rendered, before this error (stale):";
    const stale = document.createElement("div");
    stale.className = "stale";
    stale.append(note, content);
    Array.from(view.children).forEach((child) => {
      child.hidden = !child.classList.contains("warnings") && !child.classList.contains("facts");
    });
    view.append(stale);
    return content;
  }

  function keepLastGoodOutput() {
    const output = $("#output");
    if (!output || output === seen) return;
    seen = output;
    const views = Array.from(output.querySelectorAll(":scope > section.view[data-view]"));
    if ($("#prompt-raw", output)) {
      // A good output: remember its views (their nodes move only if an error follows).
      kept = Object.fromEntries(views.map((view) => [view.dataset.view, view]));
      return;
    }
    if (!$("#problem", output)) return;
    views.forEach((view) => {
      // A view made from the template alone, not from the failed render (the command
      // lines, which also say when a program would not load the template), is current.
      if (view.hasAttribute("data-current-on-error")) return;
      const from = kept[view.dataset.view];
      if (from && from.childNodes.length) kept[view.dataset.view] = showStale(view, from);
    });
  }

  document.body.addEventListener("htmx:afterSwap", keepLastGoodOutput);
  keepLastGoodOutput();
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

// --- The Response view's parser menus: one line saying what was chosen ---
(function () {
  const menus = document.getElementById("parser-menus");
  const summary = document.getElementById("parser-summary");
  if (!menus || !summary) return;
  /** "as each engine picks", or the choices that differ from it, by engine and flag. */
  function summarize() {
    const chosen = Array.from(menus.querySelectorAll("select"))
      .filter((select) => select.value)
      .map((select) => select.dataset.names + " " + select.value);
    summary.textContent = chosen.length
      ? chosen.join(", ") + "; the rest as each engine picks"
      : "as each engine picks for this template";
  }
  menus.addEventListener("change", summarize);
  // A saved state put back (persist.js) fires no change event: summarize after each render.
  document.body.addEventListener("htmx:afterSwap", summarize);
  summarize();
})();
