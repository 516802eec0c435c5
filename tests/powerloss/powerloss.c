/*
 * A power cut for the durability tests, as an LD_PRELOAD library loaded into the apply probe.
 *
 * It passes every file-system call through and keeps, in order, every operation not yet
 * made durable by the POSIX rules (the strictest a file system may be):
 *   - the data of a regular file written since its last fsync/fdatasync (write, pwrite,
 *     writev, ftruncate, open with O_TRUNC): its bytes as they were at that sync are kept;
 *   - a name created (open with O_CREAT, mkdir, link, symlink), renamed, or removed
 *     (unlink, rmdir) in a folder since that folder's last fsync; a rename between two
 *     folders needs both synced. A name removed or replaced keeps its file in the stash
 *     folder (a hard link), so it can come back.
 * On a "power cut" it undoes every operation that is not durable, newest first, and
 * _exits(86) without running anything else: what is left on disk is what a machine that
 * lost power at that instant would find after a reboot.
 *
 * Environment:
 *   POWERLOSS_STASH      a folder on the workspace's file system (required)
 *   POWERLOSS_REPORT     a file the report is written to (at the cut, or at exit)
 *   POWERLOSS_CUT_AFTER  cut when this many operations have been done (0 = before the first)
 * A line "POWERCUT" read on standard input (the probe's pause point) cuts too.
 * Report lines: "ops N" (operations seen), and at a cut "cut N", "undone U", "kept K",
 * "error <what>" for any undo that failed (the test fails on any).
 *
 * Built by tests/build.rs with the cc crate; Linux and glibc only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- the real functions ---- */

