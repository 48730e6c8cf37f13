import { describe, expect, it } from 'vitest';
import { trailingWord } from './search-typing.ts';

describe('trailingWord', () => {
  it('splits off the plain word a search text ends with', () => {
    expect(trailingWord('stag')).toEqual({ before: '', word: 'stag' });
    expect(trailingWord('staging datab')).toEqual({ before: 'staging ', word: 'datab' });
    expect(trailingWord('"roll back" plan rev2')).toEqual({ before: '"roll back" plan ', word: 'rev2' });
    expect(trailingWord('Überprüfung straß')).toEqual({ before: 'Überprüfung ', word: 'straß' });
  });

  it('leaves every word whole when the text ends otherwise', () => {
    for (const q of ['staging ', 'staging.', '"roll back"', '"roll bac', 'deploy -stag', 'deploy or', 'x86_64', 'o\'brie', '', 'st', 'deploy st']) {
      expect(trailingWord(q), q).toBeNull();
    }
  });
});
