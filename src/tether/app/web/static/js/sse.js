// Server-sent events over fetch(): EventSource cannot send an Authorization header, so the
// stream is read from a Response body and parsed here (the WHATWG event-stream format).

/**
 * Yield the frames of an SSE response, one array per network chunk (so the caller can
 * render once per chunk). A frame is `{id, event, data}`; `id` is null when absent.
 */
export async function* sseBatches(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let frame = newFrame();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const batch = [];
      let end;
      while ((end = lineEnd(buffer)) >= 0) {
        let line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === "\r" && buffer[end + 1] === "\n" ? end + 2 : end + 1);
        if (line === "") {
          if (frame.data.length) batch.push({ id: frame.id, event: frame.event, data: frame.data.join("\n") });
          frame = newFrame();
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        line = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") frame.data.push(line);
        else if (field === "id") frame.id = line;
        else if (field === "event") frame.event = line;
      }
      if (batch.length) yield batch;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function newFrame() {
  return { id: null, event: null, data: [] };
}

function lineEnd(text) {
  const n = text.indexOf("\n");
  const r = text.indexOf("\r");
  if (r >= 0 && r === text.length - 1) return n >= 0 && n < r ? n : -1; // "\r" may precede "\n"
  if (n < 0) return r;
  if (r < 0) return n;
  return Math.min(n, r);
}
