// The house rules of ../STYLE.md that a machine can check: the layers import
// in one direction (cli → use cases → drivers and the store → the model),
// nothing below cli writes to the console, no promise is left floating, and
// functions and files stay short enough to read whole. `npm run lint` runs it
// on src/ (and Prettier's check on all the code); `npm test` runs that first.
import tseslint from 'typescript-eslint';

/** A `no-restricted-imports` rule forbidding relative imports that match `groups`. */
const forbid = (message, ...groups) => ['error', { patterns: [{ group: groups, message }] }];

export default tseslint.config(
  { ignores: ['build/**', 'dist/**', 'node_modules/**'] },
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'no-console': 'error',
      'no-restricted-imports': forbid('nothing imports cli: it is the top layer', '**/cli/**', '**/cli'),
      // Short enough to read whole: a longer function is split along its phases, a longer
      // file along its concerns; a file that is one table may say why at its top
      // (`/* eslint-disable max-lines -- <reason> */`).
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 500 }],
    },
  },
  // The cli alone speaks to the terminal.
  { files: ['src/cli/**/*.ts'], rules: { 'no-console': 'off', 'no-restricted-imports': 'off' } },
  // The infra-drivers and the management drivers import none of the rooms above them: the engine calls them through their contracts.
  {
    files: ['src/infra/**/*.ts', 'src/mgmt/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        'drivers never import lcm, the other use-case rooms or cli: they take the model and their own contracts',
        '**/lcm/**',
        '**/cli/**',
        '**/vim/**',
        '**/csar/**',
        '**/vnfd/**',
      ),
    },
  },
  // The store keeps the model; it knows none of the rooms that use it.
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        'the store imports the model and errors only',
        '**/cli/**',
        '**/lcm/**',
        '**/vim/**',
        '**/csar/**',
        '**/vnfd/**',
        '**/mgmt/**',
        '**/infra/**',
        '**/sandbox/**',
      ),
    },
  },
  // The model is the bottom layer: nothing of vnfm's.
  { files: ['src/model/**/*.ts'], rules: { 'no-restricted-imports': forbid("the model imports nothing of vnfm's", '../**') } },
  // The sandbox stands apart (it checks the drivers, so it shares none of their code): errors alone.
  { files: ['src/sandbox/*.ts'], rules: { 'no-restricted-imports': forbid("the sandbox imports nothing of vnfm's but errors", '../**', '!../errors.js') } },
  { files: ['src/sandbox/*/*.ts'], rules: { 'no-restricted-imports': forbid("the sandbox imports nothing of vnfm's but errors", '../../**', '!../../errors.js') } },
);
