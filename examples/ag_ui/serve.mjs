// Serve the AG-UI chat page and pass its runs on to `tether serve`, from one origin.
//   npm install @ag-ui/client@1.0.0     (once, here or in a parent folder)
//   tether serve                        (another terminal)
//   node examples/ag_ui/serve.mjs       then open http://127.0.0.1:8001
// Options: --port N (0 = any free port; the URL is printed), --modules DIR (a node_modules
// folder), TETHER_URL (default http://127.0.0.1:8000), TETHER_API_KEY (sent upstream, so
// the key never reaches the browser).
//
// Why a proxy: `tether serve` refuses state-changing requests from pages of other origins
// (another port is another origin), so the page and `/v1/ag-ui/` must share one. This
// server keeps the same rules for itself: loopback `Host` only, and no cross-site POSTs.
// The page loads @ag-ui/client unbundled: an import map names each package's ESM build
// under /node_modules/, and extensionless imports inside them (rxjs) are redirected to
// the file they mean, as a bundler would resolve them.
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { createServer, request as httpRequest } from "node:http";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: { port: { type: "string", default: "8001" }, modules: { type: "string" } },
});
const upstream = new URL(process.env.TETHER_URL ?? "http://127.0.0.1:8000");
const apiKey = process.env.TETHER_API_KEY;
const modules = opts.modules ? resolve(opts.modules) : findModules();
const PAGE = ["index.html", "page.js", "page.css"];
const JS = "text/javascript; charset=utf-8";
const TYPES = { ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": JS, ".mjs": JS };
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

// The page's only inline script is its import map: allow exactly that one by its hash.
const html = readFileSync(join(here, "index.html"), "utf8");
const importMap = html.match(/<script type="importmap">([\s\S]*?)<\/script>/)[1];
const mapHash = createHash("sha256").update(importMap).digest("base64");
const CSP = `default-src 'self'; script-src 'self' 'sha256-${mapHash}'; object-src 'none'; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function findModules() {
  for (const start of [process.cwd(), here]) {
    for (let dir = start; ; dir = dirname(dir)) {
      if (existsSync(join(dir, "node_modules", "@ag-ui", "client"))) return join(dir, "node_modules");
      if (dirname(dir) === dir) break;
    }
  }
  console.error("serve.mjs: no node_modules with @ag-ui/client: run `npm install @ag-ui/client@1.0.0`");
  process.exit(2);
}

function refuse(res, status, message) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(`${message}\n`);
}

function sameOrigin(req) {
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host}`;
}

function sendFile(res, path) {
  res.writeHead(200, {
    "content-type": TYPES[extname(path)] ?? "application/octet-stream",
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache",
  });
  createReadStream(path).pipe(res);
}

function serveModule(req, res, pathname) {
  const path = resolve(modules, "." + decodeURIComponent(pathname.slice("/node_modules".length)));
  if (path !== modules && !path.startsWith(modules + sep)) return refuse(res, 404, "not found");
  if (existsSync(path) && statSync(path).isFile()) return sendFile(res, path);
  // `./internal/Observable` means `Observable.js`, `./operators` means `operators/index.js`:
  // redirect, so the module's own relative imports resolve against its real URL.
  for (const tail of [".js", "/index.js"]) {
    if (existsSync(path + tail) && statSync(path + tail).isFile()) {
      res.writeHead(302, { location: pathname + tail });
      return res.end();
    }
  }
  refuse(res, 404, "not found");
}

function proxy(req, res) {
  if (!sameOrigin(req)) return refuse(res, 403, "cross-site requests are refused");
  const headers = { "content-type": req.headers["content-type"] ?? "application/json",
    accept: req.headers.accept ?? "text/event-stream" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const out = httpRequest(new URL(req.url, upstream), { method: "POST", headers }, (answer) => {
    res.writeHead(answer.statusCode, {
      "content-type": answer.headers["content-type"] ?? "text/plain",
      "cache-control": "no-cache",
    });
    answer.pipe(res);
  });
  out.on("error", (err) => {
    if (!res.headersSent) refuse(res, 502, `tether serve at ${upstream.origin} did not answer: ${err.message}`);
    else res.destroy();
  });
  res.on("close", () => out.destroy()); // the page stopped listening: stop the upstream read
  req.pipe(out);
}

const server = createServer((req, res) => {
  try {
    route(req, res);
  } catch (err) { // a malformed URL (`%E0%A4%A`), not a reason to stop serving
    if (!res.headersSent) refuse(res, 400, `bad request: ${err.message}`);
    else res.destroy();
  }
});

function route(req, res) {
  const host = (req.headers.host ?? "").replace(/:\d+$/, "");
  if (!LOOPBACK.has(host)) return refuse(res, 421, "open this page as 127.0.0.1 or localhost");
  const { pathname } = new URL(req.url, "http://page");
  if (req.method === "POST" && pathname.startsWith("/v1/ag-ui/")) return proxy(req, res);
  if (req.method !== "GET" && req.method !== "HEAD") return refuse(res, 405, "method not allowed");
  const file = pathname === "/" ? "index.html" : pathname.slice(1);
  if (PAGE.includes(file)) return sendFile(res, join(here, file));
  if (pathname.startsWith("/node_modules/")) return serveModule(req, res, pathname);
  if (pathname === "/favicon.ico") return res.writeHead(204).end();
  refuse(res, 404, "not found");
}

server.listen(Number(opts.port), "127.0.0.1", () => {
  console.log(`AG-UI chat page on http://127.0.0.1:${server.address().port} -> ${upstream.origin}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
