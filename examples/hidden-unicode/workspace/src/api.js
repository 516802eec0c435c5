import { canOpenConsole } from "./access.js";

// The admin API answers admins only.
export function handle(request, user) {
  const level = user.level;
  if (level === "admin") {
    return request.run();
  }
  return { status: 403 };
}
