/* One WHIP output's WebRTC peer: appsrc (H.264 AVCC) ! rtph264pay and appsrc (Opus) !
 * rtpopuspay into a send-only webrtcbin. Measured on Debian 12 (GStreamer 1.22) against
 * aiortc; what it needs beyond the textbook pipeline:
 * - an ECDSA certificate for DTLS: webrtcbin's default is RSA-2048, and peers that offer only
 *   ECDHE-ECDSA suites (aiortc) fail with "no shared cipher". It is set on each GstDtlsDec as
 *   webrtcbin creates it, and the offer's a=fingerprint is rewritten to match, since 1.22
 *   computes it from the default certificate;
 * - a bound on ICE gathering: libnice never completes it when a STUN server does not answer;
 * - no GMainLoop: webrtcbin and libnice run their own; everything here waits on promises or
 *   on a condition, and bus errors come through a synchronous handler. */
#define GST_USE_UNSTABLE_API 1
#include "livepush_webrtc.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>
#include <string.h>

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

static char *certificate_pem;
static char *certificate_fingerprint;

static void report(lp_webrtc *peer, int event, int value) {
    if (peer->callback) peer->callback(peer->context, event, value);
}

static void set_error(char **error, const char *format, ...) {
    if (!error) return;
    va_list args;
    va_start(args, format);
    *error = g_strdup_vprintf(format, args);
    va_end(args);
}

/* ------------------------------------------------------------------ certificate */

/* "sha-256 AB:CD:…" of the DER certificate. */
static char *fingerprint_of(const gnutls_datum_t *der) {
    guint8 digest[32];
    gsize length = sizeof digest;
    GChecksum *checksum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(checksum, der->data, der->size);
    g_checksum_get_digest(checksum, digest, &length);
    g_checksum_free(checksum);
    GString *text = g_string_new("sha-256 ");
    for (gsize i = 0; i < length; i++) g_string_append_printf(text, i ? ":%02X" : "%02X", digest[i]);
    return g_string_free(text, FALSE);
}

/* A self-signed ECDSA P-256 certificate with its key, made once per process (WebRTC peers
 * check the fingerprint in the SDP, not a chain). */
static gboolean make_certificate(char **error) {
    static GMutex once;
    g_mutex_lock(&once);
    gboolean ok = certificate_pem != NULL;
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    gnutls_datum_t key_pem = {0}, crt_pem = {0}, crt_der = {0};
    if (ok) goto done;
    unsigned char serial[8];
    guint32 random = g_random_int();
    memcpy(serial, &random, 4);
    random = g_random_int();
    memcpy(serial + 4, &random, 4);
    serial[0] &= 0x7F;
    time_t now = time(NULL);
    if (gnutls_x509_privkey_init(&key) < 0
        || gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0
        || gnutls_x509_crt_init(&crt) < 0 || gnutls_x509_crt_set_version(crt, 3) < 0
        || gnutls_x509_crt_set_serial(crt, serial, sizeof serial) < 0
        || gnutls_x509_crt_set_activation_time(crt, now - 86400) < 0
        || gnutls_x509_crt_set_expiration_time(crt, now + 30 * 86400) < 0
        || gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "LivePush", 8) < 0
        || gnutls_x509_crt_set_key(crt, key) < 0 || gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0
        || gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &crt_pem) < 0
        || gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &crt_der) < 0
        || gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &key_pem) < 0) {
        set_error(error, "could not make the DTLS certificate (GnuTLS)");
        goto done;
    }
    certificate_pem = g_strdup_printf("%.*s%.*s", (int)crt_pem.size, crt_pem.data, (int)key_pem.size, key_pem.data);
    certificate_fingerprint = fingerprint_of(&crt_der);
    ok = TRUE;
done:
    gnutls_free(key_pem.data);
    gnutls_free(crt_pem.data);
    gnutls_free(crt_der.data);
    if (crt) gnutls_x509_crt_deinit(crt);
    if (key) gnutls_x509_privkey_deinit(key);
    g_mutex_unlock(&once);
    return ok;
}

