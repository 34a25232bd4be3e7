// The house rules of ../STYLE.md that a machine can check: the layers import
// in one direction (cli → use cases → drivers and the store → the model, every
// arrow of docs/architecture.md), no two files import each other at run time
// (scripts/lint/import-cycles.mjs), nothing below cli writes to the console, no promise is left floating, and
// functions and files stay short enough to read whole. `npm run lint` runs it
// on src/ (and Prettier's check on all the code); `npm test` runs that first.
import tseslint from 'typescript-eslint';
import importCycles from './scripts/lint/import-cycles.mjs';

/** A `no-restricted-imports` rule forbidding relative imports that match `groups`. */
const forbid = (message, ...groups) => ['error', { patterns: [{ group: groups, message }] }];

/** src/'s rooms (folders) and the leaf modules beside them. */
const TOP_ROOMS = ['cli', 'lcm', 'csar', 'vnfd', 'vim', 'mgmt', 'infra', 'store', 'crypto', 'sandbox', 'model', 'assets'];

/**
 * What each room may import besides itself and the leaves at the top of
 * src/ (errors, input-file, yaml, clock, cache-files): the arrows of
 * docs/architecture.md. `forbidden` narrows a room it may import to the
 * modules it may use (within infra, one driver does not import another).
 */
const ROOMS = {
  lcm: { may: ['csar', 'vnfd', 'vim', 'mgmt', 'infra', 'store', 'model'], message: 'imports csar, vnfd, vim, mgmt, infra, store and model' },
  csar: {
    may: ['vnfd', 'store', 'infra', 'model'],
    forbidden: ['**/infra/*', '!**/infra/helm', '**/infra/*/**', '!**/infra/helm/**'],
    message: 'imports vnfd, store, infra/helm (chart rendering) and model',
  },
  vim: {
    may: ['infra', 'store', 'crypto', 'model'],
    forbidden: ['**/infra/helm/**', '**/infra/helm', '**/infra/driver.js'],
    message: 'imports infra/kubernetes and infra/openstack (reachability checks), store, crypto and model',
  },
  vnfd: { may: ['model'], message: 'imports model alone' },
  mgmt: {
    may: ['infra', 'model'],
    forbidden: ['**/infra/openstack/**', '**/infra/openstack', '**/infra/helm/*', '!**/infra/helm/process-end.js'],
    message: 'imports infra/kubernetes, infra/driver.ts (the contract), infra/helm/process-end.ts and model: drivers are reached through their contracts',
  },
  infra: { may: ['model'], message: "imports model: the drivers' contract (infra/driver.ts) is theirs" },
  'infra/kubernetes': {
    may: ['model'],
    forbidden: ['../helm/**', '../helm', '../openstack/**', '../openstack'],
    message: 'imports infra/driver.ts and model: no other driver',
  },
  'infra/openstack': { may: ['model'], forbidden: ['../helm/**', '../helm', '../kubernetes/**', '../kubernetes'], message: 'imports infra/driver.ts and model: no other driver' },
  'infra/helm': { may: ['model'], forbidden: ['../openstack/**', '../openstack'], message: 'imports infra/driver.ts, infra/kubernetes and model' },
  store: { may: ['model'], message: 'imports the model and errors only' },
  crypto: { may: [], message: "imports nothing of vnfm's but errors" },
  sandbox: { may: [], message: "stands apart (it checks the drivers, so it shares none of their code): it imports nothing of vnfm's but errors" },
  model: { may: [], forbidden: ['../**'], message: "is the bottom layer: it imports nothing of vnfm's" },
  assets: { may: [], message: "imports nothing of vnfm's but errors" },
};

export default tseslint.config(
  { ignores: ['build/**', 'dist/**', 'node_modules/**'] },
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, vnfm: importCycles },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise is never a condition, and never handed where nothing awaits it: the store answers in promises.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      'no-console': 'error',
      'vnfm/no-import-cycle': 'error',
      'no-restricted-imports': forbid('nothing imports cli: it is the top layer', '**/cli/**', '**/cli'),
      // Short enough to read whole: a longer function is split along its phases, a longer
      // file along its concerns; a file that is one table may say why at its top
      // (`/* eslint-disable max-lines -- <reason> */`).
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 500 }],
    },
  },
  // The cli alone speaks to the terminal, and imports every room.
  { files: ['src/cli/**/*.ts'], rules: { 'no-console': 'off', 'no-restricted-imports': 'off' } },
  // Every other room imports only the rooms below it (docs/architecture.md draws the arrows).
  ...Object.entries(ROOMS).map(([room, { may, forbidden = [], message }]) => {
    const others = TOP_ROOMS.filter((other) => other !== room.split('/')[0] && !may.includes(other));
    return {
      files: [`src/${room}/**/*.ts`],
      rules: {
        'no-restricted-imports': forbid(`${room} ${message}`, ...others.flatMap((other) => [`**/${other}/**`, `**/${other}`]), ...forbidden),
        // The same arrows for `import()`, which no-restricted-imports does not see.
        'no-restricted-syntax': ['error', { selector: `ImportExpression[source.value=/^(\\.\\.\\/)+(${others.join('|')})(\\/|$)/]`, message: `${room} ${message}` }],
      },
    };
  }),
  // The sandbox's files import errors alone of the leaves.
  { files: ['src/sandbox/*.ts'], rules: { 'no-restricted-imports': forbid("the sandbox imports nothing of vnfm's but errors", '../**', '!../errors.js') } },
  { files: ['src/sandbox/*/*.ts'], rules: { 'no-restricted-imports': forbid("the sandbox imports nothing of vnfm's but errors", '../../**', '!../../errors.js') } },
  // The leaves at the top of src/ import nothing of vnfm's but each other.
  { files: ['src/*.ts'], rules: { 'no-restricted-imports': forbid('the leaf modules at the top of src/ import only each other', '../**', './*/**') } },
);
