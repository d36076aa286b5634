'use strict';
/*
 * The TypeScript declarations: index.d.ts is what scripts/gen-types.js generates from
 * the protocol's JSON Schemas now (so it cannot drift from them), and, when tsc is
 * installed, test/usage.ts type-checks against it. tsc is not required: without it
 * that test is skipped, saying so, except under CI=true, where it fails.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { generate, OUTPUT } = require('../scripts/gen-types.js');

const PACKAGE = path.join(__dirname, '..');

/** The first line where two texts differ, for a readable failure. */
function firstDifference(a, b) {
  const left = a.split('\n');
  const right = b.split('\n');
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    if (left[i] !== right[i]) {
      return `line ${i + 1}:\n  committed: ${JSON.stringify(left[i])}\n  generated: ${JSON.stringify(right[i])}`;
    }
  }
  return 'none';
}

test('index.d.ts is what scripts/gen-types.js generates from schema/*.schema.json now', () => {
  const committed = fs.readFileSync(OUTPUT, 'utf8');
  const generated = generate();
  assert.ok(committed === generated,
    `index.d.ts is stale: run \`npm run gen-types\` in clients/node. First difference at ${firstDifference(committed, generated)}`);
  // The generated part has one interface per command and per event of the schemas.
  const schema = (name) => JSON.parse(fs.readFileSync(path.join(PACKAGE, '..', '..', 'schema', name), 'utf8'));
  const pascal = (name) => name[0].toUpperCase() + name.slice(1);
  for (const cmd of schema('command.schema.json').properties.cmd.enum) {
    assert.match(generated, new RegExp(`export interface ${pascal(cmd)}Command \\{\\n  cmd: '${cmd}';\\n`));
  }
  for (const event of schema('event.schema.json').properties.event.enum) {
    assert.match(generated, new RegExp(`export interface ${pascal(event)}Event \\{\\n  event: '${event}';\\n`));
  }
});

test('gen-types.js refuses a schema it cannot express instead of writing a wrong type', (t) => {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'gen-types-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const source = path.join(PACKAGE, '..', '..', 'schema');
  const events = JSON.parse(fs.readFileSync(path.join(source, 'event.schema.json'), 'utf8'));
  fs.copyFileSync(path.join(source, 'command.schema.json'), path.join(dir, 'command.schema.json'));
  // A field typed by a keyword the generator does not read.
  events.$defs.ok.properties.line = { oneOf: [{ type: 'integer' }, { type: 'string' }] };
  fs.writeFileSync(path.join(dir, 'event.schema.json'), JSON.stringify(events));
  assert.throws(() => generate({ schemaDir: dir }), /oneOf is not understood/);
  // A kind listed in the enum with no definition picked for it.
  events.$defs.ok.properties.line = { type: 'integer' };
  events.properties.event.enum.push('wave');
  fs.writeFileSync(path.join(dir, 'event.schema.json'), JSON.stringify(events));
  assert.throws(() => generate({ schemaDir: dir }), /lists .*wave.* but defines/);
});

/** tsc's path on PATH (`npm test` puts the package's node_modules/.bin there too), or null. */
function findTsc() {
  return (process.env.PATH || '').split(path.delimiter).filter(Boolean)
    .map((dir) => path.join(dir, 'tsc')).find((file) => fs.existsSync(file)) || null;
}

test('test/usage.ts type-checks against index.d.ts (when tsc is installed)', (t) => {
  const tsc = findTsc();
  if (!tsc) {
    // Skipped, saying so; under CI=true a check that cannot run fails.
    assert.ok(process.env.CI !== 'true', 'tsc is not installed (Debian: node-typescript), and CI=true');
    t.skip('tsc is not installed');
    return;
  }
  const result = spawnSync(tsc, ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'es2020',
    '--module', 'commonjs', '--moduleResolution', 'node', path.join('test', 'usage.ts')],
  { cwd: PACKAGE, encoding: 'utf8', timeout: 120000 });
  assert.equal(result.error, undefined);
  assert.equal(result.status, 0, `tsc (${tsc}) found errors:\n${result.stdout}${result.stderr}`);
});
