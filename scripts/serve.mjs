// A small static file server for the built page, bound to 127.0.0.1, serving DIR under a sub-path
// (default /traceprism/, like GitHub Pages serves /<repo>/) so relative URLs are exercised.
//
//   node scripts/serve.mjs [DIR] [--port N] [--base /traceprism/]
//
// Also importable: `startServer({ dir, base, port })` resolves to `{ url, close }`.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.gz': 'application/gzip',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Serves `dir` under `base`; port 0 picks a free one. */
export function startServer({ dir, base = '/traceprism/', port = 0, log = null } = {}) {
  const root = path.resolve(dir);
  if (!base.endsWith('/')) base += '/';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (log) log(`${req.method} ${url.pathname}`);
    if (url.pathname === '/' || url.pathname + '/' === base) {
      res.writeHead(302, { Location: base });
      return res.end();
    }
    if (!url.pathname.startsWith(base)) {
      res.writeHead(404);
      return res.end('not found');
    }
    let rel = decodeURIComponent(url.pathname.slice(base.length)) || 'index.html';
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(root, rel);
    if (file !== root && !file.startsWith(root + path.sep)) {
      res.writeHead(403);
      return res.end('forbidden');
    }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        res.writeHead(404);
        return res.end('not found');
      }
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size,
        'Cache-Control': 'no-cache',
      });
      if (req.method === 'HEAD') return res.end();
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: p } = server.address();
      resolve({ url: `http://127.0.0.1:${p}${base}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const i = args.indexOf(name);
    if (i < 0) return def;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const port = Number(opt('--port', process.env.PORT || 8080));
  const base = opt('--base', '/traceprism/');
  const dir = args[0] || 'dist';
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    console.error(`${dir}/index.html not found: run "npm run build" first`);
    process.exit(1);
  }
  const { url } = await startServer({ dir, base, port });
  console.log(`traceprism page: ${url}  (serving ${dir}/, Ctrl-C to stop)`);
}
