import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      '**/node_modules/',
      'coverage/',
      '.data/',
      '.tmp/',
      'bench/results/',
      'test/support/prisma/generated/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Node 20's V8 builds an object literal that opens with a spread on a slow path, about 1 µs and a new hidden
    // class per object: on the server's request path that was 3 % of a cached replay. Left out: the tools, which
    // run once, and the client, which imports only its own modules so that it runs outside Node.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/check/**', 'src/cli/**', 'src/testing/**', 'src/client/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ObjectExpression[properties.length>1] > SpreadElement:first-child',
          message:
            'A literal that opens with a spread is slow in Node 20: use extend(base, extra) from src/core/extend.ts, or put a property first.',
        },
      ],
    },
  },
  {
    // Stored text reaches the operator's terminal: the command line prints only through terminal-text.ts, which
    // shows control characters instead of letting the terminal act on them.
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/terminal-text.ts'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'stdout', message: 'Print with print() from src/cli/terminal-text.ts.' },
        { object: 'process', property: 'stderr', message: 'Print with printError() from src/cli/terminal-text.ts.' },
      ],
    },
  },
  {
    // The examples are models to copy: they use retrysafe as a user does, by its package name.
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*'],
              message: 'Import retrysafe by its package name (retrysafe, retrysafe/postgres, …).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