static void on_deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, lp_webrtc *peer) {
    if (!g_strcmp0(G_OBJECT_TYPE_NAME(element), "GstDtlsDec")) g_object_set(element, "pem", certificate_pem, NULL);
}

static void set_fingerprint(GstSDPMessage *sdp) {
    for (guint i = 0; i < gst_sdp_message_medias_len(sdp); i++) {
        GstSDPMedia *media = (GstSDPMedia *)gst_sdp_message_get_media(sdp, i);
        for (guint j = 0; j < gst_sdp_media_attributes_len(media); j++) {
            const GstSDPAttribute *attribute = gst_sdp_media_get_attribute(media, j);
            if (g_strcmp0(attribute->key, "fingerprint")) continue;
            GstSDPAttribute replacement;
            gst_sdp_attribute_set(&replacement, "fingerprint", certificate_fingerprint);
            gst_sdp_media_replace_attribute(media, j, &replacement);
        }
    }
}

/* ------------------------------------------------------------------ signals */

static void on_negotiation_needed(GstElement *webrtc, lp_webrtc *peer) {
    g_mutex_lock(&peer->lock);
    peer->negotiation_needed = TRUE;
    g_cond_broadcast(&peer->changed);
    g_mutex_unlock(&peer->lock);
}

static void on_gathering_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    GstWebRTCICEGatheringState state;
    g_object_get(webrtc, "ice-gathering-state", &state, NULL);
    if (state != GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) return;
    g_mutex_lock(&peer->lock);
    peer->gathered = TRUE;
    g_cond_broadcast(&peer->changed);
    g_mutex_unlock(&peer->lock);
}

static void on_ice_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    GstWebRTCICEConnectionState state;
    g_object_get(webrtc, "ice-connection-state", &state, NULL);
    report(peer, LP_WEBRTC_ICE_STATE, state);
}

static void on_peer_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    GstWebRTCPeerConnectionState state;
    g_object_get(webrtc, "connection-state", &state, NULL);
    report(peer, LP_WEBRTC_PEER_STATE, state);
}

static void on_dtls_state(GObject *transport, GParamSpec *spec, lp_webrtc *peer) {
    GstWebRTCDTLSTransportState state;
    g_object_get(transport, "state", &state, NULL);
    report(peer, LP_WEBRTC_DTLS_STATE, state);
}

/* A PLI or FIR from the peer reaches the payloader as an upstream force-key-unit event. */
static GstPadProbeReturn on_upstream_event(GstPad *pad, GstPadProbeInfo *info, lp_webrtc *peer) {
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (gst_video_event_is_force_key_unit(event)) {
        GstClockTime time;
        gboolean all_headers = FALSE;
        guint count;
        gst_video_event_parse_upstream_force_key_unit(event, &time, &all_headers, &count);
        report(peer, LP_WEBRTC_KEYFRAME_REQUEST, all_headers ? 1 : 0);
    }
    return GST_PAD_PROBE_OK;
}

static GstBusSyncReply on_bus_message(GstBus *bus, GstMessage *message, lp_webrtc *peer) {
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) report(peer, LP_WEBRTC_PIPELINE_ERROR, 0);
    return GST_BUS_DROP;
}

/* ------------------------------------------------------------------ building */

static GstElement *add(lp_webrtc *peer, const char *factory, const char *name) {
    GstElement *element = gst_element_factory_make(factory, name);
    if (element) gst_bin_add(GST_BIN(peer->pipeline), element);
    return element;
}

/* source ! payloader ! capsfilter(rtp caps) ! webrtcbin; the rtcp-fb fields of the RTP caps
 * become a=rtcp-fb lines in the offer (NACK, PLI, FIR). */
