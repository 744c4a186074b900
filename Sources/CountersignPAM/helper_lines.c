/* The lines the Countersign helper sends the PAM module (countersign_pam.h). */
#include "countersign_pam.h"

#include <string.h>

/* Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF) with no C0 or C1 control character and no DEL. */
static int is_clean_text(const unsigned char *text, size_t length) {
    size_t i = 0;
    while (i < length) {
        unsigned char c = text[i];
        if (c < 0x20 || c == 0x7F) return 0;
        if (c < 0x80) { i += 1; continue; }
        unsigned long scalar;
        size_t count;
        if (c >= 0xC2 && c <= 0xDF) { scalar = c & 0x1F; count = 1; }
        else if (c >= 0xE0 && c <= 0xEF) { scalar = c & 0x0F; count = 2; }
        else if (c >= 0xF0 && c <= 0xF4) { scalar = c & 0x07; count = 3; }
        else return 0;
        if (length - i - 1 < count) return 0;
        for (size_t k = 1; k <= count; k++) {
            unsigned char next = text[i + k];
            if ((next & 0xC0) != 0x80) return 0;
            scalar = (scalar << 6) | (next & 0x3F);
        }
        if (count == 2 && (scalar < 0x800 || (scalar >= 0xD800 && scalar <= 0xDFFF))) return 0;
        if (count == 3 && (scalar < 0x10000 || scalar > 0x10FFFF)) return 0;
        /* C1 controls, U+0080 to U+009F. */
        if (scalar >= 0x80 && scalar <= 0x9F) return 0;
        i += count + 1;
    }
    return 1;
}

static int starts_with(const char *line, size_t length, const char *keyword, size_t *rest) {
    size_t n = strlen(keyword);
    if (length < n + 1 || memcmp(line, keyword, n) != 0 || line[n] != ' ') return 0;
    *rest = n + 1;
    return 1;
}

enum cs_line_kind cs_parse_line(const char *line, size_t length, struct cs_line *out) {
    static const struct { const char *keyword; enum cs_line_kind kind; } texts[] = {
        {"PROMPT", CS_LINE_PROMPT}, {"INFO", CS_LINE_INFO}, {"ERROR", CS_LINE_ERROR}, {"LOG", CS_LINE_LOG},
    };
    static const struct { const char *word; enum cs_result result; } verdicts[] = {
        {"SUCCESS", CS_RESULT_SUCCESS}, {"DENY", CS_RESULT_DENY}, {"UNAVAILABLE", CS_RESULT_UNAVAILABLE},
        {"USER_UNKNOWN", CS_RESULT_USER_UNKNOWN},
    };
    out->kind = CS_LINE_INVALID;
    out->result = CS_RESULT_NONE;
    out->text = NULL;
    out->length = 0;
    if (line == NULL || length == 0 || length > CS_MAXIMUM_LINE + 7) return CS_LINE_INVALID;
    size_t rest;
    if (starts_with(line, length, "RESULT", &rest)) {
        for (size_t v = 0; v < sizeof verdicts / sizeof verdicts[0]; v++) {
            size_t n = strlen(verdicts[v].word);
            if (length - rest == n && memcmp(line + rest, verdicts[v].word, n) == 0) {
                out->kind = CS_LINE_RESULT;
                out->result = verdicts[v].result;
                return CS_LINE_RESULT;
            }
        }
        return CS_LINE_INVALID;
    }
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        if (!starts_with(line, length, texts[t].keyword, &rest)) continue;
        size_t text_length = length - rest;
        if (text_length == 0 || text_length > CS_MAXIMUM_LINE) return CS_LINE_INVALID;
        if (!is_clean_text((const unsigned char *)line + rest, text_length)) return CS_LINE_INVALID;
        out->kind = texts[t].kind;
        out->text = line + rest;
        out->length = text_length;
        return out->kind;
    }
    return CS_LINE_INVALID;
}
