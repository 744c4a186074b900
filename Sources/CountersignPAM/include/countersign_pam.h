/*
 * pam_countersign: the PAM module that asks Countersign for a phone's approval of an SSH, sudo,
 * su or console login. The module is the small C side of the PAM ABI: it runs the Countersign
 * helper (`countersign pam authenticate`) in a child process, relays what the helper says through
 * the PAM conversation, and returns the helper's verdict. Everything that speaks to the network
 * runs in the helper; the module parses only the helper's lines, with the function below, which
 * is fuzzed (Fuzz/FuzzPAMLines).
 */
#ifndef COUNTERSIGN_PAM_H
#define COUNTERSIGN_PAM_H

#include <stddef.h>

/* The longest line the helper may send, without its newline. */
#define CS_MAXIMUM_LINE 1024

enum cs_line_kind {
    CS_LINE_INVALID = 0,
    /* Ask the user, echoing what they type (PAM_PROMPT_ECHO_ON); the answer goes back as a line. */
    CS_LINE_PROMPT,
    /* Tell the user (PAM_TEXT_INFO). */
    CS_LINE_INFO,
    /* Tell the user of a failure (PAM_ERROR_MSG). */
    CS_LINE_ERROR,
    /* Write to the system log (pam_syslog), never to the user. */
    CS_LINE_LOG,
    /* The verdict; the last line the helper sends. */
    CS_LINE_RESULT,
};

enum cs_result {
    CS_RESULT_NONE = 0,
    /* Approved, or let in by the configuration (a skipped user, fail-safe). */
    CS_RESULT_SUCCESS,
    /* Denied, expired, not enrolled: PAM_AUTH_ERR. */
    CS_RESULT_DENY,
    /* Countersign could not be reached and the fail mode is secure: PAM_AUTHINFO_UNAVAIL. */
    CS_RESULT_UNAVAILABLE,
    /* Countersign does not know the user: PAM_USER_UNKNOWN. */
    CS_RESULT_USER_UNKNOWN,
};

struct cs_line {
    enum cs_line_kind kind;
    enum cs_result result;
    /* The text after the keyword (PROMPT, INFO, ERROR, LOG), within the parsed buffer. */
    const char *text;
    size_t length;
};

/*
 * Reads one line (without its newline) of `length` bytes. A line is a keyword, one space and
 * text: `PROMPT <text>`, `INFO <text>`, `ERROR <text>`, `LOG <text>`, or `RESULT <verdict>` with
 * a verdict of SUCCESS, DENY, UNAVAILABLE or USER_UNKNOWN. The text is 1 to CS_MAXIMUM_LINE
 * bytes of UTF-8 without control characters (nothing the helper says may reach a terminal as an
 * escape sequence). Anything else is CS_LINE_INVALID, which the module treats as a denial.
 * Returns the kind, also stored in `*out`.
 */
enum cs_line_kind cs_parse_line(const char *line, size_t length, struct cs_line *out);

#endif
