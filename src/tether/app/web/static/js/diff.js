// A line diff (longest common subsequence) for showing Edit and Write calls.

const LIMIT = 600; // lines per side; past that, show all removed then all added

/** Diff two texts: a list of [kind, line] where kind is " ", "-" or "+". */
export function lineDiff(before, after) {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  if (a.length > LIMIT || b.length > LIMIT) {
    return [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  }
  const rows = a.length + 1;
  const cols = b.length + 1;
  const lcs = new Uint16Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * cols + j] =
        a[i] === b[j] ? lcs[(i + 1) * cols + j + 1] + 1 : Math.max(lcs[(i + 1) * cols + j], lcs[i * cols + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push([" ", a[i++]]);
      j++;
    } else if (lcs[(i + 1) * cols + j] >= lcs[i * cols + j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < a.length) out.push(["-", a[i++]]);
  while (j < b.length) out.push(["+", b[j++]]);
  return out;
}

/** A <pre> showing `lines` from lineDiff, one span per line. */
export function diffElement(lines) {
  const pre = document.createElement("pre");
  pre.className = "diff";
  for (const [kind, line] of lines) {
    const span = document.createElement("span");
    span.className = kind === "+" ? "add" : kind === "-" ? "del" : "ctx";
    span.textContent = `${kind} ${line}\n`;
    pre.append(span);
  }
  return pre;
}
