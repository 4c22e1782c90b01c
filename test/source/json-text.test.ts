import { describe, expect, it } from 'vitest';
import { jsonText } from '../../src/source/json-text.ts';

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const parseBoth = (body: Buffer) => ({ fast: JSON.parse(jsonText(body)), plain: JSON.parse(body.toString('utf8')) });

describe('jsonText', () => {
  it('reads every character the body holds as UTF-8 would, in ASCII text', () => {
    const page = {
      Data: [
        { FirstName: 'Łukasz', LastName: 'Ngọc', City: 'Saint-Jérôme', Note: 'ambulance 🚑 — 東京', Plain: 'x' },
        { Clé: 'Zoë', Quoted: 'a \\ "b" \u00e9\\', Empty: '' },
      ],
      HasMoreResults: false,
    };
    for (const body of [utf8(JSON.stringify(page)), utf8(JSON.stringify(page, null, 2)), utf8('{"a":"plain ascii"}')]) {
      const text = jsonText(body);
      expect(text).toMatch(/^[\x00-\x7f]*$/);
      const { fast, plain } = parseBoth(body);
      expect(fast).toEqual(plain);
    }
    expect(JSON.parse(jsonText(utf8(JSON.stringify(page))))).toEqual(page);
  });

  it('reads bytes that are not UTF-8 as the UTF-8 decoder does (replacement characters)', () => {
    const body = Buffer.concat([
      utf8('{"a":"x'),
      Buffer.from([0xff, 0xe2, 0x82]),
      utf8('y","b":"'),
      Buffer.from([0xc3]),
      utf8('"}'),
    ]);
    const { fast, plain } = parseBoth(body);
    expect(fast).toEqual(plain);
    expect(fast.a).toBe('x\ufffd\ufffdy');
  });

  it('keeps invalid JSON invalid', () => {
    for (const bad of ['{"a":"\\é"}', '{"a":1 é}', '\ufeff{"a":1}', '{"a":"\\\\\\Ł"}']) {
      expect(() => JSON.parse(utf8(bad).toString('utf8')), bad).toThrow(SyntaxError);
      expect(() => JSON.parse(jsonText(utf8(bad))), bad).toThrow(SyntaxError);
    }
    expect(JSON.parse(jsonText(utf8('{"a":"\\\\é"}')))).toEqual({ a: '\\é' });
  });
});
