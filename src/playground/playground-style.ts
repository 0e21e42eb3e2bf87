/** The page's own layout, served as a stylesheet (the CSP allows no inline style elements or attributes). */
export const PLAYGROUND_CSS = `html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.bankgraph-bar { display: flex; align-items: center; gap: 1rem; padding: 0.5rem 1rem; border-bottom: 1px solid #d0d7de; font-size: 14px; flex-wrap: wrap; }
.bankgraph-bar strong { font-size: 16px; }
.bankgraph-bar a, .bankgraph-bar button { font: inherit; padding: 0.25rem 0.75rem; border-radius: 6px; border: 1px solid #1f6feb; text-decoration: none; cursor: pointer; }
.bankgraph-bar a { background: #1f6feb; color: #fff; }
.bankgraph-bar button { background: #fff; color: #1f6feb; }
.bankgraph-bar [hidden] { display: none; }
.bankgraph-bar #who { color: #24292f; }
.bankgraph-bar #identity-mode { color: #57606a; }
.bankgraph-bar .merchant-key { margin-left: auto; color: #57606a; display: flex; align-items: center; gap: 0.5rem; }
.bankgraph-bar .merchant-key input { font: inherit; padding: 0.2rem 0.5rem; border: 1px solid #d0d7de; border-radius: 6px; width: 22rem; }
.bankgraph-bar #run-note { flex-basis: 100%; color: #57606a; }
.bankgraph-bar #run-note[data-replay="true"] { color: #9a6700; }
.bankgraph-bar #payload-note { flex-basis: 100%; color: #57606a; font-variant-numeric: tabular-nums; }
#graphiql { flex: 1; min-height: 0; }
`;
