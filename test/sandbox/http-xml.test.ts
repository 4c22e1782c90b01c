import { describe, expect, it } from 'vitest';
import { toXml } from '../../src/sandbox/xml.ts';
import { parseXml, xmlValue } from './http-helpers.ts';

describe('the XML format', () => {
  it('escapes markup characters, keeps CRLF line breaks and drops characters XML cannot carry', () => {
    const doc = toXml({ Comments: 'a & b < c > d "e" \'f\'\r\nline two\u0001', Name: 'Zoë 名' });
    expect(doc).not.toContain('\u0001');
    expect(xmlValue(parseXml(doc))).toEqual({ Comments: 'a & b < c > d "e" \'f\'\r\nline two', Name: 'Zoë 名' });
  });

  it('writes arrays as repeated Item elements, nulls as xsi:nil, and makes keys into XML names', () => {
    const doc = toXml({
      Checkboxes: ['x', 'y'],
      One: [1],
      None: [],
      Assignee: null,
      'Shift Name': 'Night',
      '1st': true,
    });
    const root = parseXml(doc);
    expect(root.attrs['xmlns:xsi']).toBe('http://www.w3.org/2001/XMLSchema-instance');
    expect(root.children.find((c) => c.name === 'Checkboxes')!.children.map((c) => c.name)).toEqual(['Item', 'Item']);
    expect(xmlValue(root)).toEqual({
      Checkboxes: ['x', 'y'],
      One: ['1'],
      None: '',
      Assignee: null,
      Shift_Name: 'Night',
      _1st: 'true',
    });
  });

  it('writes a top-level boolean and a null document', () => {
    expect(xmlValue(parseXml(toXml(true)))).toBe('true');
    expect(xmlValue(parseXml(toXml(null)))).toBeNull();
  });
});
