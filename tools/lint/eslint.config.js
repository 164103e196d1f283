// The lint rules of the repository (the root eslint.config.js loads this file). They live here with
// their own install because typescript-eslint needs the TypeScript compiler's JavaScript API, which
// the app's TypeScript 7 (the native compiler) does not ship; see README.md in this folder.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'web/dist/**',
      'coverage/**',
      'data/**',
      '.test-data/**',
      'bench/data/**',
      'bench/scratch/**',
      'test-output/**',
      'test/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  { files: ['web/src/**'], languageOptions: { globals: { ...globals.browser } } },
  {
    rules: {
      // The house marks a deliberately unused binding with a leading underscore (a handler's `_reply`,
      // a field left out of a copy with `{ secret: _secret, ...rest }`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Expected output is written as it prints: two spaces between CLI columns read better than ` {2}`.
      'no-regex-spaces': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      // Tests and benches read untyped JSON answers and poke at internals; `any` there is the point.
      '@typescript-eslint/no-explicit-any': 'off',
      // They feed numbers past 2^53 and control characters on purpose: what the code does with them is
      // what they check.
      'no-loss-of-precision': 'off',
      'no-control-regex': 'off',
    },
  },
);
