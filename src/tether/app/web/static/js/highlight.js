// A small syntax highlighter that reads the code once, left to right: comments, strings,
// numbers and keywords become <span class="tok-*"> elements, the rest text nodes (never HTML
// strings). Every step consumes what it looks at, so its time is linear in the code's length
// even for unterminated strings and comments.

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

/** Per family: keywords, line comment, block comments?, quotes, triple quotes? */
const FAMILIES = Object.fromEntries(
  Object.entries(KEYWORDS).map(([family, words]) => [
    family,
    {
      words: new Set(words.split(" ")),
      line: family === "py" || family === "sh" ? "#" : family === "json" ? null : "//",
      block: family === "js" || family === "go" || family === "rust",
      quotes: family === "js" || family === "go" ? "\"'`" : "\"'",
      triple: family === "py",
    },
  ]),
);

const WORD = /[A-Za-z_$][\w$]*/y;
const NUMBER = /\d[\w.]*/y;

/** Highlight `code` written in `lang`; returns a DocumentFragment. */
export function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  const family = FAMILIES[ALIASES[lang]];
  if (!family) {
    frag.append(document.createTextNode(code));
    return frag;
  }
  let plain = 0; // start of the text not yet appended
  const emit = (kind, start, end) => {
    if (start > plain) frag.append(document.createTextNode(code.slice(plain, start)));
    const span = document.createElement("span");
    span.className = `tok-${kind}`;
    span.textContent = code.slice(start, end);
    frag.append(span);
    plain = end;
  };
  let i = 0;
  while (i < code.length) {
    const c = code[i];
    if (family.line && code.startsWith(family.line, i)) {
      const end = lineEnd(code, i);
      emit("comment", i, end);
      i = end;
    } else if (family.block && code.startsWith("/*", i)) {
      const close = code.indexOf("*/", i + 2);
      const end = close < 0 ? code.length : close + 2;
      emit("comment", i, end);
      i = end;
    } else if (family.quotes.includes(c)) {
      const end = stringEnd(code, i, family);
      emit("string", i, end);
      i = end;
    } else if (c >= "0" && c <= "9" && !isWordChar(code[i - 1])) {
      NUMBER.lastIndex = i;
      NUMBER.test(code);
      emit("number", i, NUMBER.lastIndex);
      i = NUMBER.lastIndex;
    } else if (isWordStart(c) && !isWordChar(code[i - 1])) {
      WORD.lastIndex = i;
      WORD.test(code);
      const end = WORD.lastIndex;
      if (family.words.has(code.slice(i, end))) emit("keyword", i, end);
      i = end;
    } else {
      i += 1;
    }
  }
  if (plain < code.length) frag.append(document.createTextNode(code.slice(plain)));
  return frag;
}

function lineEnd(code, i) {
  const end = code.indexOf("\n", i);
  return end < 0 ? code.length : end;
}

/** The end of the string opening at `i`: its closing quote, or the line's end if none. */
function stringEnd(code, i, family) {
  const quote = code[i];
  if (family.triple && code.startsWith(quote.repeat(3), i)) {
    const close = code.indexOf(quote.repeat(3), i + 3);
    return close < 0 ? code.length : close + 3;
  }
  const multiline = quote === "`";
  let j = i + 1;
  while (j < code.length) {
    const c = code[j];
    if (c === "\\") j += 2;
    else if (c === quote) return j + 1;
    else if (c === "\n" && !multiline) return j;
    else j += 1;
  }
  return code.length;
}

function isWordStart(c) {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c === "$";
}

function isWordChar(c) {
  return c !== undefined && (isWordStart(c) || (c >= "0" && c <= "9"));
}
