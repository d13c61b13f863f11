// The playground page: the form works without this file; it adds the live editor,
// the structured message editor, uploads that send only a GGUF header, and sharing.
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

  // --- The template editor (CodeMirror, Jinja mode, line numbers) ---
  const templateArea = $("#template");
  let editor = null;
  if (window.CodeMirror && templateArea) {
    editor = window.CodeMirror.fromTextArea(templateArea, {
      mode: { name: "jinja2", htmlMode: false },
      lineNumbers: true,
      lineWrapping: true,
      viewportMargin: Infinity,
    });
    editor.on("change", () => {
      editor.save();
      changed(templateArea);
    });
  }

  function setTemplate(text) {
    if (editor) editor.setValue(text);
    else setField("template", text);
  }

  let errorLine = null;
  function showErrorLine(line) {
    if (!editor) return;
    if (errorLine !== null) editor.removeLineClass(errorLine, "background", "cm-error-line");
    errorLine = null;
    if (line && line <= editor.lineCount()) {
      errorLine = line - 1;
      editor.addLineClass(errorLine, "background", "cm-error-line");
    }
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
    const output = $("#output");
    output.className = output.className.replace(/\bview-\w+/g, "").trim() + " view-" + name;
  }
  $$(".tab").forEach((tab) => tab.addEventListener("click", () => {
    showView(tab.dataset.view);
    // Analysis and command lines render many probes: computed only while their tab is open.
    const costly = ["analysis", "command"].includes(tab.dataset.view);
    if (costly && window.htmx) window.htmx.trigger(form, "playground:refresh");
  }));

  // A diagnostic's line number shows that line in the editor.
  document.addEventListener("click", (event) => {
    const link = event.target.closest(".line-link");
    if (!link || !editor) return;
    const line = Number(link.dataset.line) - 1;
    editor.scrollIntoView({ line, ch: 0 }, 80);
    editor.setCursor({ line, ch: 0 });
    editor.focus();
  });

  function applyWhitespace() {
    $("#output").classList.toggle("show-ws", $("#show-whitespace").checked);
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
    const output = $("#output");
    showView($("#view").value || "prompt");
    applyWhitespace();
    showErrorLine(Number(output.dataset.errorLine) || null);
    bindTemplateTabs();
  }

  // --- Sources: the library, GGUF files (header only), Hugging Face files ---
  async function libraryTemplate(name) {
    const response = await fetch("/api/library/" + encodeURIComponent(name));
    if (!response.ok) throw new Error("library template " + name + " not found");
    return response.json();
  }

  $("#library-select").addEventListener("change", (event) => {
    const option = event.target.selectedOptions[0];
    $("#library-notes").textContent = option ? option.title : "";
    event.stopPropagation();
  });
  $("#library-load").addEventListener("click", async (event) => {
    event.preventDefault();
    const entry = await libraryTemplate($("#library-select").value);
    setTemplate(entry.template);
  });
  $("#compare-library").addEventListener("change", async (event) => {
    if (!event.target.value) return;
    const entry = await libraryTemplate(event.target.value);
    setField("compare_template", entry.template);
  });

  function uploadStatus(percent, message) {
    $("#upload-status").hidden = false;
    $("#upload-progress").value = percent;
    $("#upload-message").textContent = message;
  }

  /** POST with upload progress (fetch cannot report it). */
  function post(url, body, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
      xhr.onload = () => {
        let json = null;
        try { json = JSON.parse(xhr.responseText); } catch (error) { json = null; }
        resolve({ status: xhr.status, json });
      };
      xhr.onerror = () => reject(new Error("the upload failed"));
      xhr.send(body);
    });
  }

  const FIRST_PREFIX = 16 * 1024 * 1024;

  /** Send the first bytes of a GGUF file, more only when the server asks (409). */
  async function uploadGGUF(file) {
    let size = Math.min(FIRST_PREFIX, file.size);
    for (;;) {
      const url = "/api/sources/gguf?name=" + encodeURIComponent(file.name);
      // The server takes GGUF bytes only as application/octet-stream (see app/web/guards.py).
      const prefix = file.slice(0, size, "application/octet-stream");
      const answer = await post(url, prefix, (done) =>
        uploadStatus(Math.round(done * 100), `Reading the header of ${file.name}: ${size} of ${file.size} bytes…`));
      if (answer.status === 409 && size < file.size) {
        size = Math.min(file.size, Math.max(answer.json.error.need_bytes, size * 2));
        continue;
      }
      return answer;
    }
  }

  async function uploadHF(files) {
    const data = new FormData();
    Array.from(files).forEach((file, index) => data.append("file" + index, file, file.name));
    return post("/api/sources/hf", data, (done) => uploadStatus(Math.round(done * 100), "Uploading…"));
  }

  function useSource(source, fileName) {
    $("#source_id").value = source.id;
    $("#source_kind").value = source.kind;
    $("#source_file_name").value = fileName || "";
    const names = Object.keys(source.templates || {});
    const name = names.includes("default") ? "default" : names[0];
    $("#template_name").value = name || "";
    $("#special_tokens").value = JSON.stringify(source.special_tokens || {}, null, 2);
    if (name) setTemplate(source.templates[name]);
    else changed($("#special_tokens"));
  }

  function humanSize(bytes) {
    const units = ["bytes", "KB", "MB", "GB", "TB"];
    let size = bytes;
    let unit = 0;
    while (size >= 1000 && unit < units.length - 1) { size /= 1000; unit += 1; }
    return (unit ? size.toFixed(1) : String(size)) + " " + units[unit];
  }

  /** What was loaded: the file, its size, and (for GGUF) how much of it was read. */
  function loadedMessage(source, fileName, fileSize) {
    const names = Object.keys(source.templates || {});
    const read = source.header_bytes ? `, header ${humanSize(source.header_bytes)} read` : "";
    const templates = names.length ? `; templates: ${names.join(", ")}` : "; no template";
    return `Loaded ${fileName} (${humanSize(fileSize)}${read})${templates}`;
  }

  async function loadSource(upload, fileName, fileSize) {
    try {
      const answer = await upload();
      if (answer.status !== 200) {
        const error = (answer.json && answer.json.error) || {};
        uploadStatus(0, `Could not read ${fileName}: ${error.message || "HTTP " + answer.status}`);
        return;
      }
      uploadStatus(100, loadedMessage(answer.json, fileName, fileSize));
      useSource(answer.json, fileName);
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    }
  }

  $("#gguf-file").addEventListener("change", (event) => {
    event.stopPropagation();
    const file = event.target.files[0];
    if (file) loadSource(() => uploadGGUF(file), file.name, file.size);
  });
  $("#gguf-file").addEventListener("input", (event) => event.stopPropagation());
  $("#hf-files").addEventListener("change", (event) => {
    event.stopPropagation();
    const files = event.target.files;
    const list = Array.from(files);
    const total = list.reduce((sum, file) => sum + file.size, 0);
    if (list.length) loadSource(() => uploadHF(files), list.map((f) => f.name).join(", "), total);
  });
  $("#hf-files").addEventListener("input", (event) => event.stopPropagation());

  function bindTemplateTabs() {
    const data = $("#source-templates");
    if (!data) return;
    const templates = JSON.parse(data.textContent);
    $$(".template-tab").forEach((tab) => {
      tab.onclick = () => {
        $("#template_name").value = tab.dataset.templateName;
        setTemplate(templates[tab.dataset.templateName]);
      };
    });
  }

  // --- Sharing ---
  $("#share-button").addEventListener("click", async () => {
    // URL-encoded, as htmx posts the form: a multipart body would turn every newline of
    // the template into CRLF, and the share would store a different template.
    const body = new URLSearchParams(new FormData(form));
    const response = await fetch("/fragments/share", { method: "POST", body });
    const answer = await response.json();
    const box = $("#share-url");
    box.value = answer.url ? new URL(answer.url, location.href).href : (answer.error || {}).message;
    box.select();
  });

  window.playground = { editor, setTemplate, showView };
  afterOutput();
})();
