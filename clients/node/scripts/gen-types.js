#!/usr/bin/env node
'use strict';
/*
 * Writes index.d.ts, the package's TypeScript declarations: the command and event
 * types generated from the protocol's JSON Schemas (schema/command.schema.json and
 * schema/event.schema.json at the repository's root), followed by the hand-written
 * declarations of the client (scripts/client.d.ts.in).
 *
 *     node scripts/gen-types.js            # writes index.d.ts
 *     node scripts/gen-types.js --check    # exit 1 if index.d.ts differs from the schemas
 *     node scripts/gen-types.js --stdout   # prints it
 *
 * Plain Node, no dependencies. It reads only what the protocol's schemas use (const,
 * enum, type, $ref, anyOf, items, and a $ref narrowed by `not: {const}`) and stops with
 * an error on anything else, so a schema change it cannot express is noticed here
 * rather than turned into a wrong type. test/types.test.js checks that the committed
 * index.d.ts is what this script writes now.
 */
const fs = require('node:fs');
const path = require('node:path');

const PACKAGE = path.join(__dirname, '..');
const SCHEMAS = path.join(PACKAGE, '..', '..', 'schema');
const TEMPLATE = path.join(__dirname, 'client.d.ts.in');
const OUTPUT = path.join(PACKAGE, 'index.d.ts');

