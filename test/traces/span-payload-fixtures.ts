/** Pairs of a span's [input, output] at the edges of how `spans` stores them (src/traces/span-payload.ts). */
export const EDGES: [string | null, string | null][] = [
  [null, null],
  [null, 'only an output'],
  ['only an input', null],
  ['', null],
  [null, ''],
  ['', ''],
  ['', 'output after an empty input'],
  ['input before an empty output', ''],
  ['Zürich → 東京 🚀', '🚀 край'],
  ['é', 'é'],
  ['{"role":"user","content":"same text"}', '{"role":"user","content":"same text"}'],
  ['\n\t"quoted" \\ back\\slash', '\u0001\u007f'],
];
