/*
 * pam_countersign.so: a phone's approval for SSH, sudo, su and console logins (docs/pam.md).
 *
 *     auth required pam_countersign.so config=/etc/countersign/pam.conf
 *
 * Arguments: config=PATH (default /etc/countersign/pam.conf), helper=PATH (the countersign
 * executable, default /usr/local/bin/countersign), timeout=SECONDS (the longest a login waits,
 * 10 to 600, default 120), sudo (the service runs commands as sudo does: its command line is
 * read and approved; automatic for the services sudo and sudo-i).
 *
 * Safe inside the host process: no thread is started; the helper is a child process that is
 * always reaped before the module returns (killed when it outlives the timeout); SIGPIPE is
 * ignored while the module writes to it; the helper gets an empty environment and no other
 * descriptor; nothing is written to disk; the helper's lines are parsed by cs_parse_line, which
 * is fuzzed, and anything it cannot read is a denial.
 */
#define _GNU_SOURCE
#include "countersign_pam.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define CS_DEFAULT_CONFIG "/etc/countersign/pam.conf"
#define CS_DEFAULT_HELPER "/usr/local/bin/countersign"
#define CS_DEFAULT_TIMEOUT 120
#define CS_COMMAND_LIMIT 2048

struct cs_options {
    const char *config;
    const char *helper;
    int timeout;
    int sudo;
};

static int cs_options(pam_handle_t *pamh, int argc, const char **argv, struct cs_options *options) {
    options->config = CS_DEFAULT_CONFIG;
    options->helper = CS_DEFAULT_HELPER;
    options->timeout = CS_DEFAULT_TIMEOUT;
    options->sudo = 0;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "config=", 7) == 0 && argv[i][7] == '/') {
            options->config = argv[i] + 7;
        } else if (strncmp(argv[i], "helper=", 7) == 0 && argv[i][7] == '/') {
            options->helper = argv[i] + 7;
        } else if (strcmp(argv[i], "sudo") == 0) {
            options->sudo = 1;
        } else if (strncmp(argv[i], "timeout=", 8) == 0) {
            char *end = NULL;
            long value = strtol(argv[i] + 8, &end, 10);
            if (end == argv[i] + 8 || *end != '\0' || value < 10 || value > 600) {
                pam_syslog(pamh, LOG_ERR, "timeout must be 10 to 600 seconds: %s", argv[i]);
                return -1;
            }
            options->timeout = (int)value;
        } else {
            pam_syslog(pamh, LOG_ERR, "unknown or malformed argument: %s (config= and helper= take absolute paths)", argv[i]);
            return -1;
        }
    }
    return 0;
}

