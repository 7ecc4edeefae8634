/* A WebRTC publisher for one WHIP output, over GStreamer's webrtcbin: the thin C edge of
 * LivePush's interactive mode. Swift does the WHIP HTTP exchange and feeds encoded packets;
 * the shim owns every GStreamer pointer. No GStreamer type appears in this header. */
#ifndef LIVEPUSH_WEBRTC_H
#define LIVEPUSH_WEBRTC_H

#include <stddef.h>
#include <stdint.h>

typedef struct lp_webrtc lp_webrtc;

/* What the callback reports. `value` is the new state for the state events (webrtcbin's
 * GstWebRTCICEConnectionState, GstWebRTCPeerConnectionState, GstWebRTCDTLSTransportState
 * numbering), 1 = all headers for a keyframe request (FIR), 0 for a PLI. */
enum {
    LP_WEBRTC_ICE_STATE = 1,
    LP_WEBRTC_PEER_STATE = 2,
    LP_WEBRTC_DTLS_STATE = 3,
    LP_WEBRTC_KEYFRAME_REQUEST = 4,
    LP_WEBRTC_PIPELINE_ERROR = 5,
};

/* Called on GStreamer's threads: copy what you need and return at once. */
typedef void (*lp_webrtc_callback)(void *context, int event, int value);
/* A local ICE candidate gathered (`candidate`: "candidate:..." as in SDP, without "a=", for the
 * m-line `mline`), or NULL once gathering is complete. On GStreamer's threads, as above. */
typedef void (*lp_webrtc_candidate_callback)(void *context, unsigned mline, const char *candidate);

/* The most video layers one peer sends (simulcast, RFC 8853). */
#define LP_WEBRTC_MAX_LAYERS 4

typedef struct {
    /* The H.264 AVCDecoderConfigurationRecords of the video layers, one after another, the top
     * layer first; NULL for no video. */
    const uint8_t *avcc;
    /* Each layer's record size: `video_layers` of them. */
    const size_t *avcc_sizes;
    /* 1: one video. 2 to LP_WEBRTC_MAX_LAYERS: simulcast, layer i sent with the RID "r<i>". */
    int video_layers;
    /* Opus channels (1 or 2); 0 for no audio. */
    int audio_channels;
    /* "stun://host:port", NULL for none. */
    const char *stun_server;
    /* "turn(s)://user:password@host:port", NULL for none. */
    const char *turn_server;
    lp_webrtc_callback callback;
    /* NULL: candidates are not reported (no trickle ICE). */
    lp_webrtc_candidate_callback candidate_callback;
    void *context;
} lp_webrtc_config;

/* Loads GStreamer (its libraries by dlopen, then its plugins), once per process: LivePush
 * links none of it. 0 when a WHIP output can run, else -1 with *error naming the missing
 * library or element and the Debian package that provides it (free with
 * lp_webrtc_free_string). lp_webrtc_new loads it too. */
int lp_webrtc_load(char **error);

/* Builds the pipeline and starts it. NULL on failure, with *error set (free with lp_webrtc_free_string). */
lp_webrtc *lp_webrtc_new(const lp_webrtc_config *config, char **error);

/* Creates the offer, sets it as the local description and waits for ICE gathering (at most
 * gather_timeout_ms: libnice never finishes when a STUN server does not answer). Returns the
 * offer's SDP with its candidates, or NULL with *error. 0 for trickle ICE: the offer at once,
 * with no candidate, each candidate reported to candidate_callback as it is gathered. */
char *lp_webrtc_create_offer(lp_webrtc *peer, int gather_timeout_ms, char **error);

/* Sets the WHIP answer as the remote description. 0 on success, else -1 with *error. */
int lp_webrtc_set_answer(lp_webrtc *peer, const char *sdp, char **error);

/* Queues one encoded frame: H.264 in AVCC (4-byte lengths) of video layer `layer`, or one Opus
 * packet (layer -1). Times in µs on the caller's timeline; the first frame maps to the
 * pipeline's running time of its push. Never blocks: the source queue holds at most a second or
 * two, the oldest dropped beyond it. 0 on success. */
int lp_webrtc_push(lp_webrtc *peer, int layer, const uint8_t *data, size_t size, int64_t pts_us,
                   int64_t duration_us, int keyframe);

/* ICE restart (RFC 8445 §9): libnice's stream gets new local credentials and checks again
 * once lp_webrtc_set_remote_ice gives it the endpoint's; the DTLS session, RTP and RTCP go on
 * over the pair it selects next (no new offer: webrtcbin 1.22 makes none with new
 * credentials). On success *ufrag, *pwd and *candidates (our local candidates, "candidate:..."
 * one per line) are malloc'd: free each with lp_webrtc_free_string. -1 with *error otherwise. */
int lp_webrtc_restart_ice(lp_webrtc *peer, char **ufrag, char **pwd, char **candidates, char **error);

/* The endpoint's credentials after a restart, and its candidates ("candidate:...", one per line). */
int lp_webrtc_set_remote_ice(lp_webrtc *peer, const char *ufrag, const char *pwd, const char *candidates, char **error);

typedef struct {
    /* From the peer's receiver reports on our video (audio when there is no video). */
    int has_report;
    double fraction_lost;
    double round_trip_seconds;
    double jitter_seconds;
    int64_t packets_lost;
    uint64_t packets_sent;
    uint64_t bytes_sent;
    unsigned pli_count;
    unsigned fir_count;
    unsigned nack_count;
    /* The sum, over the receiver reports' sources, of the extended highest sequence number
     * received: it grows while the peer gets our RTP, and stands still when the path is cut. */
    uint64_t highest_sequence_received;
} lp_webrtc_stats;

/* webrtcbin's statistics, waited for at most timeout_ms. 0 on success. */
int lp_webrtc_get_stats(lp_webrtc *peer, lp_webrtc_stats *stats, int timeout_ms);

/* Stops the pipeline and frees everything. */
void lp_webrtc_free(lp_webrtc *peer);
void lp_webrtc_free_string(char *text);

#endif
