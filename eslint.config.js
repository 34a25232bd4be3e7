// The house rules of ../STYLE.md that a machine can check: the layers import
// in one direction (cli → use cases → drivers and the store → the model, every
// arrow of docs/architecture.md), no two files import each other at run time
// (scripts/lint/import-cycles.mjs), nothing below cli writes to the console, no promise is left floating, and
// functions and files stay short enough to read whole. `npm run lint` runs it
// on src/ and on the workspace packages' sources (packages/*/src: the Kubernetes
// API sandbox, a room of its own that imports nothing of vnfm's and that vnfm
// imports by its name), and Prettier's check on all the code; `npm test` runs
// that first.
import tseslint from 'typescript-eslint';
import importCycles from './scripts/lint/import-cycles.mjs';

/** A `no-restricted-imports` rule forbidding imports that match `groups`. */
const forbid = (message, ...groups) => ['error', { patterns: [{ group: groups, message }] }];

/** vnfm reaches a workspace package by its name, never by a path into packages/. */
const NO_PACKAGE_PATHS = ['**/packages/**'];

/** src/'s rooms (folders) and the leaf modules beside them. */
const TOP_ROOMS = ['cli', 'lcm', 'csar', 'vnfd', 'vim', 'mgmt', 'infra', 'store', 'crypto', 'model', 'assets'];

/** The Kubernetes API sandbox, a workspace package: only the cli (the `sandbox` and `demo` commands) imports it, by this name. */
const SANDBOX_PACKAGE = '@vnfm/kube-sandbox';

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
  model: { may: [], forbidden: ['../**'], message: "is the bottom layer: it imports nothing of vnfm's" },
  assets: { may: [], message: "imports nothing of vnfm's but errors" },
};

/** The house rules every source file follows, vnfm's and the workspace packages'; `root` is where its import loops are looked for. */
const houseRules = (files, root) => ({
  files,
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
    'vnfm/no-import-cycle': ['error', { root }],
    // Short enough to read whole: a longer function is split along its phases, a longer
    // file along its concerns; a file that is one table may say why at its top
    // (`/* eslint-disable max-lines -- <reason> */`).
    'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    'max-lines': ['error', { max: 500 }],
  },
});

export default tseslint.config(
  { ignores: ['build/**', 'dist/**', 'node_modules/**'] },
  houseRules(['src/**/*.ts'], 'src'),
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': forbid('nothing imports cli: it is the top layer', '**/cli/**', '**/cli', ...NO_PACKAGE_PATHS) } },
  // The cli alone speaks to the terminal, and imports every room and the sandbox package.
  {
    files: ['src/cli/**/*.ts'],
    rules: { 'no-console': 'off', 'no-restricted-imports': forbid('vnfm imports a workspace package by its name (`@vnfm/kube-sandbox`)', ...NO_PACKAGE_PATHS) },
  },
  // Every other room imports only the rooms below it (docs/architecture.md draws the arrows).
  ...Object.entries(ROOMS).map(([room, { may, forbidden = [], message }]) => {
    const others = TOP_ROOMS.filter((other) => other !== room.split('/')[0] && !may.includes(other));
    return {
      files: [`src/${room}/**/*.ts`],
      rules: {
        'no-restricted-imports': forbid(
          `${room} ${message}; only the cli imports the sandbox package`,
          ...others.flatMap((other) => [`**/${other}/**`, `**/${other}`]),
          ...forbidden,
          SANDBOX_PACKAGE,
          `${SANDBOX_PACKAGE}/**`,
          ...NO_PACKAGE_PATHS,
        ),
        // The same arrows for `import()`, which no-restricted-imports does not see.
        'no-restricted-syntax': [
          'error',
          {
            selector: `ImportExpression[source.value=/^((\\.\\.\\/)+(${others.join('|')})(\\/|$)|${SANDBOX_PACKAGE.replace('/', '\\/')}(\\/|$))/]`,
            message: `${room} ${message}; only the cli imports the sandbox package`,
          },
        ],
      },
    };
  }),
  // The leaves at the top of src/ import nothing of vnfm's but each other.
  {
    files: ['src/*.ts'],
    rules: { 'no-restricted-imports': forbid('the leaf modules at the top of src/ import only each other', '../**', './*/**', SANDBOX_PACKAGE, `${SANDBOX_PACKAGE}/**`) },
  },
  // The Kubernetes API sandbox (packages/kube-sandbox): a room of its own that stands apart (it checks
  // vnfm's drivers, so it shares none of their code): nothing outside its src/, and nothing of vnfm's.
  houseRules(['packages/kube-sandbox/src/**/*.ts'], 'packages/kube-sandbox/src'),
  {
    files: ['packages/kube-sandbox/src/*.ts'],
    rules: { 'no-restricted-imports': forbid("the sandbox package imports nothing outside its src/: nothing of vnfm's", '../**', 'vnfm', 'vnfm/**') },
  },
  {
    files: ['packages/kube-sandbox/src/*/*.ts'],
    rules: { 'no-restricted-imports': forbid("the sandbox package imports nothing outside its src/: nothing of vnfm's", '../../**', 'vnfm', 'vnfm/**') },
  },
);
