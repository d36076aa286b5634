/* The router's fast path in C, for common.Routing (loaded with ctypes; built by
 * common.py with the system's C compiler; without one the router routes in
 * Python, the same way).
 *
 * typingd_route(buf, len, partitions, conversation, every, long_line, out)
 * reads the lines of buf (separated by '\n'; the last may lack one) and writes
 * one byte per line to out:
 *   0..partitions-1  the partition of the line's conversation, or 0;
 *   254              every partition (a command of `every`);
 *   253              a blank line (only whitespace, as bytes.strip() sees it);
 *   255              not decided here: Python routes the line (its own fast
 *                    path, else json.loads).
 * It returns the number of lines. `conversation` and `every` are the command
 * names, each followed by '\n' (common.CONVERSATION_COMMANDS, EVERY_PARTITION:
 * one list of names, passed on each call).
 *
 * A line is decided here only when it is at most long_line bytes and matches
 * the whitespace-free form of common.py's fast grammar:
 *   {"cmd":"[a-z_]+"(,"conv":STR)?(,KEY:VALUE)*}
 * with STR a string of well-formed UTF-8 without '"', '\\' or a control
 * character (below 0x20), KEY a STR that
 * is neither "cmd" nor "conv", VALUE a STR, a JSON number, true, false or
 * null. Those lines are a subset of _FAST_TIGHT's, with the same cmd and conv,
 * so the partition is the one Routing.split's Python gives (the self-test
 * compares both on every line it has). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { EVERY = 254, BLANK = 253, PYTHON = 255 };

static int has(const unsigned char *p, const unsigned char *end, const char *text) {
    size_t n = strlen(text);
    return (size_t)(end - p) >= n && memcmp(p, text, n) == 0;
}

/* The length of the UTF-8 sequence at p (well-formed: no overlong form, no
 * surrogate, at most U+10FFFF, as Python's decoder wants), or 0. */
static size_t utf8(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    size_t n;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            low = 0xA0;
        else if (c == 0xED)
            high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            low = 0x90;
        else if (c == 0xF4)
            high = 0x8F;
    } else
        return 0;
    if ((size_t)(end - p) < n || p[1] < low || p[1] > high)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* A string's body up to its closing quote: the quote's position, or NULL (an
 * escape, a control character, bytes that are not UTF-8). */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end) {
    while (p < end) {
        unsigned char c = *p;
        if (c == '"')
            return p;
        if (c < 0x20 || c == '\\')
            return NULL;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t n = utf8(p, end);
        if (n == 0)
            return NULL;
        p += n;
    }
    return NULL;
}

static const unsigned char *digits(const unsigned char *p, const unsigned char *end) {
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p;
}

/* A JSON number: the position after it, or NULL. */
static const unsigned char *number(const unsigned char *p, const unsigned char *end) {
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return NULL;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p = digits(p, end);
    else
        return NULL;
    if (p < end && *p == '.') {
        const unsigned char *q = digits(p + 1, end);
        if (q == p + 1)
            return NULL;
        p = q;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const unsigned char *q = digits(p, end);
        if (q == p)
            return NULL;
        p = q;
    }
    return p;
}

/* Whether name (n bytes) is one of list's names (each followed by '\n'). */
static int listed(const char *list, const unsigned char *name, size_t n) {
    const char *p = list;
    while (*p) {
        const char *nl = strchr(p, '\n');
        if (nl == NULL)
            return 0;
        if ((size_t)(nl - p) == n && memcmp(p, name, n) == 0)
            return 1;
        p = nl + 1;
    }
    return 0;
}

static unsigned route_line(const unsigned char *p, const unsigned char *end, unsigned partitions,
                           const char *conversation, const char *every, size_t long_line) {
    const unsigned char *q;
    int blank = 1;
    for (q = p; q < end && blank; q++) {
        unsigned char c = *q;
        if (!(c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'))
            blank = 0;
    }
    if (blank)
        return BLANK;
    if ((size_t)(end - p) > long_line || !has(p, end, "{\"cmd\":\""))
        return PYTHON;
    const unsigned char *cmd = p + 8;
    for (q = cmd; q < end && ((*q >= 'a' && *q <= 'z') || *q == '_'); q++)
        ;
    size_t cmd_len = (size_t)(q - cmd);
    if (cmd_len == 0 || q >= end || *q != '"')
        return PYTHON;
    p = q + 1;
    const unsigned char *conv = NULL;
    size_t conv_len = 0;
    if (has(p, end, ",\"conv\":\"")) {
        conv = p + 9;
        q = string_end(conv, end);
        if (q == NULL)
            return PYTHON;
        conv_len = (size_t)(q - conv);
        p = q + 1;
    }
    while (p < end && *p == ',') {
        if (p + 1 >= end || p[1] != '"')
            return PYTHON;
        const unsigned char *key = p + 2;
        q = string_end(key, end);
        if (q == NULL)
            return PYTHON;
        size_t key_len = (size_t)(q - key);
        if ((key_len == 3 && memcmp(key, "cmd", 3) == 0) || (key_len == 4 && memcmp(key, "conv", 4) == 0))
            return PYTHON;
        p = q + 1;
        if (p >= end || *p != ':')
            return PYTHON;
        p++;
        if (p < end && *p == '"') {
            q = string_end(p + 1, end);
            if (q == NULL)
                return PYTHON;
            p = q + 1;
        } else if (has(p, end, "true")) {
            p += 4;
        } else if (has(p, end, "false")) {
            p += 5;
        } else if (has(p, end, "null")) {
            p += 4;
        } else {
            p = number(p, end);
            if (p == NULL)
                return PYTHON;
        }
    }
    if (p + 1 != end || *p != '}')
        return PYTHON;
    if (conv != NULL && listed(conversation, cmd, cmd_len)) {
        uint32_t h = 0x811C9DC5u;
        for (size_t i = 0; i < conv_len; i++)
            h = (h ^ conv[i]) * 0x01000193u;
        return h % partitions;
    }
    if (listed(every, cmd, cmd_len))
        return EVERY;
    return 0;
}

size_t typingd_route(const unsigned char *buf, size_t len, unsigned partitions, const char *conversation,
                     const char *every, size_t long_line, unsigned char *out) {
    size_t lines = 0;
    const unsigned char *p = buf, *end = buf + len;
    if (partitions == 0 || partitions > BLANK)
        return 0;
    while (p <= end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *stop = nl ? nl : end;
        out[lines++] = (unsigned char)route_line(p, stop, partitions, conversation, every, long_line);
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    return lines;
}