static long long cs_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The command line of the process the module runs in (sudo's own), its arguments joined by
 * spaces, cut at CS_COMMAND_LIMIT; "" when it cannot be read. PAM has no item for it. */
static void cs_command_line(char *out, size_t size) {
    out[0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t total = 0;
    while ((size_t)total < size - 1) {
        ssize_t n = read(fd, out + total, size - 1 - (size_t)total);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += n;
    }
    close(fd);
    while (total > 0 && out[total - 1] == '\0') total--;
    for (ssize_t i = 0; i < total; i++) {
        if (out[i] == '\0') out[i] = ' ';
    }
    out[total] = '\0';
}

static int cs_converse(pam_handle_t *pamh, int style, const char *text, size_t length, char **answer) {
    char message[CS_MAXIMUM_LINE + 1];
    memcpy(message, text, length);
    message[length] = '\0';
    char *response = NULL;
    int status = pam_prompt(pamh, style, &response, "%s", message);
    if (answer != NULL) {
        *answer = response;
    } else if (response != NULL) {
        free(response);
    }
    return status;
}

/* Writes all of `data` to `fd`, SIGPIPE being ignored by the caller. */
static int cs_write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

/* Waits for the helper to end, killing it if it has not within `grace_ms`. The host (sudo,
 * sshd) may reap children itself in a SIGCHLD handler: ECHILD means it is gone. */
static void cs_reap(pid_t pid, int grace_ms) {
    long long deadline = cs_now_ms() + grace_ms;
    for (;;) {
        int status;
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno == ECHILD)) return;
        if (cs_now_ms() >= deadline) break;
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

static char *cs_argument(const char *name, const char *value) {
    char *argument = NULL;
    if (asprintf(&argument, "--%s=%s", name, value) < 0) return NULL;
    return argument;
}

/* Runs the helper and relays its lines; the verdict, or CS_RESULT_NONE when it gave none. */
static enum cs_result cs_run_helper(pam_handle_t *pamh, const struct cs_options *options, const char *user) {
    const void *item = NULL;
    const char *service = NULL, *rhost = NULL, *tty = NULL, *ruser = NULL;
    if (pam_get_item(pamh, PAM_SERVICE, &item) == PAM_SUCCESS) service = item;
    if (pam_get_item(pamh, PAM_RHOST, &item) == PAM_SUCCESS) rhost = item;
    if (pam_get_item(pamh, PAM_TTY, &item) == PAM_SUCCESS) tty = item;
    if (pam_get_item(pamh, PAM_RUSER, &item) == PAM_SUCCESS) ruser = item;
    char command[CS_COMMAND_LIMIT + 1];
    command[0] = '\0';
    int sudo = options->sudo || (service != NULL && (strcmp(service, "sudo") == 0 || strcmp(service, "sudo-i") == 0));
    if (sudo) cs_command_line(command, sizeof command);

    /* Arguments with an empty value are left out: the helper reads a missing one as empty. */
    char *arguments[14] = {NULL};
    int count = 0, failed = 0;
    const char *named[][2] = {
        {"config", options->config}, {"user", user}, {"service", service}, {"remote-host", rhost},
        {"tty", tty}, {"remote-user", ruser}, {"command", command}, {"kind", sudo ? "sudo" : "login"},
    };
    arguments[count++] = strdup(options->helper);
    arguments[count++] = strdup("pam");
    arguments[count++] = strdup("authenticate");
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (named[i][1] == NULL || named[i][1][0] == '\0') continue;
        arguments[count++] = cs_argument(named[i][0], named[i][1]);
    }
    if (asprintf(&arguments[count], "--timeout=%d", options->timeout) < 0) arguments[count] = NULL;
    count++;
    enum cs_result verdict = CS_RESULT_NONE;
    for (int i = 0; i < count; i++) {
        if (arguments[i] == NULL) failed = 1;
    }
    if (failed) goto free_arguments;

    int to_helper[2], from_helper[2];
    if (pipe2(to_helper, O_CLOEXEC) != 0) goto free_arguments;
    if (pipe2(from_helper, O_CLOEXEC) != 0) {
        close(to_helper[0]);
        close(to_helper[1]);
        goto free_arguments;
    }
    char *environment[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    pid_t pid = fork();
    if (pid < 0) {
        pam_syslog(pamh, LOG_ERR, "cannot start the helper: %s", strerror(errno));
        close(to_helper[0]);
        close(to_helper[1]);
        close(from_helper[0]);
        close(from_helper[1]);
        goto free_arguments;
    }
    if (pid == 0) {
        /* The child: only async-signal-safe calls until exec. */
        int null = open("/dev/null", O_WRONLY);
        if (dup2(to_helper[0], 0) < 0 || dup2(from_helper[1], 1) < 0 || (null >= 0 && dup2(null, 2) < 0)) _exit(127);
        /* dup2 onto the same descriptor keeps its close-on-exec flag: clear it either way. */
        if (fcntl(0, F_SETFD, 0) < 0 || fcntl(1, F_SETFD, 0) < 0) _exit(127);
        closefrom(3);
        signal(SIGPIPE, SIG_DFL);
        execve(options->helper, arguments, environment);
        _exit(127);
    }
    close(to_helper[0]);
    close(from_helper[1]);
    int input = to_helper[1], output = from_helper[0];

    char buffer[CS_MAXIMUM_LINE + 64];
    size_t filled = 0;
    long long deadline = cs_now_ms() + (long long)options->timeout * 1000;
    int done = 0;
    while (!done) {
        long long left = deadline - cs_now_ms();
        if (left <= 0) {
            pam_syslog(pamh, LOG_WARNING, "no verdict from the helper within %d seconds", options->timeout);
            break;
        }
        struct pollfd watch = {output, POLLIN, 0};
        int ready = poll(&watch, 1, left > 1000 ? 1000 : (int)left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) break;
        if (ready == 0) continue;
        ssize_t n = read(output, buffer + filled, sizeof buffer - filled);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        filled += (size_t)n;
        char *newline;
        while (!done && (newline = memchr(buffer, '\n', filled)) != NULL) {
            size_t length = (size_t)(newline - buffer);
            struct cs_line line;
            switch (cs_parse_line(buffer, length, &line)) {
            case CS_LINE_PROMPT: {
                char *answer = NULL;
                int status = cs_converse(pamh, PAM_PROMPT_ECHO_ON, line.text, line.length, &answer);
                if (answer != NULL) {
                    /* What was typed is not needed: the prompt waits for Enter. */
                    memset(answer, 0, strlen(answer));
                    free(answer);
                }
                if (status != PAM_SUCCESS || cs_write_all(input, "\n", 1) != 0) done = 1;
                break;
            }
            case CS_LINE_INFO:
                cs_converse(pamh, PAM_TEXT_INFO, line.text, line.length, NULL);
                break;
            case CS_LINE_ERROR:
                cs_converse(pamh, PAM_ERROR_MSG, line.text, line.length, NULL);
                break;
            case CS_LINE_LOG:
                pam_syslog(pamh, LOG_NOTICE, "%.*s", (int)line.length, line.text);
                break;
            case CS_LINE_RESULT:
                verdict = line.result;
                done = 1;
                break;
            case CS_LINE_INVALID:
                pam_syslog(pamh, LOG_ERR, "the helper sent a line that is not part of its protocol");
                done = 1;
                break;
            }
            size_t consumed = length + 1;
            memmove(buffer, buffer + consumed, filled - consumed);
            filled -= consumed;
        }
        if (!done && filled == sizeof buffer) {
            pam_syslog(pamh, LOG_ERR, "the helper sent a line longer than %d bytes", CS_MAXIMUM_LINE);
            break;
        }
    }
    close(input);
    close(output);
    cs_reap(pid, verdict == CS_RESULT_NONE ? 0 : 2000);
    memset(buffer, 0, sizeof buffer);

free_arguments:
    for (int i = 0; i < count; i++) free(arguments[i]);
    return verdict;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct cs_options options;
    if (cs_options(pamh, argc, argv, &options) != 0) return PAM_SERVICE_ERR;
    const char *user = NULL;
    int status = pam_get_user(pamh, &user, NULL);
    if (status != PAM_SUCCESS || user == NULL || user[0] == '\0') return PAM_USER_UNKNOWN;

    /* Writing to a helper that has gone must not kill the host with SIGPIPE. */
    struct sigaction ignore, previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &previous);
    enum cs_result verdict = cs_run_helper(pamh, &options, user);
    sigaction(SIGPIPE, &previous, NULL);

    switch (verdict) {
    case CS_RESULT_SUCCESS:
        return PAM_SUCCESS;
    case CS_RESULT_USER_UNKNOWN:
        return PAM_USER_UNKNOWN;
    case CS_RESULT_UNAVAILABLE:
        return PAM_AUTHINFO_UNAVAIL;
    case CS_RESULT_DENY:
        return PAM_AUTH_ERR;
    case CS_RESULT_NONE:
    default:
        pam_syslog(pamh, LOG_ERR, "no verdict from %s for %s; the login is refused", options.helper, user);
        return PAM_AUTH_ERR;
    }
}

/* sshd drops the session when setcred fails ("pam_setcred(): Permission denied"): the module
 * sets no credentials, and says so with success. The same for an account stack that lists it. */
PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}
