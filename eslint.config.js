import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // openapi.d.ts is generated (npm run dashboard:types), possibly while the lint runs (.ci/run).
  { ignores: ['node_modules/', 'data/', 'dist/', 'coverage/', '.tmp/', 'dashboard/src/api/openapi.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
);
