/* What the shim's files share: the peer's structure and the certificate's functions. */
#ifndef LIVEPUSH_WEBRTC_PEER_H
#define LIVEPUSH_WEBRTC_PEER_H
#define GST_USE_UNSTABLE_API 1
#include "livepush_webrtc.h"

#include <gst/gst.h>
#include <gst/sdp/sdp.h>

struct lp_webrtc {
    GstElement *pipeline, *webrtc, *video, *audio;
    lp_webrtc_callback callback;
    void *context;
    GMutex lock;
    GCond changed;
    gboolean negotiation_needed, gathered;
    /* The running time of the first frame pushed, and its caller time (µs). */
    gboolean anchored;
    GstClockTime anchor_running;
    int64_t anchor_us;
};

void lp_set_error(char **error, const char *format, ...);

/* The process's DTLS certificate (ECDSA P-256, made once), as webrtcbin's GstDtlsDec takes it. */
gboolean lp_certificate_make(char **error);
const char *lp_certificate_pem(void);
/* Puts the certificate's fingerprint in every media section of an offer. */
void lp_certificate_set_fingerprint(GstSDPMessage *sdp);

#endif
