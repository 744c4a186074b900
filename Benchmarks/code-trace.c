// Which functions of a program run: every function entry listed gets a breakpoint, and the first
// time a thread reaches one, it is recorded and the original byte put back, so each function
// costs one trap and then runs at full speed. Benchmarks/code-order.py uses it to find the code a
// server under load runs.
//
//     cc -O2 -o code-trace Benchmarks/code-trace.c
//     ./code-trace ENTRIES HITS -- PROGRAM [ARGUMENTS…]
//
// ENTRIES holds one hexadecimal address per line: function entries as the program's ELF file
// gives them (position-independent: relative to where the file is loaded). When the program has
// exited, HITS holds those of them that ran. SIGINT and SIGTERM sent to code-trace go to the
// program. Linux on x86-64 only.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    uint64_t address;  // in the running process
    uint8_t original;
    uint8_t state;     // 0 not armed, 1 armed, 2 ran
} Entry;

static Entry *entries;
static size_t count;
static volatile sig_atomic_t forward;
static pid_t child;

static void on_signal(int sig) { forward = sig; }

static int compare(const void *a, const void *b) {
    uint64_t x = ((const Entry *)a)->address, y = ((const Entry *)b)->address;
    return x < y ? -1 : x > y;
}

static Entry *find(uint64_t address) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (entries[mid].address == address) return &entries[mid];
        if (entries[mid].address < address) low = mid + 1; else high = mid;
    }
    return NULL;
}

// Where the program's file is mapped from offset 0.
static uint64_t load_base(pid_t pid) {
    char path[64], exe[4096], line[8192];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n < 0) { perror("readlink"); exit(1); }
    exe[n] = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) { perror("maps"); exit(1); }
    uint64_t base = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long start, offset;
        char file[4096] = "";
        if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &offset, file) >= 2 && offset == 0 && strcmp(file, exe) == 0) {
            base = start;
            break;
        }
    }
    fclose(maps);
    if (!base) { fprintf(stderr, "code-trace: %s is not mapped\n", exe); exit(1); }
    return base;
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: code-trace ENTRIES HITS -- PROGRAM [ARGUMENTS...]\n");
        return 2;
    }
    FILE *list = fopen(argv[1], "r");
    if (!list) { perror(argv[1]); return 1; }
    size_t capacity = 1 << 16;
    entries = malloc(capacity * sizeof *entries);
    unsigned long long address;
    while (fscanf(list, "%llx", &address) == 1) {
        if (count == capacity) entries = realloc(entries, (capacity *= 2) * sizeof *entries);
        entries[count++] = (Entry){ .address = address };
    }
    fclose(list);

    child = fork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[4], argv + 4);
        perror(argv[4]);
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status)) { fprintf(stderr, "code-trace: the program did not start\n"); return 1; }
    ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL);

    uint64_t base = load_base(child);
    for (size_t i = 0; i < count; i++) entries[i].address += base;
    qsort(entries, count, sizeof *entries, compare);
    char mem_path[64];
    snprintf(mem_path, sizeof mem_path, "/proc/%d/mem", child);
    int mem = open(mem_path, O_RDWR);
    if (mem < 0) { perror(mem_path); return 1; }
    size_t armed = 0;
    const uint8_t trap = 0xCC;
    for (size_t i = 0; i < count; i++) {
        if (i && entries[i].address == entries[i - 1].address) continue;  // aliases
        if (pread(mem, &entries[i].original, 1, (off_t)entries[i].address) != 1 ||
            pwrite(mem, &trap, 1, (off_t)entries[i].address) != 1) continue;
        entries[i].state = 1;
        armed++;
    }
    fprintf(stderr, "code-trace: %zu of %zu entries armed\n", armed, count);

    struct sigaction action = { .sa_handler = on_signal };
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    ptrace(PTRACE_CONT, child, 0, 0);

    size_t ran = 0;
    for (;;) {
        if (forward) { kill(child, forward); forward = 0; }
        pid_t pid = waitpid(-1, &status, __WALL);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;  // no threads left
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            if (pid == child) break;
            continue;
        }
        if (!WIFSTOPPED(status)) continue;
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP && (status >> 16) == 0) {
            struct user_regs_struct regs;
            ptrace(PTRACE_GETREGS, pid, 0, &regs);
            Entry *entry = find(regs.rip - 1);
            if (entry && entry->state) {
                if (entry->state == 1) {
                    pwrite(mem, &entry->original, 1, (off_t)entry->address);
                    entry->state = 2;
                    ran++;
                }
                // Another thread may have trapped here before the byte went back: it runs the
                // instruction again either way.
                regs.rip -= 1;
                ptrace(PTRACE_SETREGS, pid, 0, &regs);
                sig = 0;
            }
        } else if (sig == SIGTRAP || sig == SIGSTOP) {
            sig = 0;  // clone events and a new thread's first stop
        }
        ptrace(PTRACE_CONT, pid, 0, sig);
    }

    FILE *out = fopen(argv[2], "w");
    if (!out) { perror(argv[2]); return 1; }
    for (size_t i = 0; i < count; i++)
        if (entries[i].state == 2) fprintf(out, "%llx\n", (unsigned long long)(entries[i].address - base));
    fclose(out);
    fprintf(stderr, "code-trace: %zu functions ran\n", ran);
    return 0;
}
