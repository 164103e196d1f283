// The import rules `npm run check:cycles` enforces (docs/STYLE: "dependencies point inward").
// Lower layers (the stores, the ClickHouse query builders, auth, and the neutral modules at the top of
// src/) are what resources build on; they never import a resource folder, so no resource can reach
// another through them and no cycle can run through them.
const RESOURCES =
  '^src/(accounts|alerts|api-keys|cli|dashboards|datasets|deletions|demo|detectors|evaluations|evaluators|health|idempotency|llm-connections|model-prices|projects|signals|sql|traces|web|widgets|workspaces)/';
const LOWER = [
  '^src/stores/',
  '^src/query/',
  '^src/auth/',
  '^src/secrets/',
  '^src/outbound/',
  '^src/(ids|edge-schemas|zod-issues|raw-json|raw-json-body|errors|config|answer-schemas)[.]ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'An import cycle (type-only imports included): move what both sides need into a module of its own.',
      from: { path: '^(src|web/src|workers)/' },
      to: { circular: true },
    },
    {
      name: 'lower-layer-imports-resource',
      severity: 'error',
      comment:
        'A lower layer imports a resource folder: move the shared thing down (src/ids.ts, src/edge-schemas.ts, ...) or invert the call.',
      from: { path: LOWER },
      to: { path: RESOURCES },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^web/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