#define REAL(ret, name, ...)                                                                    \
    static ret (*real_##name)(__VA_ARGS__);                                                     \
    static void load_##name(void) {                                                            \
        if (!real_##name) real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);          \
    }

REAL(int, open, const char *, int, ...)
REAL(int, open64, const char *, int, ...)
REAL(int, openat, int, const char *, int, ...)
REAL(int, openat64, int, const char *, int, ...)
REAL(ssize_t, write, int, const void *, size_t)
REAL(ssize_t, pwrite, int, const void *, size_t, off_t)
REAL(ssize_t, pwrite64, int, const void *, size_t, off_t)
REAL(ssize_t, writev, int, const struct iovec *, int)
REAL(int, ftruncate, int, off_t)
REAL(int, ftruncate64, int, off_t)
REAL(int, fsync, int)
REAL(int, fdatasync, int)
REAL(void, sync, void)
REAL(int, syncfs, int)
REAL(int, rename, const char *, const char *)
REAL(int, renameat, int, const char *, int, const char *)
REAL(int, renameat2, int, const char *, int, const char *, unsigned int)
REAL(int, unlink, const char *)
REAL(int, unlinkat, int, const char *, int)
REAL(int, mkdir, const char *, mode_t)
REAL(int, mkdirat, int, const char *, mode_t)
REAL(int, rmdir, const char *)
REAL(int, linkat, int, const char *, int, const char *, int)
REAL(int, link, const char *, const char *)
REAL(int, symlinkat, const char *, int, const char *)
REAL(int, symlink, const char *, const char *)
REAL(ssize_t, read, int, void *, size_t)

/* ---- state ---- */

enum kind { K_DATA, K_CREATE, K_MKDIR, K_RENAME, K_UNLINK, K_RMDIR };

struct entry {
    enum kind kind;
    int dir1, dir2;          /* folder handles (from the folder table) */
    char name1[256], name2[256];
    int synced1, synced2;    /* the folder was synced since */
    char stash[64];          /* the file a removal or a replacing rename keeps */
    int snap;                /* K_DATA: index of the snapshot */
    mode_t mode;             /* K_RMDIR */
};

struct snapshot {
    dev_t dev;
    ino_t ino;
    int fd;                  /* read-write handle on the file */
    char *data;
    size_t len;
    int live;                /* not yet synced */
};

struct folder {
    dev_t dev;
    ino_t ino;
    int fd;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *log_;
static size_t log_len, log_cap;
static struct snapshot *snaps;
static size_t snaps_len, snaps_cap;
static struct folder folders[512];
static size_t folders_len;
static long ops;
static long cut_after = -1;
static int stash_fd = -1;
static long stash_n;
static int ready;
static int in_cut;

static void init(void) {
    if (ready) return;
    ready = 1;
    load_open(); load_open64(); load_openat(); load_openat64(); load_write(); load_pwrite();
    load_pwrite64(); load_writev(); load_ftruncate(); load_ftruncate64(); load_fsync();
    load_fdatasync(); load_sync(); load_syncfs(); load_rename(); load_renameat();
    load_renameat2(); load_unlink(); load_unlinkat(); load_mkdir(); load_mkdirat();
    load_rmdir(); load_linkat(); load_link(); load_symlinkat(); load_symlink(); load_read();
    const char *c = getenv("POWERLOSS_CUT_AFTER");
    if (c && *c) cut_after = atol(c);
    const char *s = getenv("POWERLOSS_STASH");
    if (s && *s) stash_fd = real_openat(AT_FDCWD, s, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void report(const char *fmt, ...) {
    const char *path = getenv("POWERLOSS_REPORT");
    if (!path || !*path) return;
    int fd = real_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2) n = sizeof buf - 2;
    buf[n++] = '\n';
    real_write(fd, buf, n);
    close(fd);
}

static struct entry *push(enum kind kind) {
    if (log_len == log_cap) {
        log_cap = log_cap ? log_cap * 2 : 256;
        log_ = realloc(log_, log_cap * sizeof *log_);
        if (!log_) abort();
    }
    struct entry *e = &log_[log_len++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->dir1 = e->dir2 = -1;
    e->snap = -1;
    return e;
}

/* The folder table's handle for `fd` (a folder), keyed by device and inode. */
static int folder_of_fd(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return -1;
    for (size_t i = 0; i < folders_len; i++)
        if (folders[i].dev == st.st_dev && folders[i].ino == st.st_ino) return folders[i].fd;
    if (folders_len == sizeof folders / sizeof *folders) abort();
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dup < 0) abort();
    folders[folders_len++] = (struct folder){st.st_dev, st.st_ino, dup};
    return dup;
}

/* The folder holding `path` (relative to `dirfd`) and its last component. */
static int parent_of(int dirfd, const char *path, char *base, size_t base_len) {
    const char *slash = strrchr(path, '/');
    int fd;
    if (!slash) {
        fd = dirfd == AT_FDCWD ? real_openat(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
        snprintf(base, base_len, "%s", path);
    } else {
        char dir[4096];
        size_t n = slash - path;
        if (n == 0) n = 1; /* "/name" */
        if (n >= sizeof dir) return -1;
        memcpy(dir, path, n);
        dir[n] = 0;
        fd = real_openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(base, base_len, "%s", slash + 1);
    }
    if (fd < 0) return -1;
    int f = folder_of_fd(fd);
    close(fd);
    return f;
}

static int exists_at(int dir, const char *name) {
    struct stat st;
    return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Keeps the file at dir/name in the stash (a hard link); its stash name in `out`. */
static int keep(int dir, const char *name, char *out, size_t len) {
    snprintf(out, len, "kept-%d-%ld", (int)getpid(), stash_n++);
    return real_linkat(dir, name, stash_fd, out, 0);
}

static void power_cut(void);

/* Called before every operation: counts it, and cuts the power when its number is due. */
static void op(void) {
    if (in_cut) return;
    if (cut_after >= 0 && ops == cut_after) power_cut();
    ops++;
}

/* ---- data ---- */

static int snapshot_of(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    for (size_t i = 0; i < snaps_len; i++)
        if (snaps[i].dev == st.st_dev && snaps[i].ino == st.st_ino && snaps[i].live) return (int)i;
    /* First change since the last sync: keep the bytes as they are now. */
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int rw = real_openat(AT_FDCWD, proc, O_RDWR | O_CLOEXEC);
    if (rw < 0) return -1;
    char *data = malloc(st.st_size ? st.st_size : 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(rw, data + got, st.st_size - got, got);
        if (n <= 0) break;
        got += n;
    }
    if (snaps_len == snaps_cap) {
        snaps_cap = snaps_cap ? snaps_cap * 2 : 128;
        snaps = realloc(snaps, snaps_cap * sizeof *snaps);
        if (!snaps) abort();
    }
    snaps[snaps_len] = (struct snapshot){st.st_dev, st.st_ino, rw, data, got, 1};
    struct entry *e = push(K_DATA);
    e->snap = (int)snaps_len;
    return (int)snaps_len++;
}

static void before_data_change(int fd) {
    struct stat st;
    if (in_cut || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    pthread_mutex_lock(&lock);
    op();
    snapshot_of(fd);
    pthread_mutex_unlock(&lock);
}

static void synced(int fd, int data_only) {
    (void)data_only;
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    pthread_mutex_lock(&lock);
    if (S_ISREG(st.st_mode)) {
        for (size_t i = 0; i < snaps_len; i++)
            if (snaps[i].dev == st.st_dev && snaps[i].ino == st.st_ino && snaps[i].live) {
                snaps[i].live = 0;
                close(snaps[i].fd);
                free(snaps[i].data);
                snaps[i].data = NULL;
            }
    } else if (S_ISDIR(st.st_mode)) {
        int f = folder_of_fd(fd);
        for (size_t i = 0; i < log_len; i++) {
            if (log_[i].dir1 == f) log_[i].synced1 = 1;
            if (log_[i].dir2 == f) log_[i].synced2 = 1;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the cut ---- */

static void remove_tree(int dir, const char *name) {
    int fd = real_openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            if (real_unlinkat(fd, de->d_name, 0) != 0) remove_tree(fd, de->d_name);
        }
        if (d) closedir(d);
    }
    if (real_unlinkat(dir, name, AT_REMOVEDIR) != 0) report("error rmdir %s: %s", name, strerror(errno));
}

static int durable(const struct entry *e) {
    switch (e->kind) {
    case K_DATA: return !snaps[e->snap].live;
    case K_RENAME: return e->synced1 && e->synced2;
    default: return e->synced1;
    }
}

static void power_cut(void) {
    in_cut = 1;
    long undone = 0, kept = 0;
    for (size_t k = log_len; k-- > 0;) {
        struct entry *e = &log_[k];
        if (durable(e)) {
            kept++;
            continue;
        }
        undone++;
        int r = 0;
        switch (e->kind) {
        case K_DATA: {
            struct snapshot *s = &snaps[e->snap];
            r = real_ftruncate(s->fd, 0);
            size_t put = 0;
            while (r == 0 && put < s->len) {
                ssize_t n = real_pwrite(s->fd, s->data + put, s->len - put, put);
                if (n <= 0) { r = -1; break; }
                put += n;
            }
            break;
        }
        case K_CREATE: r = real_unlinkat(e->dir1, e->name1, 0); break;
        case K_MKDIR: remove_tree(e->dir1, e->name1); break;
        case K_RENAME:
            r = real_renameat(e->dir2, e->name2, e->dir1, e->name1);
            if (r == 0 && e->stash[0]) r = real_renameat(stash_fd, e->stash, e->dir2, e->name2);
            break;
        case K_UNLINK: r = real_renameat(stash_fd, e->stash, e->dir1, e->name1); break;
        case K_RMDIR: r = real_mkdirat(e->dir1, e->name1, e->mode); break;
        }
        if (r != 0) report("error undo %d %s -> %s: %s", (int)e->kind, e->name1, e->name2, strerror(errno));
    }
    report("cut %ld", ops);
    report("undone %ld", undone);
    report("kept %ld", kept);
    _exit(86);
}

__attribute__((destructor)) static void at_exit(void) {
    if (!in_cut) report("ops %ld", ops);
}

/* ---- names ---- */

static void created(int dirfd, const char *path) {
    char base[256];
    int dir = parent_of(dirfd, path, base, sizeof base);
    if (dir < 0) return;
    struct entry *e = push(K_CREATE);
    e->dir1 = dir;
    snprintf(e->name1, sizeof e->name1, "%s", base);
}

static int do_open(int (*real)(int, const char *, int, ...), int dirfd, const char *path, int flags, mode_t mode) {
    init();
    if (in_cut || !(flags & (O_CREAT | O_TRUNC)) || stash_fd < 0) return real(dirfd, path, flags, mode);
    pthread_mutex_lock(&lock);
    op();
    int existed = 1;
    if (flags & O_CREAT) existed = fstatat(dirfd, path, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) == 0;
    int truncating = existed && (flags & O_TRUNC);
    if (truncating) {
        int fd0 = real(dirfd, path, O_RDONLY | O_CLOEXEC, 0);
        if (fd0 >= 0) {
            snapshot_of(fd0);
            close(fd0);
        }
    }
    int fd = real(dirfd, path, flags, mode);
    if (fd >= 0 && !existed) created(dirfd, path);
    pthread_mutex_unlock(&lock);
    return fd;
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

static int openat_shim(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return real_openat(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(openat_shim, AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(openat_shim, AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(openat_shim, dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(openat_shim, dirfd, path, flags, mode);
}
int creat(const char *path, mode_t mode) { return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

ssize_t write(int fd, const void *buf, size_t n) {
    init();
    before_data_change(fd);
    return real_write(fd, buf, n);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    init();
    before_data_change(fd);
    return real_pwrite(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    init();
    before_data_change(fd);
    return real_pwrite64(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    init();
    before_data_change(fd);
    return real_writev(fd, iov, cnt);
}
int ftruncate(int fd, off_t len) {
    init();
    before_data_change(fd);
    return real_ftruncate(fd, len);
}
int ftruncate64(int fd, off_t len) {
    init();
    before_data_change(fd);
    return real_ftruncate64(fd, len);
}

int fsync(int fd) {
    init();
    if (!in_cut) {
        pthread_mutex_lock(&lock);
        op();
        pthread_mutex_unlock(&lock);
    }
    int r = real_fsync(fd);
    if (r == 0) synced(fd, 0);
    return r;
}
int fdatasync(int fd) {
    init();
    if (!in_cut) {
        pthread_mutex_lock(&lock);
        op();
        pthread_mutex_unlock(&lock);
    }
    int r = real_fdatasync(fd);
    if (r == 0) synced(fd, 1);
    return r;
}
static void all_durable(void) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < snaps_len; i++) snaps[i].live = 0;
    for (size_t i = 0; i < log_len; i++) log_[i].synced1 = log_[i].synced2 = 1;
    pthread_mutex_unlock(&lock);
}
void sync(void) {
    init();
    real_sync();
    all_durable();
}
int syncfs(int fd) {
    init();
    int r = real_syncfs(fd);
    if (r == 0) all_durable();
    return r;
}

static int do_rename(int olddir, const char *oldpath, int newdir, const char *newpath, unsigned flags) {
    init();
    if (in_cut || stash_fd < 0) return real_renameat2(olddir, oldpath, newdir, newpath, flags);
    if (flags & RENAME_EXCHANGE) {
        report("error RENAME_EXCHANGE is not modelled");
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&lock);
    op();
    char b1[256], b2[256], stash[64] = "";
    int d1 = parent_of(olddir, oldpath, b1, sizeof b1);
    int d2 = parent_of(newdir, newpath, b2, sizeof b2);
    if (!(flags & RENAME_NOREPLACE) && d2 >= 0 && exists_at(d2, b2)) keep(d2, b2, stash, sizeof stash);
    int r = flags ? real_renameat2(olddir, oldpath, newdir, newpath, flags) : real_renameat(olddir, oldpath, newdir, newpath);
    if (r == 0 && d1 >= 0 && d2 >= 0) {
        struct entry *e = push(K_RENAME);
        e->dir1 = d1;
        e->dir2 = d2;
        snprintf(e->name1, sizeof e->name1, "%s", b1);
        snprintf(e->name2, sizeof e->name2, "%s", b2);
        snprintf(e->stash, sizeof e->stash, "%s", stash);
    } else if (stash[0]) {
        real_unlinkat(stash_fd, stash, 0);
    }
    pthread_mutex_unlock(&lock);
    return r;
}
int rename(const char *a, const char *b) { return do_rename(AT_FDCWD, a, AT_FDCWD, b, 0); }
int renameat(int da, const char *a, int db, const char *b) { return do_rename(da, a, db, b, 0); }
int renameat2(int da, const char *a, int db, const char *b, unsigned int flags) { return do_rename(da, a, db, b, flags); }

static int do_unlink(int dirfd, const char *path, int flags) {
    init();
    if (in_cut || stash_fd < 0) return real_unlinkat(dirfd, path, flags);
    pthread_mutex_lock(&lock);
    op();
    char base[256], stash[64] = "";
    int dir = parent_of(dirfd, path, base, sizeof base);
    struct stat st;
    int have = fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (have && !(flags & AT_REMOVEDIR)) keep(dirfd, path, stash, sizeof stash);
    int r = real_unlinkat(dirfd, path, flags);
    if (r == 0 && dir >= 0) {
        struct entry *e = push((flags & AT_REMOVEDIR) ? K_RMDIR : K_UNLINK);
        e->dir1 = dir;
        e->mode = have ? (st.st_mode & 07777) : 0755;
        snprintf(e->name1, sizeof e->name1, "%s", base);
        snprintf(e->stash, sizeof e->stash, "%s", stash);
    } else if (stash[0]) {
        real_unlinkat(stash_fd, stash, 0);
    }
    pthread_mutex_unlock(&lock);
    return r;
}
int unlink(const char *p) { return do_unlink(AT_FDCWD, p, 0); }
int unlinkat(int d, const char *p, int flags) { return do_unlink(d, p, flags); }
int rmdir(const char *p) { return do_unlink(AT_FDCWD, p, AT_REMOVEDIR); }

static int do_mkdir(int dirfd, const char *path, mode_t mode) {
    init();
    if (in_cut || stash_fd < 0) return real_mkdirat(dirfd, path, mode);
    pthread_mutex_lock(&lock);
    op();
    int r = real_mkdirat(dirfd, path, mode);
    if (r == 0) {
        char base[256];
        int dir = parent_of(dirfd, path, base, sizeof base);
        if (dir >= 0) {
            struct entry *e = push(K_MKDIR);
            e->dir1 = dir;
            snprintf(e->name1, sizeof e->name1, "%s", base);
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}
int mkdir(const char *p, mode_t m) { return do_mkdir(AT_FDCWD, p, m); }
int mkdirat(int d, const char *p, mode_t m) { return do_mkdir(d, p, m); }

int linkat(int da, const char *a, int db, const char *b, int flags) {
    init();
    if (in_cut || stash_fd < 0) return real_linkat(da, a, db, b, flags);
    pthread_mutex_lock(&lock);
    op();
    int r = real_linkat(da, a, db, b, flags);
    if (r == 0) created(db, b);
    pthread_mutex_unlock(&lock);
    return r;
}
int link(const char *a, const char *b) { return linkat(AT_FDCWD, a, AT_FDCWD, b, 0); }
int symlinkat(const char *target, int d, const char *p) {
    init();
    if (in_cut || stash_fd < 0) return real_symlinkat(target, d, p);
    pthread_mutex_lock(&lock);
    op();
    int r = real_symlinkat(target, d, p);
    if (r == 0) created(d, p);
    pthread_mutex_unlock(&lock);
    return r;
}
int symlink(const char *target, const char *p) { return symlinkat(target, AT_FDCWD, p); }

ssize_t read(int fd, void *buf, size_t n) {
    init();
    ssize_t r = real_read(fd, buf, n);
    if (fd == 0 && r >= 8 && !memcmp(buf, "POWERCUT", 8) && !in_cut) {
        pthread_mutex_lock(&lock);
        power_cut();
    }
    return r;
}
