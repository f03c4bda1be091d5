// A small syntax highlighter: one regular expression per language family picks out
// comments, strings, numbers and keywords; the result is text nodes and <span class="tok-*">
// elements, never HTML strings.

const KEYWORDS = {
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield match case",
  js: "async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield",
  sh: "if then else elif fi for while until do done case esac function in return export local readonly echo cd set unset exit",
  json: "true false null",
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  rust: "as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
};

const ALIASES = {
  python: "py", py: "py", javascript: "js", js: "js", ts: "js", typescript: "js", mjs: "js",
  bash: "sh", sh: "sh", shell: "sh", zsh: "sh", console: "sh", json: "json", go: "go",
  rust: "rust", rs: "rust",
};

const HASH_COMMENT = new Set(["py", "sh"]);
const cache = new Map();

function tokenizer(family) {
  if (cache.has(family)) return cache.get(family);
  const comment = HASH_COMMENT.has(family) ? "#[^\\n]*" : "\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/";
  const strings = "\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*'|`(?:\\\\.|[^`\\\\])*`";
  const words = KEYWORDS[family].split(" ").join("|");
  const re = new RegExp(
    `(${comment})|(${strings})|(\\b\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?\\b)|\\b(${words})\\b`,
    "g",
  );
  cache.set(family, re);
  return re;
}

/** Highlight `code` written in `lang`; returns a DocumentFragment. */
export function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  const family = ALIASES[lang];
  if (!family) {
    frag.append(document.createTextNode(code));
    return frag;
  }
  const re = tokenizer(family);
  re.lastIndex = 0;
  let last = 0;
  for (const m of code.matchAll(re)) {
    if (m.index > last) frag.append(document.createTextNode(code.slice(last, m.index)));
    const kind = m[1] ? "comment" : m[2] ? "string" : m[3] ? "number" : "keyword";
    const span = document.createElement("span");
    span.className = `tok-${kind}`;
    span.textContent = m[0];
    frag.append(span);
    last = m.index + m[0].length;
  }
  if (last < code.length) frag.append(document.createTextNode(code.slice(last)));
  return frag;
}
