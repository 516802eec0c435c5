// Records which functions of a program run, for scripts/trace-hot-functions.py (LD_PRELOAD).
//
// Before the program's own code runs, this library writes an int3 over the first byte of every
// function listed in TRACE_FUNCS (one link-time address in hex per line, sorted). The first time
// a function runs, the trap handler puts its byte back, appends its address to TRACE_OUT and
// resumes it, so each function costs one trap. Only a process whose executable's path contains
// TRACE_EXE_NAME is traced (WebKit's processes inherit LD_PRELOAD). A tracing aid: it makes the
// program's code writable and must never be loaded into a program people use.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static uintptr_t text_lo, text_hi, load_bias;
static uintptr_t *entries; /* link-time addresses, sorted */
static unsigned char *saved;
static long count;
static int out = -1;

static void on_trap(int sig, siginfo_t *info, void *context) {
  (void)info;
  ucontext_t *uc = context;
  uintptr_t pc = uc->uc_mcontext.gregs[REG_RIP] - 1; /* int3 is one byte */
  long lo = 0, hi = count - 1, at = -1;
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    uintptr_t a = entries[mid] + load_bias;
    if (a == pc) { at = mid; break; }
    if (a < pc) lo = mid + 1; else hi = mid - 1;
  }
  if (at < 0) { /* not ours: let the default action happen */
    signal(sig, SIG_DFL);
    return;
  }
  /* Two threads can reach the same entry at once: the second finds the byte restored. */
  if (*(volatile unsigned char *)pc == 0xCC) *(volatile unsigned char *)pc = saved[at];
  uc->uc_mcontext.gregs[REG_RIP] = pc;
  char digits[20], line[24];
  int nd = 0, nl = 0;
  uintptr_t v = entries[at];
  do { digits[nd++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
  while (nd) line[nl++] = digits[--nd];
  line[nl++] = '\n';
  if (write(out, line, nl) < 0) { /* nothing to do in a signal handler */ }
}

__attribute__((constructor)) static void trace_init(void) {
  const char *want = getenv("TRACE_EXE_NAME"), *list = getenv("TRACE_FUNCS"), *dest = getenv("TRACE_OUT");
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (!want || !list || !dest || len <= 0) return;
  exe[len] = 0;
  if (!strstr(exe, want)) return;

  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return;
  char line[8192];
  int first = 1;
  while (fgets(line, sizeof line, maps)) {
    unsigned long a, b, off;
    char perm[8], path[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &a, &b, perm, &off, path) < 4 || strcmp(path, exe)) continue;
    if (first) { load_bias = a - off; first = 0; } /* the mapping at file offset 0 */
    if (!strcmp(perm, "r-xp")) { text_lo = a; text_hi = b; }
  }
  fclose(maps);
  if (!text_lo) return;

  FILE *f = fopen(list, "r");
  if (!f) return;
  long cap = 1 << 16;
  entries = malloc(cap * sizeof *entries);
  unsigned long x;
  while (fscanf(f, "%lx", &x) == 1) {
    if (count == cap) entries = realloc(entries, (cap *= 2) * sizeof *entries);
    entries[count++] = x;
  }
  fclose(f);
  saved = calloc(count ? count : 1, 1);
  out = open(dest, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out < 0) return;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_trap;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTRAP, &sa, 0);
  mprotect((void *)text_lo, text_hi - text_lo, PROT_READ | PROT_WRITE | PROT_EXEC);
  for (long i = 0; i < count; i++) {
    unsigned char *p = (unsigned char *)(entries[i] + load_bias);
    if ((uintptr_t)p >= text_lo && (uintptr_t)p < text_hi) {
      saved[i] = *p;
      *p = 0xCC;
    }
  }
}