static gboolean add_branch(lp_webrtc *peer, GstElement *source, const char *payloader_factory, GstCaps *rtp_caps,
                           gboolean watch_keyframe_requests) {
    GstElement *payloader = add(peer, payloader_factory, NULL);
    GstElement *filter = add(peer, "capsfilter", NULL);
    if (!payloader || !filter) return FALSE;
    g_object_set(filter, "caps", rtp_caps, NULL);
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(payloader), "mtu")) g_object_set(payloader, "mtu", 1200, NULL);
    if (watch_keyframe_requests) {
        /* SPS/PPS before every keyframe; each frame sent as soon as it is packetized. */
        gst_util_set_object_arg(G_OBJECT(payloader), "aggregate-mode", "zero-latency");
        g_object_set(payloader, "config-interval", -1, NULL);
        GstPad *sink = gst_element_get_static_pad(payloader, "sink");
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, (GstPadProbeCallback)on_upstream_event, peer, NULL);
        gst_object_unref(sink);
    }
    return gst_element_link_many(source, payloader, filter, NULL) && gst_element_link(filter, peer->webrtc);
}

static GstElement *add_source(lp_webrtc *peer, const char *name, GstCaps *caps) {
    GstElement *source = add(peer, "appsrc", name);
    if (!source) return NULL;
    /* Bounded: about two seconds of media; beyond it the oldest goes (a live push never waits). */
    g_object_set(source, "format", GST_FORMAT_TIME, "is-live", TRUE, "do-timestamp", FALSE, "block", FALSE, "caps", caps,
                 "max-bytes", (guint64)(2 * 1024 * 1024), NULL);
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(source), "leaky-type"))
        gst_util_set_object_arg(G_OBJECT(source), "leaky-type", "downstream");
    return source;
}

