// Where the template comes from: the library, a GGUF file (only its header is sent) or
// Hugging Face files, and the named templates of a loaded source. Moved here from
// playground.js, whose editor it drives through window.playground.
// Everything user-supplied is written with textContent or .value, never as HTML.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const playground = window.playground;
  if (!playground || !$("#state")) return;
  const { setTemplate, changed } = playground;

  // --- The library ---
  async function libraryTemplate(name) {
    const response = await fetch("/api/library/" + encodeURIComponent(name));
    if (!response.ok) throw new Error("library template " + name + " not found");
    return response.json();
  }

  // Choosing a library template loads it (CodeMirror's undo brings the text back); the
  // select is the state's `library` field, so the page names what is in the editor.
  // Without scripts the Load button posts the form instead.
  const librarySelect = $("#library-select");
  $("#library-load").hidden = true;
  librarySelect.addEventListener("change", async (event) => {
    event.stopPropagation(); // rendered once the template is in the editor
    if (!librarySelect.value) return;
    const entry = await libraryTemplate(librarySelect.value);
    setTemplate(entry.template);
  });

  /** The editor now holds a template of the loaded source, not the library's. */
  function notFromLibrary() {
    librarySelect.value = "";
  }

  // --- Uploads ---
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

  // Sources by id, as the upload answered or /api/sources/<id> returns them: the
  // template tabs read their texts from here.
  const sources = new Map();

  async function sourceById(id) {
    if (!sources.has(id)) {
      const response = await fetch("/api/sources/" + encodeURIComponent(id));
      if (!response.ok) throw new Error("this source is no longer stored: load its file again");
      sources.set(id, await response.json());
    }
    return sources.get(id);
  }

  function useSource(source, fileName) {
    sources.set(source.id, source);
    $("#source_id").value = source.id;
    $("#source_kind").value = source.kind;
    $("#source_file_name").value = fileName || "";
    const names = Object.keys(source.templates || {});
    const name = names.includes("default") ? "default" : names[0];
    $("#template_name").value = name || "";
    $("#special_tokens").value = JSON.stringify(source.special_tokens || {}, null, 2);
    if (name) notFromLibrary();
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

  // --- The named templates of the loaded source ---
  // The tabs are redrawn with every render (htmx swaps them in), so one listener on the
  // document serves them all; their texts come from the source, not from the swapped
  // HTML (htmx drops <script> elements from what it swaps in).
  document.addEventListener("click", async (event) => {
    const tab = event.target.closest(".template-tab");
    if (!tab) return;
    try {
      const source = await sourceById($("#source_id").value);
      const name = tab.dataset.templateName;
      if (!(name in (source.templates || {}))) return;
      $("#template_name").value = name;
      notFromLibrary();
      setTemplate(source.templates[name]);
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    }
  });
})();