/** `join` -> `Join`, `timeout_ms` -> `TimeoutMs`. */
function pascal(name) {
  return name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

/** A TypeScript literal for a JSON value of an enum or const. */
function literal(value) {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
  throw new Error(`gen-types: cannot write ${JSON.stringify(value)} as a literal type`);
}

/** A JSDoc comment, wrapped, at `indent`; '' for no text. */
function doc(text, indent = '') {
  if (!text) return '';
  const words = String(text).replace(/\*\//g, '*\\/').split(/\s+/).filter(Boolean);
  const lines = [];
  let line = '';
  for (const word of words) {
    if (line && indent.length + 3 + line.length + 1 + word.length > 92) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  if (lines.length === 1 && indent.length + 7 + lines[0].length <= 92) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}\n`).join('')}${indent} */\n`;
}

/**
 * `head type;` on one line, or when that is too long and the type a union, one member
 * a line.
 */
function wrapped(head, type, indent) {
  const line = `${head} ${type};`;
  if (line.length <= 92 || !type.includes(' | ')) return `${line}\n`;
  return `${head}\n${type.split(' | ').map((member) => `${indent}  | ${member}`).join('\n')};\n`;
}

/** Keys of a property's schema that change nothing about its TypeScript type. */
const ANNOTATIONS = new Set(['description', '$comment', 'title', 'minimum', 'maximum', 'minLength',
  'maxLength', 'maxUtf8Bytes', 'minItems', 'uniqueItems', 'contains', 'pattern', 'not']);
/** Keys that make a type. */
const TYPING = ['const', 'enum', '$ref', 'anyOf', 'type', 'items'];

class Generator {
  constructor() {
    this.aliases = new Map(); // name -> { text, description }
  }

  /** The TypeScript type of `schema`, a part of `root` (whose $defs its $refs name). */
  type(schema, root, where) {
    if (schema === null || typeof schema !== 'object') {
      throw new Error(`gen-types: ${where}: ${JSON.stringify(schema)} is not a schema object`);
    }
    for (const key of Object.keys(schema)) {
      if (!ANNOTATIONS.has(key) && !TYPING.includes(key)) {
        throw new Error(`gen-types: ${where}: the keyword ${key} is not understood`);
      }
    }
    if (!TYPING.some((key) => key in schema)) {
      throw new Error(`gen-types: ${where}: a schema with no type, enum, const or $ref`);
    }
    if ('const' in schema) return literal(schema.const);
    if (schema.enum) return schema.enum.map(literal).join(' | ');
    if (schema.$ref) {
      const base = this.ref(schema.$ref, root, where);
      // A $ref narrowed by `not: {const: X}` (the event schema's not_typing).
      if (schema.not && 'const' in schema.not && Object.keys(schema.not).length === 1) {
        return `Exclude<${base}, ${literal(schema.not.const)}>`;
      }
      return base;
    }
    if (schema.anyOf) {
      const members = [];
      for (const [i, part] of schema.anyOf.entries()) {
        const t = this.type(part, root, `${where}.anyOf[${i}]`);
        if (!members.includes(t)) members.push(t);
      }
      return members.join(' | ');
    }
    switch (schema.type) {
      case 'string': return 'string';
      case 'integer':
      case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'array': {
        if (!schema.items) return 'unknown[]';
        const item = this.type(schema.items, root, `${where}.items`);
        return /[ |&]/.test(item) ? `(${item})[]` : `${item}[]`;
      }
      default:
        throw new Error(`gen-types: ${where}: type ${JSON.stringify(schema.type)} is not understood`);
    }
  }

  /**
   * The type a `#/$defs/NAME` stands for: a named alias when NAME is an enum (one
   * `Activity` for both schemas), else the definition's type written out.
   */
  ref(ref, root, where) {
    const match = /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(ref);
    if (!match) throw new Error(`gen-types: ${where}: $ref ${ref} is not understood`);
    const def = root.$defs[match[1]];
    if (!def) throw new Error(`gen-types: ${where}: $ref ${ref} names no definition`);
    if (def.enum) {
      const name = pascal(match[1]);
      const known = this.aliases.get(name);
      const text = def.enum.map(literal).join(' | ');
      if (known && known.text !== text) {
        throw new Error(`gen-types: ${name} differs between the schemas: ${known.text} / ${text}`);
      }
      if (!known) this.aliases.set(name, { text, description: def.description });
      return name;
    }
    return this.type(def, root, ref);
  }

  /** The description of a property: its own, else that of the definition it names. */
  static describe(schema, root) {
    if (schema.description) return schema.description;
    const match = schema.$ref && /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(schema.$ref);
    return match && root.$defs[match[1]] ? root.$defs[match[1]].description : undefined;
  }

  /**
   * One interface per kind (`join`, `indicator`, ...): the definitions the root's
   * `allOf` picks by `if: {properties: {KEY: {const: KIND}}}`, in that order.
   */
  kinds(root, key) {
    const kinds = [];
    for (const [i, branch] of (root.allOf || []).entries()) {
      const kind = branch.if && branch.if.properties && branch.if.properties[key] && branch.if.properties[key].const;
      const ref = branch.then && branch.then.$ref;
      const match = ref && /^#\/\$defs\/([A-Za-z0-9_]+)$/.exec(ref);
      if (typeof kind !== 'string' || !match) {
        throw new Error(`gen-types: allOf[${i}] of ${root.$id} does not pick a definition by ${key}`);
      }
      kinds.push({ kind, def: root.$defs[match[1]], defName: match[1] });
    }
    const listed = root.properties[key].enum;
    const found = kinds.map((k) => k.kind);
    if (JSON.stringify([...listed].sort()) !== JSON.stringify([...found].sort())) {
      throw new Error(`gen-types: ${root.$id} lists ${listed.join(', ')} but defines ${found.join(', ')}`);
    }
    return kinds;
  }

  /** `export interface NameSuffix { ... }` for one kind. */
  interface(root, key, { kind, def, defName }, suffix) {
    const name = `${pascal(kind)}${suffix}`;
    const props = { ...(def.properties || {}) };
    const required = new Set(def.required || []);
    // What the root gives every kind (a command's id and at) and the kind leaves out.
    for (const [prop, schema] of Object.entries(root.properties || {})) {
      if (!(prop in props)) {
        props[prop] = schema;
        if ((root.required || []).includes(prop)) required.add(prop);
      }
    }
    const order = [key, ...Object.keys(props).filter((p) => p !== key)];
    let body = '';
    for (const prop of order) {
      const schema = props[prop];
      const where = `${root.$id}#/$defs/${defName}/properties/${prop}`;
      const type = prop === key ? literal(kind) : this.type(schema, root, where);
      const optional = required.has(prop) || prop === key ? '' : '?';
      body += doc(prop === key ? undefined : Generator.describe(schema, root), '  ');
      body += wrapped(`  ${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(prop) ? prop : literal(prop)}${optional}:`, type, '  ');
    }
    return { name, text: `${doc(def.description)}export interface ${name} {\n${body}}\n` };
  }

  /** The generated part of index.d.ts. */
  generate(commandSchema, eventSchema) {
    const sections = [];
    for (const [schema, key, suffix, union, title] of [
      [commandSchema, 'cmd', 'Command', 'TypingdCommand', 'Commands (one input line)'],
      [eventSchema, 'event', 'Event', 'TypingdEvent', 'Events (one output line)'],
    ]) {
      const kinds = this.kinds(schema, key);
      const interfaces = kinds.map((k) => this.interface(schema, key, k, suffix));
      let text = `// ${title}: ${schema.$id} ${'-'.repeat(Math.max(3, 80 - title.length - schema.$id.length))}\n\n`;
      text += interfaces.map((i) => i.text).join('\n');
      text += `\n${doc(schema.description)}export type ${union} =\n`;
      text += interfaces.map((i) => `  | ${i.name}`).join('\n') + ';\n';
      text += `\n/** The kinds of ${suffix.toLowerCase()}s: every value of \`${key}\`. */\nexport type ${suffix}Name = ${union}['${key}'];\n`;
      text += `\n/** Each ${suffix.toLowerCase()}'s interface by its \`${key}\`. */\nexport interface ${suffix}Map {\n`;
      text += interfaces.map((i, n) => `  ${kinds[n].kind}: ${i.name};\n`).join('') + '}\n';
      sections.push(text);
    }
    let aliases = '// Enumerations (both schemas) ' + '-'.repeat(58) + '\n\n';
    for (const [name, { text, description }] of [...this.aliases].sort(([a], [b]) => a.localeCompare(b))) {
      aliases += `${doc(description)}${wrapped(`export type ${name} =`, text, '')}\n`;
    }
    return `${aliases}${sections.join('\n')}`;
  }
}

/** The whole of index.d.ts, from the schemas in `schemaDir` and the template. */
function generate({ schemaDir = SCHEMAS, template = TEMPLATE } = {}) {
  const read = (file) => JSON.parse(fs.readFileSync(path.join(schemaDir, file), 'utf8'));
  const generated = new Generator().generate(read('command.schema.json'), read('event.schema.json'));
  const header = [
    '// The typingd npm package\'s TypeScript declarations.',
    '//',
    '// GENERATED by scripts/gen-types.js from schema/command.schema.json and',
    '// schema/event.schema.json (at the root of the typingd repository) and',
    '// scripts/client.d.ts.in: do not edit, run `npm run gen-types` instead.',
    '',
    '',
  ].join('\n');
  return `${header}${generated}\n${fs.readFileSync(template, 'utf8')}`;
}

module.exports = { generate, OUTPUT };

if (require.main === module) {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => !['--check', '--stdout'].includes(a));
  if (unknown.length > 0) {
    process.stderr.write(`usage: node scripts/gen-types.js [--check | --stdout]\n`);
    process.exit(64);
  }
  const text = generate();
  if (args.includes('--stdout')) {
    process.stdout.write(text);
  } else if (args.includes('--check')) {
    const current = fs.existsSync(OUTPUT) ? fs.readFileSync(OUTPUT, 'utf8') : '';
    if (current !== text) {
      process.stderr.write('index.d.ts is not what scripts/gen-types.js generates: run `npm run gen-types`\n');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(OUTPUT, text);
  }
}