lp_webrtc *lp_webrtc_new(const lp_webrtc_config *config, char **error) {
    static gsize initialized = 0;
    if (g_once_init_enter(&initialized)) {
        gst_init(NULL, NULL);
        g_once_init_leave(&initialized, 1);
    }
    if (!make_certificate(error)) return NULL;
    lp_webrtc *peer = g_new0(lp_webrtc, 1);
    g_mutex_init(&peer->lock);
    g_cond_init(&peer->changed);
    peer->callback = config->callback;
    peer->context = config->context;
    peer->pipeline = gst_pipeline_new(NULL);
    peer->webrtc = add(peer, "webrtcbin", NULL);
    if (!peer->webrtc) {
        set_error(error, "GStreamer's webrtcbin is missing (install gstreamer1.0-plugins-bad and gstreamer1.0-nice)");
        lp_webrtc_free(peer);
        return NULL;
    }
    gst_util_set_object_arg(G_OBJECT(peer->webrtc), "bundle-policy", "max-bundle");
    if (config->stun_server) g_object_set(peer->webrtc, "stun-server", config->stun_server, NULL);
    if (config->turn_server) {
        gboolean added = FALSE;
        g_signal_emit_by_name(peer->webrtc, "add-turn-server", config->turn_server, &added);
    }
    g_signal_connect(peer->webrtc, "deep-element-added", G_CALLBACK(on_deep_element_added), peer);
    g_signal_connect(peer->webrtc, "on-negotiation-needed", G_CALLBACK(on_negotiation_needed), peer);
    g_signal_connect(peer->webrtc, "notify::ice-gathering-state", G_CALLBACK(on_gathering_state), peer);
    g_signal_connect(peer->webrtc, "notify::ice-connection-state", G_CALLBACK(on_ice_state), peer);
    g_signal_connect(peer->webrtc, "notify::connection-state", G_CALLBACK(on_peer_state), peer);

    gboolean linked = TRUE;
    if (config->avcc && config->avcc_size > 0) {
        GstBuffer *record = gst_buffer_new_memdup(config->avcc, config->avcc_size);
        GstCaps *caps = gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING, "avc", "alignment", G_TYPE_STRING, "au",
                                            "codec_data", GST_TYPE_BUFFER, record, NULL);
        gst_buffer_unref(record);
        peer->video = add_source(peer, "video", caps);
        gst_caps_unref(caps);
        GstCaps *rtp = gst_caps_from_string("application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,"
                                            "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true,rtcp-fb-ccm-fir=(boolean)true");
        linked = peer->video && add_branch(peer, peer->video, "rtph264pay", rtp, TRUE);
        gst_caps_unref(rtp);
    }
    if (linked && config->audio_channels > 0) {
        GstCaps *caps = gst_caps_new_simple("audio/x-opus", "channel-mapping-family", G_TYPE_INT, 0, "channels", G_TYPE_INT,
                                            config->audio_channels, "rate", G_TYPE_INT, 48000, NULL);
        peer->audio = add_source(peer, "audio", caps);
        gst_caps_unref(caps);
        GstCaps *rtp = gst_caps_from_string("application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000");
        linked = peer->audio && add_branch(peer, peer->audio, "rtpopuspay", rtp, FALSE);
        gst_caps_unref(rtp);
    }
    if (!linked) {
        set_error(error, "the WebRTC pipeline could not be built (rtph264pay, rtpopuspay: gstreamer1.0-plugins-good)");
        lp_webrtc_free(peer);
        return NULL;
    }
    /* WHIP publishes: every transceiver sends only. */
    GArray *transceivers = NULL;
    g_signal_emit_by_name(peer->webrtc, "get-transceivers", &transceivers);
    for (guint i = 0; transceivers && i < transceivers->len; i++) {
        GstWebRTCRTPTransceiver *transceiver = g_array_index(transceivers, GstWebRTCRTPTransceiver *, i);
        g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, NULL);
        /* Resend what the peer reports lost (NACK, RFC 4588 retransmission): a lossy path then
         * costs delay rather than pictures. */
        if (g_object_class_find_property(G_OBJECT_GET_CLASS(transceiver), "do-nack"))
            g_object_set(transceiver, "do-nack", TRUE, NULL);
    }
    if (transceivers) g_array_unref(transceivers);
    GstBus *bus = gst_element_get_bus(peer->pipeline);
    gst_bus_set_sync_handler(bus, (GstBusSyncHandler)on_bus_message, peer, NULL);
    gst_object_unref(bus);
    if (gst_element_set_state(peer->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        set_error(error, "the WebRTC pipeline did not start");
        lp_webrtc_free(peer);
        return NULL;
    }
    return peer;
}

/* ------------------------------------------------------------------ offer and answer */

static gboolean wait_for(lp_webrtc *peer, gboolean *flag, gint64 deadline) {
    g_mutex_lock(&peer->lock);
    while (!*flag)
        if (!g_cond_wait_until(&peer->changed, &peer->lock, deadline)) break;
    gboolean done = *flag;
    g_mutex_unlock(&peer->lock);
    return done;
}

char *lp_webrtc_create_offer(lp_webrtc *peer, int gather_timeout_ms, char **error) {
    if (!wait_for(peer, &peer->negotiation_needed, g_get_monotonic_time() + 5 * G_TIME_SPAN_SECOND)) {
        set_error(error, "webrtcbin never asked for negotiation");
        return NULL;
    }
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(peer->webrtc, "create-offer", NULL, promise);
    GstWebRTCSessionDescription *offer = NULL;
    if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED)
        gst_structure_get(gst_promise_get_reply(promise), "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    gst_promise_unref(promise);
    if (!offer) {
        set_error(error, "webrtcbin could not create an offer");
        return NULL;
    }
    set_fingerprint(offer->sdp);
    promise = gst_promise_new();
    g_signal_emit_by_name(peer->webrtc, "set-local-description", offer, promise);
    gst_promise_wait(promise);
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(offer);
    /* Not trickle ICE: the offer goes with the candidates gathered by then. */
    wait_for(peer, &peer->gathered, g_get_monotonic_time() + (gint64)gather_timeout_ms * G_TIME_SPAN_MILLISECOND);
    GstWebRTCSessionDescription *local = NULL;
    g_object_get(peer->webrtc, "local-description", &local, NULL);
    if (!local) {
        set_error(error, "webrtcbin has no local description");
        return NULL;
    }
    char *text = gst_sdp_message_as_text(local->sdp);
    gst_webrtc_session_description_free(local);
    return text;
}

