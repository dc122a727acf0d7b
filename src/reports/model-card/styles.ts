// The card's one stylesheet, inline in the page (nothing fetched): readable on screen, on a phone and on paper.
export const CARD_CSS = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;max-width:52rem;margin:2rem auto;padding:0 1.25rem}
h1{font-size:1.6rem;margin:0 0 .25rem}h2{font-size:1.15rem;border-bottom:2px solid #d0d7de;padding-bottom:.2rem;margin:1.8rem 0 .6rem}
.meta,.muted{color:#57606a}.meta{margin:0 0 1rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0 .8rem}th,td{border:1px solid #d0d7de;padding:.3rem .55rem;text-align:left;vertical-align:top}
thead th{background:#f3f4f6}tbody th{font-weight:600;width:38%}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;color:#57606a;font-size:.9rem;padding-bottom:.25rem}table.sg tbody th{width:auto}table.sg td.n{white-space:nowrap}table.sg tr.worse>*{background:#fff8e5}.cm td.diag{background:#eef6ee}.pct{color:#57606a;font-size:.85em}
.warn{border-left:5px solid #bf8700;background:#fff8e5;padding:.5rem .8rem;margin:.5rem 0}.warn.severe{border-color:#cf222e;background:#ffebe9}
.warn b{display:block}code{word-break:break-all}.glance{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;margin:1rem 0}.glance p{margin:.2rem 0}.intended{white-space:normal;background:#f6f8fa;border:1px solid #d0d7de;padding:.6rem .8rem}
ul{padding-left:1.3rem}footer{margin-top:2rem;color:#57606a;font-size:.85rem}
@media print{body{margin:0;max-width:none;font-size:11pt}h2{break-after:avoid}table,.warn{break-inside:avoid}a{color:inherit;text-decoration:none}}
h3{font-size:1rem;margin:1.1rem 0 .4rem}.wide{overflow-x:auto;max-width:100%}
`;
