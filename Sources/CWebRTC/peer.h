/* What the shim's files share: the peer's structure and the certificate's functions. */
#ifndef LIVEPUSH_WEBRTC_PEER_H
#define LIVEPUSH_WEBRTC_PEER_H
#include "livepush_webrtc.h"

#include "gst_api.h"

#include <pthread.h>

struct lp_webrtc {
    GstElement *pipeline, *webrtc, *audio;
    /* One source per video layer: the top (or only) one first (simulcast.c). */
    GstElement *video[LP_WEBRTC_MAX_LAYERS];
    int video_layers;
    /* Simulcast: each layer's mid header extension, told the m-line's mid once the offer has one. */
    GstElement *mid_extension[LP_WEBRTC_MAX_LAYERS];
    lp_webrtc_callback callback;
    lp_webrtc_candidate_callback candidate_callback;
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

/* Building blocks of the pipeline (livepush_webrtc.c), shared with simulcast.c. */
GstElement *lp_add_element(lp_webrtc *peer, const char *factory, const char *name);
GstElement *lp_add_source(lp_webrtc *peer, const char *name, GstCaps *caps);
/* The caps of H.264 in AVCC with its decoder configuration record. */
GstCaps *lp_h264_caps(const uint8_t *record, size_t size);
/* An H.264 payloader as WebRTC wants it: SPS/PPS before each keyframe, each frame sent as soon
 * as it is packetized, PLI/FIR reported. */
void lp_configure_h264_payloader(lp_webrtc *peer, GstElement *payloader);
/* The RTP caps of the video branch: its rtcp-fb fields become a=rtcp-fb lines (NACK, PLI, FIR). */
#define LP_H264_RTP_CAPS "application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000," \
    "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true"

/* Simulcast (simulcast.c): the video layers, each with its RID, through one m-line. */
gboolean lp_simulcast_add_video(lp_webrtc *peer, const uint8_t *records, const size_t *sizes, int layers);
/* Writes the offer's a=rid and a=simulcast lines (RFC 8853) in its video section. */
void lp_simulcast_describe(lp_webrtc *peer, GstSDPMessage *offer);
/* Tells each layer's mid extension the mid webrtcbin gave the video section. */
void lp_simulcast_set_mid(lp_webrtc *peer, GstSDPMessage *offer);

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