int lp_webrtc_set_answer(lp_webrtc *peer, const char *sdp, char **error) {
    GstSDPMessage *message = NULL;
    if (gst_sdp_message_new_from_text(sdp, &message) != GST_SDP_OK || gst_sdp_message_medias_len(message) == 0) {
        if (message) gst_sdp_message_free(message);
        set_error(error, "the answer is not SDP with media");
        return -1;
    }
    GstWebRTCSessionDescription *answer = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(peer->webrtc, "set-remote-description", answer, promise);
    gst_promise_wait(promise);
    const GstStructure *reply = gst_promise_get_reply(promise);
    int result = 0;
    if (reply && gst_structure_has_field(reply, "error")) {
        GError *failure = NULL;
        gst_structure_get(reply, "error", G_TYPE_ERROR, &failure, NULL);
        set_error(error, "the answer was refused: %s", failure ? failure->message : "?");
        if (failure) g_error_free(failure);
        result = -1;
    }
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(answer);
    if (result == 0) {
        /* The DTLS transport (one, bundled) exists now: follow its state. */
        GstWebRTCRTPTransceiver *transceiver = NULL;
        g_signal_emit_by_name(peer->webrtc, "get-transceiver", 0, &transceiver);
        if (transceiver) {
            GstWebRTCRTPSender *sender = NULL;
            g_object_get(transceiver, "sender", &sender, NULL);
            GstWebRTCDTLSTransport *transport = NULL;
            if (sender) g_object_get(sender, "transport", &transport, NULL);
            if (transport) {
                g_signal_connect(transport, "notify::state", G_CALLBACK(on_dtls_state), peer);
                g_object_unref(transport);
            }
            if (sender) g_object_unref(sender);
            gst_object_unref(transceiver);
        }
    }
    return result;
}

/* ------------------------------------------------------------------ media */

int lp_webrtc_push(lp_webrtc *peer, int is_video, const uint8_t *data, size_t size, int64_t pts_us, int64_t duration_us,
                   int keyframe) {
    GstElement *source = is_video ? peer->video : peer->audio;
    if (!source) return -1;
    g_mutex_lock(&peer->lock);
    if (!peer->anchored) {
        GstClock *clock = gst_element_get_clock(peer->pipeline);
        GstClockTime now = clock ? gst_clock_get_time(clock) : 0;
        if (clock) gst_object_unref(clock);
        /* 50 ms ahead of now: the first frames are not late before they leave. */
        peer->anchor_running = now - gst_element_get_base_time(peer->pipeline) + 50 * GST_MSECOND;
        peer->anchor_us = pts_us;
        peer->anchored = TRUE;
    }
    int64_t offset_us = pts_us - peer->anchor_us;
    GstClockTime running = peer->anchor_running;
    g_mutex_unlock(&peer->lock);
    if (offset_us < 0 && (GstClockTime)(-offset_us * 1000) > running) return 0; /* before the anchor: nothing to send it with */
    GstBuffer *buffer = gst_buffer_new_memdup(data, size);
    GST_BUFFER_PTS(buffer) = GST_BUFFER_DTS(buffer) = running + offset_us * 1000;
    GST_BUFFER_DURATION(buffer) = duration_us > 0 ? (GstClockTime)duration_us * 1000 : GST_CLOCK_TIME_NONE;
    if (is_video && !keyframe) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    return gst_app_src_push_buffer(GST_APP_SRC(source), buffer) == GST_FLOW_OK ? 0 : -1;
}

/* ------------------------------------------------------------------ statistics */

typedef struct {
    lp_webrtc_stats *stats;
    gboolean from_video;
} stats_walk;

