// The template editor: CodeMirror 6 with its Jinja language, the template's problem as a
// lint mark at its line, and completion of the names a chat template sees.
// Bundled by esbuild into static/vendor/template-editor.js (./playground and the
// Dockerfile run it), which defines window.TemplateEditor; static/playground.js makes the
// page's editor with it over the form's #template textarea.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab, undo } from "@codemirror/commands";
import { jinjaCompletionSource, jinjaLanguage, closePercentBrace } from "@codemirror/lang-jinja";
import { LanguageSupport, bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorSelection, EditorState } from "@codemirror/state";
import {
  EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers,
} from "@codemirror/view";

/** What every chat template is given, whatever the request (transformers' names). */
const GLOBALS = [
  ["messages", "the conversation: a list of {role, content, ...}"],
  ["tools", "the tool schemas, or none"],
  ["documents", "retrieval documents, or none"],
  ["add_generation_prompt", "whether to open the assistant's turn"],
  ["continue_final_message", "whether the last message is continued"],
  ["raise_exception", "stop with an error message"],
  ["strftime_now", "the current time, formatted"],
];
const MESSAGE_FIELDS = ["role", "content", "tool_calls", "tool_call_id", "reasoning_content", "name"];
/** Properties by the name they are read from (`message.`, `tool_call.function.`, ...). */
const PROPERTIES = {
  message: MESSAGE_FIELDS,
  msg: MESSAGE_FIELDS,
  m: MESSAGE_FIELDS,
  tool_call: ["id", "type", "function"],
  call: ["id", "type", "function"],
  tool: ["type", "function"],
  function: ["name", "arguments", "description", "parameters"],
  loop: ["index", "index0", "revindex", "revindex0", "first", "last", "length", "previtem", "nextitem", "cycle"],
};

function completions(names, type, detail) {
  return names.map((label) => ({ label, type, detail }));
}

/** The completion source: the globals, the special tokens and kwargs the page sends now
 * (`extraNames()`), and the fields of what a template usually loops over. */
function completionSource(extraNames) {
  const properties = (path) => completions(PROPERTIES[path[path.length - 1]] || [], "property");
  return (context) => {
    const variables = [
      ...GLOBALS.map(([label, detail]) => ({ label, type: "variable", detail })),
      ...completions(extraNames(), "constant", "sent with this request"),
    ];
    return jinjaCompletionSource({ variables, properties })(context);
  };
}

/** Line `number` (1-based) of `state`, or null past its end. */
function lineAt(state, number) {
  return number >= 1 && number <= state.doc.lines ? state.doc.line(number) : null;
}

/**
 * Make the editor over `textarea` (which it hides and keeps up to date for the form).
 * `onChange()` hears every edit; `extraNames()` lists the special tokens and kwargs.
 * Returns the small interface the page and its tests use.
 */
export function createEditor(textarea, { onChange, extraNames = () => [], label = "Chat template" }) {
  const view = new EditorView({
    parent: textarea.parentNode,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        EditorView.lineWrapping,
        // jinjaLanguage without the HTML base's completions: a template's "<|im_start|>"
        // is no HTML tag to complete.
        new LanguageSupport(jinjaLanguage, [closePercentBrace]),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        autocompletion({ override: [completionSource(extraNames)] }),
        lintGutter(),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ "aria-label": label }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          onChange();
        }),
      ],
    }),
  });
  textarea.after(view.dom);
  textarea.hidden = true;

  return {
    view,
    /** The element that is the editor's one Tab stop (static/keyboard.js). */
    scroller: view.scrollDOM,
    content: view.contentDOM,
    getValue: () => view.state.doc.toString(),
    setValue(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    undo: () => undo(view),
    focus: () => view.focus(),
    hasFocus: () => view.hasFocus,
    /** The cursor's line and column, 0-based (as the tests read it). */
    getCursor() {
      const head = view.state.selection.main.head;
      const line = view.state.doc.lineAt(head);
      return { line: line.number - 1, ch: head - line.from };
    },
    /** Replace the text of line `number` (1-based). */
    replaceLine(number, text) {
      const line = lineAt(view.state, number);
      if (line) view.dispatch({ changes: { from: line.from, to: line.to, insert: text } });
    },
    /** The template's problem as a lint mark on its line (none: clear it). */
    showProblem(number, message) {
      const line = lineAt(view.state, number);
      const diagnostics = line ? [{ from: line.from, to: line.to, severity: "error", message }] : [];
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    /** Put the cursor at the start of line `number` (1-based), scrolled into view. */
    goToLine(number) {
      const line = lineAt(view.state, number);
      if (!line) return null;
      view.dispatch({
        selection: EditorSelection.cursor(line.from),
        effects: EditorView.scrollIntoView(line.from, { y: "center" }),
      });
      return view.coordsAtPos(line.from);
    },
    /** Measure again after being hidden (the narrow screen's Edit pane). */
    refresh: () => view.requestMeasure(),
  };
}

window.TemplateEditor = { createEditor };
