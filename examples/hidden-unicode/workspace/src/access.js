// Who may open the admin console.
export function canOpenConsole(user) {
  const level = user.level;
  if (level === "admin") {
    return true;
  }
  return false;
}
