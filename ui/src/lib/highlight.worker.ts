// The highlight worker: whole files in, one HTML string per line out (see wholeHighlight.ts).
import { highlightText } from './wholeHighlight';

export type HighlightRequest = { id: number; text: string; language: string | null };
export type HighlightResponse = { id: number; lines: string[] } | { id: number; error: string };

self.onmessage = (event: MessageEvent<HighlightRequest>) => {
  const { id, text, language } = event.data;
  let response: HighlightResponse;
  try {
    response = { id, lines: highlightText(text, language) };
  } catch (err) {
    response = { id, error: err instanceof Error ? err.message : String(err) };
  }
  (self as unknown as Worker).postMessage(response);
};
