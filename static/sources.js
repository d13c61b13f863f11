// Where the template comes from: a GGUF file (only its header is sent) or Hugging Face
// files, and the named templates of a loaded source (library.js has the library). Each
// load is an action Undo and Back take back (undo.js). Drives the editor through
// window.playground.
// Everything user-supplied is written with textContent or .value, never as HTML.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const playground = window.playground;
  if (!playground || !$("#state")) return;
  const { setTemplate, changed } = playground;

  // The library's menu is library.js's; a loaded source's template is not the library's.
  const { notFromLibrary } = playground.library;

  // --- Uploads ---
  function uploadStatus(percent, message) {
    $("#upload-status").hidden = false;
    $("#upload-progress").value = percent;
    $("#upload-message").textContent = message;
  }

  /** POST with upload progress (fetch cannot report it); `onSent` once the last byte
   * is sent, while the server is still reading. */
  function post(url, body, onProgress, onSent) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", url);
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
      xhr.upload.onload = onSent;
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
      const what = size < file.size ? `the first ${humanSize(size)} of ${file.name}` : file.name;
      const sending = (done) => uploadStatus(Math.round(done * 90), `Sending ${what}: ${Math.round(done * 100)}%…`);
      sending(0);
      const answer = await post(url, prefix, sending, () =>
        uploadStatus(95, `Sent; the server is reading the header of ${file.name}…`));
      if (answer.status === 409 && size < file.size) {
        size = Math.min(file.size, Math.max(answer.json.error.need_bytes, size * 2));
        continue;
      }
      return answer;
    }
  }

  async function uploadHF(files) {
    const data = new FormData();
    files.forEach((file, index) => data.append("file" + index, file, file.name));
    const what = files.length === 1 ? files[0].name : `${files.length} files`;
    const sending = (done) => uploadStatus(Math.round(done * 90), `Sending ${what}: ${Math.round(done * 100)}%…`);
    sending(0);
    return post("/api/sources/hf", data, sending, () =>
      uploadStatus(95, `Sent; the server is reading ${what}…`));
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

  // What a loaded source replaces: its own fields and the special tokens, and the template
  // when it has one.
  const SOURCE_FIELDS = ["source_id", "source_kind", "source_file_name", "source_origin", "template_name", "special_tokens"];

  /** Make `source` the loaded one, as an action Undo and Back take back. */
  function useSource(source, fileName) {
    sources.set(source.id, source);
    const names = Object.keys(source.templates || {});
    const name = names.includes("default") ? "default" : names[0];
    const action = {
      label: `${fileName || "The loaded files"} replaced the ${name ? "template and the " : ""}special tokens.`,
      names: name ? SOURCE_FIELDS.concat(["template", "library", "template_kind"]) : SOURCE_FIELDS,
      anchor: "upload-status",
    };
    playground.replacing(action, () => {
      $("#source_id").value = source.id;
      $("#source_kind").value = source.kind;
      $("#source_file_name").value = fileName || "";
      $("#source_origin").value = source.origin ? JSON.stringify(source.origin) : "";
      $("#template_name").value = name || "";
      $("#special_tokens").value = JSON.stringify(source.special_tokens || {}, null, 2);
      if (name) notFromLibrary();
      // A Modelfile's TEMPLATE is Go; every other source's template is Jinja.
      if (name) $("#template_kind").value = source.template_kind || "jinja";
      if (name) setTemplate(source.templates[name]);
      else changed($("#special_tokens"));
    });
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
    const none = source.kind === "gguf" ? "this GGUF has" : "these files have";
    const templates = names.length
      ? `; templates: ${names.join(", ")}`
      : `; ${none} no chat template; keeping the current one`;
    return `Loaded ${fileName} (${humanSize(fileSize)}${read})${templates}`;
  }

  /** Where the source's tokenizer is: the answer comes before it is built. */
  function tokenizerMessage(tokenizer) {
    if (!tokenizer) return "";
    if (tokenizer.state === "building") return "; building its tokenizer…";
    if (tokenizer.state === "failed") return `; no tokens: ${tokenizer.reason}`;
    return "; tokenizer ready";
  }

  /** Follow the build of a source's tokenizer (the render shows the tokens once it is
   * built: it waits for it) and say how it ended, while the source is still the one
   * loaded. Polled, a little less often the longer it takes. */
  async function followBuild(source, loaded) {
    let tokenizer = source.tokenizer;
    let wait = 50;
    while (tokenizer && tokenizer.state === "building") {
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 1000);
      if ($("#source_id").value !== source.id) return;
      const response = await fetch("/api/sources/" + encodeURIComponent(source.id));
      if (!response.ok) return;
      const current = await response.json();
      sources.set(source.id, current);
      tokenizer = current.tokenizer;
    }
    if ($("#source_id").value === source.id) uploadStatus(100, loaded + tokenizerMessage(tokenizer));
  }

  /** Why an upload was refused, in words. */
  function refusal(answer, fileSize) {
    const error = (answer.json && answer.json.error) || {};
    if (answer.status === 409) {
      // The whole file was sent and the server still asks for more.
      const need = error.need_bytes ? ` (which needs at least ${humanSize(error.need_bytes)})` : "";
      return `the file ends after ${humanSize(fileSize)}, inside its header${need}: is it complete?`;
    }
    return error.message || "the server answered HTTP " + answer.status;
  }

  async function loadSource(upload, fileName, fileSize, leftOut = []) {
    try {
      const answer = await upload();
      if (answer.status !== 200) {
        uploadStatus(0, `Could not read ${fileName}: ${refusal(answer, fileSize)}`);
        return;
      }
      const skipped = leftOut.length ? `; left out ${leftOut.join(", ")} (not tokenizer files)` : "";
      const loaded = loadedMessage(answer.json, fileName, fileSize) + skipped;
      uploadStatus(100, loaded + tokenizerMessage(answer.json.tokenizer));
      useSource(answer.json, fileName);
      followBuild(answer.json, loaded);
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    }
  }

  // The Hugging Face files the server reads (app/sources/hf.py); a model folder holds more.
  const HF_FILES = ["tokenizer_config.json", "chat_template.json", "tokenizer.json"];
  const isHFFile = (file) => HF_FILES.includes(file.name) || file.name.endsWith(".jinja");

  /** Load picked or dropped files: a GGUF file's header, or the tokenizer files among
   * the rest (the weights of a dropped model folder are never sent). */
  function loadFiles(files) {
    const gguf = files.filter((file) => /\.gguf$/i.test(file.name)).sort((a, b) => a.name.localeCompare(b.name));
    if (gguf.length) {
      loadSource(() => uploadGGUF(gguf[0]), gguf[0].name, gguf[0].size);
      return;
    }
    const wanted = files.filter(isHFFile);
    const leftOut = files.filter((file) => !isHFFile(file)).map((file) => file.name);
    if (!wanted.length) {
      uploadStatus(0, "Nothing to load here: drop a .gguf file, or a model's Hugging Face files "
        + "(tokenizer_config.json, chat_template.jinja, tokenizer.json).");
      return;
    }
    const total = wanted.reduce((sum, file) => sum + file.size, 0);
    loadSource(() => uploadHF(wanted), wanted.map((f) => f.name).join(", "), total, leftOut);
  }

  // A picker lets go of its files once they are read: the source panel says what is
  // loaded, and a name left in the picker would go stale when another source replaces
  // it (or when the server refused the file).
  $("#gguf-file").addEventListener("change", (event) => {
    event.stopPropagation();
    const file = event.target.files[0];
    event.target.value = "";
    if (file) loadSource(() => uploadGGUF(file), file.name, file.size);
  });
  $("#gguf-file").addEventListener("input", (event) => event.stopPropagation());
  $("#hf-files").addEventListener("change", (event) => {
    event.stopPropagation();
    const files = Array.from(event.target.files);
    event.target.value = "";
    loadFiles(files.filter((file) => !/\.gguf$/i.test(file.name)));
  });
  $("#hf-files").addEventListener("input", (event) => event.stopPropagation());

  // --- Drag and drop: files or a model folder, anywhere on the page ---
  const carriesFiles = (event) => Array.from(event.dataTransfer?.types || []).includes("Files");

  /** The files of a dropped folder (and its subfolders, a few levels down). */
  function folderFiles(entry, depth = 0) {
    if (entry.isFile) return new Promise((resolve) => entry.file((file) => resolve([file]), () => resolve([])));
    if (depth > 3) return Promise.resolve([]);
    return new Promise((resolve) => {
      entry.createReader().readEntries(async (entries) => {
        const lists = await Promise.all(entries.map((child) => folderFiles(child, depth + 1)));
        resolve(lists.flat());
      }, () => resolve([]));
    });
  }

  ["dragenter", "dragover"].forEach((type) => document.addEventListener(type, (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault(); // or the browser opens the file in place of the page
    event.dataTransfer.dropEffect = "copy";
    document.body.classList.add("dropping");
  }));
  document.addEventListener("dragleave", (event) => {
    if (!event.relatedTarget) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", async (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    document.body.classList.remove("dropping");
    // Entries must be taken while the event lasts; folders are read after.
    const entries = Array.from(event.dataTransfer.items || [])
      .map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null));
    const files = Array.from(event.dataTransfer.files);
    if (!entries.some((entry) => entry && entry.isDirectory)) {
      loadFiles(files);
      return;
    }
    const lists = await Promise.all(entries.filter(Boolean).map((entry) => folderFiles(entry)));
    loadFiles(lists.flat());
  });

  /** POST JSON; the page shows a bar moving while the server reads. */
  async function ask(endpoint, body) {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    let json = null;
    try { json = await response.json(); } catch (error) { json = null; }
    return { status: response.status, json };
  }

  // Used by remote.js (the Model box: the Hub or a URL) and ollama_sources.js.
  playground.sources = { useSource, uploadStatus, humanSize, loadedMessage, ask };

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
      const action = {
        label: `Template “${name}” of ${$("#source_file_name").value || "the loaded files"} replaced the template.`,
        names: ["template", "template_name", "library"],
        anchor: "source-info",
      };
      playground.replacing(action, () => {
        $("#template_name").value = name;
        notFromLibrary();
        setTemplate(source.templates[name]);
      });
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    }
  });
})();
