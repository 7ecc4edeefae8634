/* What the shim's files share: the peer's structure and the certificate's functions. */
#ifndef LIVEPUSH_WEBRTC_PEER_H
#define LIVEPUSH_WEBRTC_PEER_H
#include "livepush_webrtc.h"

#include "gst_api.h"

#include <pthread.h>

struct lp_webrtc {
    GstElement *pipeline, *webrtc, *video, *audio;
    lp_webrtc_callback callback;
    void *context;
    pthread_mutex_t lock;
    /* On CLOCK_MONOTONIC (lp_monotonic_us): waits have deadlines. */
    pthread_cond_t changed;
    gboolean negotiation_needed, gathered;
    /* The running time of the first frame pushed, and its caller time (µs). */
    gboolean anchored;
    GstClockTime anchor_running;
    int64_t anchor_us;
};

void lp_set_error(char **error, const char *format, ...);

/* Now on CLOCK_MONOTONIC, in µs. */
int64_t lp_monotonic_us(void);
/* A condition variable that waits on CLOCK_MONOTONIC. */
void lp_cond_init(pthread_cond_t *condition);
/* Waits until signalled or `deadline_us` (lp_monotonic_us); 0 when it timed out. */
int lp_cond_wait_until(pthread_cond_t *condition, pthread_mutex_t *lock, int64_t deadline_us);

/* The process's DTLS certificate (ECDSA P-256, made once), as webrtcbin's GstDtlsDec takes it. */
gboolean lp_certificate_make(char **error);
const char *lp_certificate_pem(void);
/* Puts the certificate's fingerprint in every media section of an offer. */
void lp_certificate_set_fingerprint(GstSDPMessage *sdp);

#endif
