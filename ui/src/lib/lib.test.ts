import { describe, expect, it } from 'vitest';
import { mergeEmphasis } from './highlight';
import { relativeAge } from './time';
import { isTypingTarget } from './shortcuts';
import { OutsideWorkspace, toWorkspaceRelative } from './paths';
import { pickedInside } from '../ipc/tauriBackend';
import { BackendError } from '../ipc/backend';

describe('mergeEmphasis', () => {
  it('wraps text ranges, closing marks around tags and counting entities as one unit', () => {
    const html = '<span class="k">a&amp;b</span>cd';
    expect(mergeEmphasis(html, [[1, 4]])).toBe('<span class="k">a<mark class="em">&amp;b</mark></span><mark class="em">c</mark>d');
    expect(mergeEmphasis('abc', [])).toBe('abc');
  });
});

describe('misc', () => {
  it('formats ages', () => {
    expect(relativeAge(0, 10_000)).toBe('just now');
    expect(relativeAge(0, 120_000)).toBe('2 min ago');
    expect(relativeAge(0, 3 * 3_600_000)).toBe('3 h ago');
  });
  it('knows typing targets', () => {
    expect(isTypingTarget(document.createElement('textarea'))).toBe(true);
    expect(isTypingTarget(document.createElement('select'))).toBe(true);
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    expect(isTypingTarget(cb)).toBe(false);
    expect(isTypingTarget(document.createElement('input'))).toBe(true);
    expect(isTypingTarget(document.createElement('button'))).toBe(false);
  });
});

describe('picked paths → workspace-relative', () => {
  it('makes paths relative to the root with /, and refuses one outside it, naming it', () => {
    expect(toWorkspaceRelative('/home/me/shop', '/home/me/shop/photos/a.JPG')).toBe('photos/a.JPG');
    expect(toWorkspaceRelative('/home/me/shop/', '/home/me/shop/photos/')).toBe('photos');
    expect(toWorkspaceRelative('/home/me/shop', '/home/me/shop')).toBe('.');
    expect(toWorkspaceRelative('C:\\work\\shop', 'C:\\work\\shop\\docs\\a.md')).toBe('docs/a.md');
    expect(() => toWorkspaceRelative('/home/me/shop', '/home/me/shopping/a')).toThrow('/home/me/shopping/a is outside the workspace /home/me/shop');
    expect(() => toWorkspaceRelative('/home/me/shop', '/home/me/shop/../etc/passwd')).toThrow(OutsideWorkspace);
  });

  it('the Tauri backend refuses the whole pick with pathOutsideWorkspace', () => {
    expect(pickedInside('/w', ['/w/a', '/w/b/c'])).toEqual(['a', 'b/c']);
    let err: unknown;
    try {
      pickedInside('/w', ['/w/a', '/tmp/x']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BackendError);
    expect((err as BackendError).code).toBe('pathOutsideWorkspace');
    expect((err as BackendError).message).toBe('/tmp/x is outside the workspace /w: pick a file or folder inside it.');
  });
});