static gboolean read_stats_field(GQuark field, const GValue *value, gpointer user) {
    stats_walk *walk = user;
    if (!GST_VALUE_HOLDS_STRUCTURE(value)) return TRUE;
    const GstStructure *entry = gst_value_get_structure(value);
    GstWebRTCStatsType type;
    if (!gst_structure_get(entry, "type", GST_TYPE_WEBRTC_STATS_TYPE, &type, NULL)) return TRUE;
    lp_webrtc_stats *stats = walk->stats;
    if (type == GST_WEBRTC_STATS_OUTBOUND_RTP) {
        guint64 packets = 0, bytes = 0;
        guint pli = 0, fir = 0, nack = 0;
        gst_structure_get(entry, "packets-sent", G_TYPE_UINT64, &packets, "bytes-sent", G_TYPE_UINT64, &bytes, NULL);
        gst_structure_get_uint(entry, "pli-count", &pli);
        gst_structure_get_uint(entry, "fir-count", &fir);
        gst_structure_get_uint(entry, "nack-count", &nack);
        stats->packets_sent += packets;
        stats->bytes_sent += bytes;
        stats->pli_count += pli;
        stats->fir_count += fir;
        stats->nack_count += nack;
    } else if (type == GST_WEBRTC_STATS_REMOTE_INBOUND_RTP) {
        double fraction = 0, rtt = 0;
        gint64 lost = 0;
        gst_structure_get(entry, "fraction-lost", G_TYPE_DOUBLE, &fraction, "round-trip-time", G_TYPE_DOUBLE, &rtt,
                          "packets-lost", G_TYPE_INT64, &lost, NULL);
        /* 1.22 has no jitter here: the nested source statistics' rb-jitter is in RTP clock units. */
        guint jitter = 0, clock_rate = 90000;
        const GValue *nested = gst_structure_get_value(entry, "gst-rtpsource-stats");
        if (nested && GST_VALUE_HOLDS_STRUCTURE(nested)) {
            const GstStructure *source = gst_value_get_structure(nested);
            gst_structure_get_uint(source, "rb-jitter", &jitter);
            gst_structure_get_uint(source, "clock-rate", &clock_rate);
        }
        /* The worst of the reports (video and audio): the path is as good as its worst stream. */
        stats->has_report = 1;
        if (fraction > stats->fraction_lost) stats->fraction_lost = fraction;
        if (rtt > stats->round_trip_seconds) stats->round_trip_seconds = rtt;
        double jitter_seconds = clock_rate ? (double)jitter / clock_rate : 0;
        if (jitter_seconds > stats->jitter_seconds) stats->jitter_seconds = jitter_seconds;
        stats->packets_lost += lost;
    }
    return TRUE;
}

int lp_webrtc_get_stats(lp_webrtc *peer, lp_webrtc_stats *stats, int timeout_ms) {
    memset(stats, 0, sizeof *stats);
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(peer->webrtc, "get-stats", NULL, promise);
    /* webrtcbin answers from its own thread, at once: gst_promise_wait has no timeout to give. */
    (void)timeout_ms;
    int result = -1;
    if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
        stats_walk walk = {stats, TRUE};
        gst_structure_foreach(gst_promise_get_reply(promise), read_stats_field, &walk);
        result = 0;
    }
    gst_promise_unref(promise);
    return result;
}

/* ------------------------------------------------------------------ teardown */

void lp_webrtc_free(lp_webrtc *peer) {
    if (!peer) return;
    if (peer->pipeline) {
        GstBus *bus = gst_element_get_bus(peer->pipeline);
        gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
        gst_object_unref(bus);
        gst_element_set_state(peer->pipeline, GST_STATE_NULL);
        gst_object_unref(peer->pipeline);
    }
    g_mutex_clear(&peer->lock);
    g_cond_clear(&peer->changed);
    g_free(peer);
}

void lp_webrtc_free_string(char *text) { g_free(text); }
