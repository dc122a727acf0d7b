// A self-contained API reference page (no CDN: hospital hosts are often offline).
// It reads /openapi.json in the browser and lists every operation with its schemas.

/** The page's one inline script; the page's CSP allows it by its hash (app.ts). */
export const DOCS_SCRIPT = `fetch('/openapi.json').then(r=>r.json()).then(doc=>{
  const main=document.getElementById('ops');main.textContent='';
  for(const [path,ops] of Object.entries(doc.paths)){for(const [method,op] of Object.entries(ops)){
    const div=document.createElement('div');div.className='op';
    const h=document.createElement('div');h.innerHTML='<span class="m '+method+'"></span> <code></code> <span></span>';
    h.children[0].textContent=method;h.children[1].textContent=path;h.children[2].textContent=op.summary||'';
    div.appendChild(h);
    const more={parameters:op.parameters,requestBody:op.requestBody,responses:op.responses,security:op.security};
    const d=document.createElement('details');const s=document.createElement('summary');s.textContent='schemas';
    const pre=document.createElement('pre');pre.textContent=JSON.stringify(more,null,2);d.append(s,pre);div.appendChild(d);
    main.appendChild(div);}}
});
`;

export function docsPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Builder API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f7f8fa}
header{background:#0b3d5c;color:#fff;padding:16px 24px}main{max-width:960px;margin:0 auto;padding:16px 24px}
.op{background:#fff;border:1px solid #dde2e8;border-radius:8px;margin:12px 0;padding:12px 16px}
.m{display:inline-block;min-width:56px;font-weight:700;text-transform:uppercase}
.get{color:#1769aa}.post{color:#1a7f37}.put{color:#9a6700}.delete{color:#cf222e}.patch{color:#8250df}
code{background:#eef1f4;padding:1px 4px;border-radius:4px}pre{background:#eef1f4;padding:8px;overflow:auto;font-size:12px}
details summary{cursor:pointer;color:#57606a}
</style></head><body><header><h1>Builder API</h1><p>Every request carries <code>Authorization: Bearer &lt;key&gt;</code>. Machine-readable: <a style="color:#9cd1ff" href="/openapi.json">/openapi.json</a></p></header>
<main id="ops">Loading…</main>
<script>${DOCS_SCRIPT}</script></body></html>`;
}
