// ESLint's flat config. The rules and their tools live in tools/lint/ (its own install; see there).
export { default } from './tools/lint/eslint.config.js';
