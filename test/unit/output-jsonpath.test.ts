/** kubectl's JSONPath subset and Tacker's attribute filter, as the printer evaluates them. */
import { describe, expect, it } from 'vitest';
import { renderJsonPath } from '../../src/cli/output/jsonpath.js';
import { matchesTackerFilter, parseTackerFilter } from '../../src/cli/output/tacker-filter.js';

const doc = {
  kind: 'List',
  items: [
    { id: 'a', name: 'web', state: 'INSTANTIATED', replicas: 3, tags: ['x', 'y'], meta: { 'app/name': 'web', ok: true } },
    { id: 'b', name: 'db', state: 'NOT_INSTANTIATED', replicas: 1, tags: [], meta: { ok: false } },
    { id: 'c', name: 'cache', state: 'INSTANTIATED', replicas: 2, tags: ['y'], meta: {} },
  ],
};

describe('renderJsonPath', () => {
  it.each([
    ['{.kind}', 'List'],
    ['{.items[*].id}', 'a b c'],
    ['{.items[0].name}', 'web'],
    ['{.items[-1].name}', 'cache'],
    ['{.items[0,2].id}', 'a c'],
    ['{.items[1:].id}', 'b c'],
    ['{.items[:2].id}', 'a b'],
    ['{.items[::2].id}', 'a c'],
    ['{.items[?(@.state=="INSTANTIATED")].name}', 'web cache'],
    ["{.items[?(@.state!='INSTANTIATED')].name}", 'db'],
    ['{.items[?(@.replicas>1)].id}', 'a c'],
    ['{.items[?(@.replicas<=2)].id}', 'b c'],
    ['{.items[?(@.meta.ok)].id}', 'a'],
    ['{.items[?(@.meta.ok==false)].id}', 'b'],
    ['{..name}', 'web db cache'],
    ['{.items[0].tags}', '["x","y"]'],
    ['{.items[0].meta}', '{"app/name":"web","ok":true}'],
    ["{.items[0].meta['app/name']}", 'web'],
    ['{.items[0].missing}', ''],
    ['{range .items[*]}{.id}={.replicas}{"\\n"}{end}', 'a=3\nb=1\nc=2\n'],
    ['{range .items[?(@.replicas>=2)]}[{.name}] {end}', '[web] [cache] '],
    ['{range .items[*]}{range .tags[*]}{.}{end};{end}', 'xy;;y;'],
    ['{range .items[*]}{$.kind}/{.id} {end}', 'List/a List/b List/c '],
    ['ids: {.items[*].id}, kind {.kind}', 'ids: a b c, kind List'],
    ['{.items[0].id,.items[1].id}', 'a b'],
    ['{.items[0].id}{.items[1].id}', 'ab'],
  ])('%s', (template, expected) => expect(renderJsonPath(template, doc)).toBe(expected));

  it.each([
    ['{range .items[*]}{.id}', /\{range\} without \{end\}/],
    ['{.id}{end}', /\{end\} without \{range\}/],
    ['{.items[*].id', /unclosed "\{"/],
    ['{.items[?(@.name=~"w")]}', /regular expressions/],
    ['{.items[?(@.name==web)]}', /quote strings/],
    ['{}', /empty \{\}/],
    ['{.items[}', /unclosed "\["/],
  ])('refuses %s', (template, message) => expect(() => renderJsonPath(template, doc)).toThrow(message));
});

describe('Tacker attribute filter', () => {
  const match = (expr: string) =>
    doc.items
      .filter((i) => matchesTackerFilter(parseTackerFilter(expr), i))
      .map((i) => i.id)
      .join(' ');

  it.each([
    ['(eq,name,web)', 'a'],
    ['(neq,name,web)', 'b c'],
    ['(in,name,web,db)', 'a b'],
    ['(nin,name,web,db)', 'c'],
    ['(cont,name,a)', 'c'],
    ['(cont,name,e,d)', 'a b c'],
    ['(ncont,name,e)', 'b'],
    ['(gt,replicas,1)', 'a c'],
    ['(gte,replicas,2);(lt,replicas,3)', 'c'],
    ['(lte,replicas,1)', 'b'],
    ['(eq,tags,y)', 'a c'],
    ['(eq,meta/ok,true)', 'a'],
    ['(eq,meta/ok,false)', 'b'],
    ['(neq,meta/ok,true)', 'b'],
    ['(eq,meta/app~1name,web)', 'a'],
    ["(eq,name,'web')", 'a'],
    ['(eq,state,INSTANTIATED);(neq,name,web)', 'c'],
  ])('%s', (expr, expected) => expect(match(expr)).toBe(expected));

  it('reads quoted values with commas, parentheses and quotes', () => {
    expect(parseTackerFilter("(in,name,'a,b','c)d','it''s',plain)")).toEqual([{ op: 'in', attr: ['name'], values: ['a,b', 'c)d', "it's", 'plain'] }]);
    expect(parseTackerFilter('(eq,a~0b~ac~bd,x)')[0]!.attr).toEqual(['a~b,c@d']);
  });

  it.each([
    ['(like,name,web)', /unknown operator "like"/],
    ['(eq,name,a,b)', /"eq" takes one value/],
    ['(eq,name)', /needs a value|expected/],
    ['(eq,name,web', /expected "," or "\)"/],
    ['(eq,name,web);', /expected "\(OP,ATTRIBUTE/],
    ['(eq,name,web),(eq,id,a)', /expected ";"/],
    ['', /expected "\(OP,ATTRIBUTE/],
  ])('refuses %j', (expr, message) => expect(() => parseTackerFilter(expr)).toThrow(message));
});
