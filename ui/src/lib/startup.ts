// Start-up marks of the page (ms since its navigation started, `performance.now()`), sent to
// the shell once the queue has been painted for the first time: the shell writes them, with its
// own phases, where `RESOLVE_DESK_STARTUP_MARK` says (scripts/bench-startup.py reads them).
const marks: Array<[string, number]> = [];
let sent = false;

export function mark(name: string) {
  if (!sent) marks.push([name, performance.now()]);
}

/** After the next paint (the frame after the next animation frame), once. */
export function afterNextPaint(send: (marks: Array<[string, number]>, origin: number) => void) {
  if (sent || typeof requestAnimationFrame === 'undefined') return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      if (sent) return;
      mark('painted');
      sent = true;
      send(marks.slice(), performance.timeOrigin);
    }),
  );
}
