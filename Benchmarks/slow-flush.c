// Makes a fast disk flush like a slow virtual one, for `countersign-bench loop` on SQLite:
// loaded with LD_PRELOAD, fsync and fdatasync do their real work, and then every
// SLOW_FLUSH_EVERY-th call (default 50) waits SLOW_FLUSH_MS more (default 105: the longest
// single fdatasync seen on one virtual disk). Nothing else changes.
//
//   cc -O2 -shared -fPIC -o slow-flush.so Benchmarks/slow-flush.c -ldl
//   LD_PRELOAD=$PWD/slow-flush.so .build/release/countersign-bench loop --loops 3000 --concurrency 64
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static atomic_long calls;

static long setting(const char *name, long fallback) {
    const char *value = getenv(name);
    return value ? atol(value) : fallback;
}

static void maybe_wait(void) {
    static long every = -1, milliseconds;
    if (every < 0) {
        milliseconds = setting("SLOW_FLUSH_MS", 105);
        every = setting("SLOW_FLUSH_EVERY", 50);
    }
    if (every > 0 && (atomic_fetch_add(&calls, 1) + 1) % every == 0) {
        struct timespec wait = { milliseconds / 1000, (milliseconds % 1000) * 1000000L };
        nanosleep(&wait, NULL);
    }
}

int fdatasync(int descriptor) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int result = real(descriptor);
    maybe_wait();
    return result;
}

int fsync(int descriptor) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int result = real(descriptor);
    maybe_wait();
    return result;
}
