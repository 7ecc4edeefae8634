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
#include "peer.h"

#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>
#include <string.h>

static void report(lp_webrtc *peer, int event, int value) {
    if (peer->callback) peer->callback(peer->context, event, value);
}

void lp_set_error(char **error, const char *format, ...) {
    if (!error) return;
    va_list args;
    va_start(args, format);
    *error = g_strdup_vprintf(format, args);
    va_end(args);
}

static void on_deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, lp_webrtc *peer) {
    if (!g_strcmp0(G_OBJECT_TYPE_NAME(element), "GstDtlsDec")) g_object_set(element, "pem", lp_certificate_pem(), NULL);
}

/* ------------------------------------------------------------------ signals */

/* Sets one of the flags `wait_for` waits on, and wakes it. */
static void raise_flag(lp_webrtc *peer, gboolean *flag) {
    g_mutex_lock(&peer->lock);
    *flag = TRUE;
    g_cond_broadcast(&peer->changed);
    g_mutex_unlock(&peer->lock);
}

static void on_negotiation_needed(GstElement *webrtc, lp_webrtc *peer) { raise_flag(peer, &peer->negotiation_needed); }

static void on_gathering_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    GstWebRTCICEGatheringState state;
    g_object_get(webrtc, "ice-gathering-state", &state, NULL);
    if (state == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) raise_flag(peer, &peer->gathered);
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
    if (!lp_certificate_make(error)) return NULL;
    lp_webrtc *peer = g_new0(lp_webrtc, 1);
    g_mutex_init(&peer->lock);
    g_cond_init(&peer->changed);
    peer->callback = config->callback;
    peer->context = config->context;
    peer->pipeline = gst_pipeline_new(NULL);
    peer->webrtc = add(peer, "webrtcbin", NULL);
    if (!peer->webrtc) {
        lp_set_error(error, "GStreamer's webrtcbin is missing (install gstreamer1.0-plugins-bad and gstreamer1.0-nice)");
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
        lp_set_error(error, "the WebRTC pipeline could not be built (rtph264pay, rtpopuspay: gstreamer1.0-plugins-good)");
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
        lp_set_error(error, "the WebRTC pipeline did not start");
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
        lp_set_error(error, "webrtcbin never asked for negotiation");
        return NULL;
    }
    GstPromise *promise = gst_promise_new();
    g_signal_emit_by_name(peer->webrtc, "create-offer", NULL, promise);
    GstWebRTCSessionDescription *offer = NULL;
    if (gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED)
        gst_structure_get(gst_promise_get_reply(promise), "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    gst_promise_unref(promise);
    if (!offer) {
        lp_set_error(error, "webrtcbin could not create an offer");
        return NULL;
    }
    lp_certificate_set_fingerprint(offer->sdp);
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
        lp_set_error(error, "webrtcbin has no local description");
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
        lp_set_error(error, "the answer is not SDP with media");
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
        lp_set_error(error, "the answer was refused: %s", failure ? failure->message : "?");
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
