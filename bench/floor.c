/* The floor: the least any jansson-based daemon must do per line.
 *
 * Reads stdin with read(2), splits lines at LF, parses each with json_loadb
 * (the same flags typingd uses), reads "cmd", "conv" and "user" and frees the
 * value. Nothing else: no checks, no state, no output but a summary on stderr.
 *
 *   cc -O2 -o bench/out/floor bench/floor.c $(pkg-config --cflags --libs jansson)
 *   bench/out/floor < bench/out/w1.jsonl
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    unsigned long lines = 0, objects = 0, bytes = 0;
    for (;;) {
        if (len == cap) { cap *= 2; buf = realloc(buf, cap); }
        ssize_t n = read(0, buf + len, cap - len);
        if (n < 0) { perror("read"); return 74; }
        len += (size_t)n;
        size_t start = 0;
        for (;;) {
            char *lf = memchr(buf + start, '\n', len - start);
            if (!lf && n != 0) break;
            size_t end = lf ? (size_t)(lf - buf) : len;
            if (end > start) {
                json_error_t error;
                json_t *root = json_loadb(buf + start, end - start,
                                          JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
                lines++;
                if (root) {
                    const char *cmd = json_string_value(json_object_get(root, "cmd"));
                    const char *conv = json_string_value(json_object_get(root, "conv"));
                    const char *user = json_string_value(json_object_get(root, "user"));
                    bytes += (cmd ? 1 : 0) + (conv ? 1 : 0) + (user ? 1 : 0);
                    objects++;
                    json_decref(root);
                }
            }
            if (!lf) { start = len; break; }
            start = end + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        if (n == 0) break;
    }
    fprintf(stderr, "floor: %lu lines, %lu objects, %lu fields\n", lines, objects, bytes);
    free(buf);
    return 0;
}
