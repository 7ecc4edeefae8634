/* What the shim's files share beside GStreamer: error text, and waits with deadlines on the
 * monotonic clock (the wall clock may be stepped during a push). */
#define _GNU_SOURCE 1 /* asprintf, vasprintf */
#include "peer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void lp_set_error(char **error, const char *format, ...) {
    if (!error) return;
    va_list args;
    va_start(args, format);
    if (vasprintf(error, format, args) < 0) *error = NULL;
    va_end(args);
}

int64_t lp_monotonic_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

void lp_cond_init(pthread_cond_t *condition) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(condition, &attributes);
    pthread_condattr_destroy(&attributes);
}

int lp_cond_wait_until(pthread_cond_t *condition, pthread_mutex_t *lock, int64_t deadline_us) {
    struct timespec deadline = {.tv_sec = deadline_us / 1000000, .tv_nsec = (deadline_us % 1000000) * 1000};
    return pthread_cond_timedwait(condition, lock, &deadline) == 0;
}

void lp_webrtc_free_string(char *text) { free(text); }

int lp_webrtc_load(char **error) { return lp_gst_load(error); }
