// The playground page: the form works without this file; it adds the live editor, the
// output views and their live update (library.js and sources.js load templates and files,
// share.js shares).
// Everything user-supplied is written with textContent or .value, never as HTML.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));
  const form = $("#state");
  if (!form) return;

  /** Tell htmx (and the form) that a field changed, as typing would. */
  function changed(element) {
    element.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function setField(id, value) {
    const element = document.getElementById(id);
    element.value = value;
    changed(element);
  }

  // --- The template editor (CodeMirror 6: Jinja, line numbers, lint marks, completion) ---
  const templateArea = $("#template");
  let editor = null;
  if (window.TemplateEditor && templateArea) {
    editor = window.TemplateEditor.create(templateArea, {
      label: "Chat template",
      describedBy: "template-keys",
      extraNames: sentNames,
      onChange: () => changed(templateArea),
    });
  }

  /** The names a render sends beyond the usual ones: the kwargs' and the special tokens'. */
  function sentNames() {
    return ["kwargs", "special_tokens"].flatMap((id) => {
      try {
        const value = JSON.parse(document.getElementById(id).value || "{}");
        return value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
      } catch (error) {
        return []; // being typed: its own field shows the problem
      }
    });
  }

  function setTemplate(text) {
    if (editor) editor.setValue(text);
    else setField("template", text);
  }

  // The output's problems, as lint marks on their lines: the render's error (#problem)
  // and, while the Analysis view is shown, its diagnostics.
  function showProblems() {
    if (!editor) return;
    const problems = [];
    const problem = $("#problem");
    const line = problem && $(".problem-line", problem);
    if (line) {
      const type = $(".problem-type", problem).textContent.trim();
      const message = $(".problem-message", problem).textContent.trim();
      problems.push({ line: Number(line.dataset.line), severity: "error", message: type + ": " + message });
    }
    const findings = $("#view").value === "analysis" ? $$("#diagnostics .diagnostic") : [];
    findings.forEach((item) => {
      const link = $(".line-link", item);
      if (!link) return;
      const text = Array.from(item.childNodes).filter((node) => node.nodeType === Node.TEXT_NODE);
      const message = text.map((node) => node.textContent).join(" ").replace(/\s+/g, " ").trim();
      problems.push({ line: Number(link.dataset.line), severity: item.dataset.severity || "warning", message });
    });
    editor.showProblems(problems);
  }

  // --- Output views: tabs, whitespace markers, copy ---
  function showView(name) {
    $("#view").value = name;
    $$(".tab").forEach((tab) => {
      const selected = tab.dataset.view === name;
      tab.classList.toggle("active", selected);
      tab.setAttribute("aria-selected", String(selected)); // ARIA tabs: one tab stop, the open one
      tab.tabIndex = selected ? 0 : -1;
    });
    $$(".view-tools").forEach((tools) => { tools.hidden = tools.dataset.for !== name; });
    // On the outputs column, which htmx never swaps: an answer asked from another tab
    // cannot close the open one.
    const outputs = $("#outputs");
    outputs.className = outputs.className.replace(/\bview-\w+/g, "").trim() + " view-" + name;
    showProblems(); // the Analysis findings are marks only while their view is shown
  }
  $$(".tab").forEach((tab) => tab.addEventListener("click", () => {
    showView(tab.dataset.view);
    // Analysis, responses and command lines render many probes: computed only while their
    // tab is open.
    const costly = ["analysis", "response", "command"].includes(tab.dataset.view);
    if (costly && window.htmx) window.htmx.trigger(form, "playground:refresh");
  }));

  // A diagnostic's line number shows that line in the editor: on a narrow screen, the
  // Edit pane first (the editor is hidden behind the Output pane there), then the editor
  // scrolled to the line and the page to the editor.
  document.addEventListener("click", (event) => {
    const link = event.target.closest(".line-link");
    if (!link || !editor) return;
    const editPane = document.querySelector('.pane-switch [data-pane="inputs"]');
    if (editPane && editPane.offsetParent !== null) editPane.click();
    editor.goToLine(Number(link.dataset.line), (top) => {
      if (top !== null) window.scrollTo(0, Math.max(0, top - window.innerHeight / 3));
      editor.focus();
    });
  });

  // The portability matrix's "Open in the Diff": the reference engine on the left, the
  // engine on the right, over the conversation of the first difference (an example is
  // loaded through the Examples menu, so Undo brings the user's conversation back). The
  // changes land within the form's 150 ms trigger delay: one render answers them all.
  document.addEventListener("click", (event) => {
    const button = event.target.closest(".open-diff");
    if (!button) return;
    const conversation = button.dataset.conversation;
    if (conversation !== "current" && $("#example-select")) {
      $("#example-select").value = conversation;
      $("#example-load").click();
    }
    $("#engine").value = button.dataset.reference;
    $("#compare_engines").value = button.dataset.engine;
    showView("diff");
    $("#compare_engines").dispatchEvent(new Event("change", { bubbles: true }));
    $("#tab-diff").focus();
  });

  // On the outputs column, which htmx never swaps: a class set on #output itself is
  // overwritten by the server's when htmx settles a swap (~20 ms later).
  function applyWhitespace() {
    $("#outputs").classList.toggle("show-ws", $("#show-whitespace").checked);
  }

  // Controls that only change the display must not re-render.
  $$(".local").forEach((control) => {
    ["input", "change"].forEach((type) => control.addEventListener(type, (e) => e.stopPropagation()));
  });
  $("#show-whitespace").addEventListener("change", applyWhitespace);

  $("#copy-prompt").addEventListener("click", async () => {
    const raw = $("#prompt-raw");
    if (!raw) return;
    try {
      await navigator.clipboard.writeText(raw.value);
    } catch (error) {
      raw.hidden = false;
      raw.select();
      document.execCommand("copy");
      raw.hidden = true;
    }
    $("#copy-prompt").textContent = "Copied";
    setTimeout(() => { $("#copy-prompt").textContent = "Copy prompt"; }, 1200);
  });

  // --- Live update: newest request wins, older answers are dropped ---
  let sent = Number($("#seq").value) || 0;
  let shown = sent;
  document.body.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.elt !== form) return;
    sent += 1;
    event.detail.parameters.seq = String(sent);
  });
  document.body.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.target.id !== "output") return;
    const match = /data-seq="(\d+)"/.exec(event.detail.xhr.responseText);
    const seq = match ? Number(match[1]) : 0;
    if (seq < shown) event.detail.shouldSwap = false;
    else shown = seq;
  });
  document.body.addEventListener("htmx:afterSwap", afterOutput);
  // A busy server refuses with 429 or 503 and Retry-After (nothing is swapped in): ask
  // again then, for the newest state.
  document.body.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    if (event.detail.elt !== form || (xhr.status !== 429 && xhr.status !== 503)) return;
    const seconds = Number(xhr.getResponseHeader("Retry-After")) || 1;
    setTimeout(() => window.htmx.trigger(form, "playground:refresh"), seconds * 1000);
  });

  function afterOutput() {
    showView($("#view").value || "prompt");
    applyWhitespace();
  }

  // One compare mode at a time: the second template only while engines are not compared.
  // Also called when persist.js puts a saved state back, which fires no change event.
  function showCompareMode() {
    $("#compare-templates").hidden = Boolean($("#compare_engines").value);
  }
  $("#compare_engines").addEventListener("change", showCompareMode);

  /** Run `apply`, an action that replaces what the user wrote; undo.js makes it one that
   * Undo and Back take back (this is the page without it). */
  function replacing(action, apply) {
    apply();
  }

  window.playground = { editor, setTemplate, setField, changed, showView, showCompareMode, replacing };
  afterOutput();
})();
