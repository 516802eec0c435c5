export const logger = {
  debug: (...args: unknown[]) => undefined,
  info: (...args: unknown[]) => undefined,
};
