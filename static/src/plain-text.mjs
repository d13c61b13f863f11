// Stands in for @codemirror/lang-html when the template editor is bundled (package.json's
// build script aliases it). @codemirror/lang-jinja parses the text between Jinja tags with
// an HTML base by default; a chat template's text is plain text, not HTML (`<|im_start|>`
// is no tag), and the HTML, CSS and JavaScript parsers it would bring are most of the bundle.
import { LanguageSupport, StreamLanguage } from "@codemirror/language";

const text = StreamLanguage.define({
  name: "text",
  token(stream) {
    stream.skipToEnd();
    return null;
  },
});

/** What lang-jinja asks of lang-html: a LanguageSupport to use as its base. */
export function html() {
  return new LanguageSupport(text);
}
