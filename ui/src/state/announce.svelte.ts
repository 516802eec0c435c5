// What a screen reader hears when something changes outside the person's focus (the queue):
// one polite live region (`Announcer.svelte` in App) reads `text`. Saying the same words
// twice in a row still changes the region (a counter alternates a trailing invisible space).
export class Announcer {
  text = $state('');
  private flip = false;

  say(words: string) {
    this.flip = !this.flip;
    this.text = this.flip ? words : `${words}\u00a0`;
  }
}

/** "1 action pending" / "3 actions pending" / "Nothing pending". */
export function pendingWords(n: number): string {
  if (n === 0) return 'Nothing pending.';
  return `${n} action${n === 1 ? '' : 's'} pending.`;
}
