// The template library's two menus: Library, which loads a template into the editor, and
// the Diff view's "Compare with", which loads one as the second template. Each loads only
// a confirmed choice (choice.js: keys on the closed menu only pick; Enter, a Load button
// or a click in the list load), as an action Undo and Back take back (undo.js).
//
// The hidden `library` field, not the menu, is the state: it names the entry loaded, and
// the page says so above the editor. Without scripts the Load button posts the form,
// which reads the menu's choice.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const playground = window.playground;
  const select = $("library-select");
  const field = $("library");
  if (!playground || !select || !field) return;

  async function libraryTemplate(name) {
    const response = await fetch("/api/library/" + encodeURIComponent(name));
    if (!response.ok) throw new Error(`the library template ${name} could not be read`);
    return response.json();
  }

  /** Load the template chosen in `menu`; `replace(entry, title)` puts it in the page. */
  async function loadChosen(menu, choice, replace) {
    const title = menu.selectedOptions[0].textContent;
    try {
      replace(await libraryTemplate(menu.value), title);
    } catch (error) {
      choice.say(`Could not load “${title}”: ${error.message}.`);
    }
  }

  // --- Library: the editor's template ---
  select.removeAttribute("name"); // a pick is not the state until it is loaded
  ["input", "change"].forEach((type) => select.addEventListener(type, (e) => e.stopPropagation()));
  const load = $("library-load");
  const choice = window.confirmedChoice(select, { load: loadLibrary, hintAfter: load, how: "Enter or Load" });

  function loadLibrary() {
    const name = select.value;
    loadChosen(select, choice, (entry, title) => {
      const action = {
        label: `“${title}” from the library replaced the template.`,
        names: ["template", "library", "special_tokens"],
        anchor: "template-sources",
        focus: "library-select",
      };
      playground.replacing(action, () => {
        field.value = name;
        useLibraryTokens(entry);
        playground.setTemplate(entry.template);
      });
    });
  }

  /** The entry's special tokens go in when no vocabulary is loaded and the field holds
   * none or another entry's: never the user's own, nor a loaded source's. The server
   * does the same without scripts (app/state/library_choice.py). */
  function useLibraryTokens(entry) {
    if ($("source_id").value) return;
    const field = $("special_tokens");
    const current = tokensIn(field.value);
    if (current === null) return;
    const entries = [...select.options].map((option) => tokensIn(option.dataset.specialTokens || ""));
    const fromLibrary = !Object.keys(current).length || entries.some((tokens) => tokens && sameTokens(tokens, current));
    if (fromLibrary) field.value = JSON.stringify(entry.special_tokens || {}, null, 2);
  }

  /** A special-tokens object from JSON text ({} for none), or null when it is not one. */
  function tokensIn(text) {
    if (!text.trim()) return {};
    try {
      const value = JSON.parse(text);
      return value && typeof value === "object" && !Array.isArray(value) ? value : null;
    } catch (error) {
      return null;
    }
  }

  function sameTokens(left, right) {
    const names = Object.keys(left);
    return names.length === Object.keys(right).length && names.every((name) => left[name] === right[name]);
  }

  load.addEventListener("click", (event) => {
    event.preventDefault(); // loaded here, not by posting the form
    choice.confirm();
  });
  // The menu shows the entry loaded when a state is put back (Undo, Back, a reload).
  document.addEventListener("playground:restored", () => { select.value = field.value; });

  /** The editor now holds a template of the loaded source, not the library's. */
  function notFromLibrary() {
    field.value = "";
    select.value = "";
  }

  // --- Compare with: the Diff view's second template ---
  const compare = $("compare-library");
  const compareChoice = window.confirmedChoice(compare, {
    load: () => loadChosen(compare, compareChoice, (entry, title) => {
      const action = {
        label: `“${title}” replaced the second template.`,
        names: ["compare_template"],
        anchor: "compare-templates",
        focus: "compare-library",
      };
      playground.replacing(action, () => playground.setField("compare_template", entry.template));
    }),
    hintAfter: compare.closest("label"),
  });

  playground.library = { notFromLibrary };
})();
