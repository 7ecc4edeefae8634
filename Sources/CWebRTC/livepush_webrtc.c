/* One WHIP output's WebRTC peer: appsrc (H.264 AVCC) ! rtph264pay and appsrc (Opus) !
 * rtpopuspay into a send-only webrtcbin. Measured on Debian 12 (GStreamer 1.22) against
 * aiortc; what it needs beyond the textbook pipeline:
 * - an ECDSA certificate for DTLS: webrtcbin's default is RSA-2048, and peers that offer only
 *   ECDHE-ECDSA suites (aiortc) fail with "no shared cipher". It is set on each GstDtlsDec as
 *   webrtcbin creates it, and the offer's a=fingerprint is rewritten to match, since 1.22
 *   computes it from the default certificate;
 * - a bound on ICE gathering: libnice never completes it when a STUN server does not answer;
 * - no GMainLoop: webrtcbin and libnice run their own; everything here waits on promises or
 *   on a condition, and bus errors come through a synchronous handler.
 * GStreamer is called through `lp_gst` (gst_api.h), loaded at the first peer. */
#include "peer.h"

#include <stdlib.h>
#include <string.h>

static void report(lp_webrtc *peer, int event, int value) {
    if (peer->callback) peer->callback(peer->context, event, value);
}

static void on_deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, lp_webrtc *peer) {
    const char *type = lp_gst.g_type_name_from_instance((GTypeInstance *)element);
    if (type && !strcmp(type, "GstDtlsDec")) lp_gst.g_object_set(element, "pem", lp_certificate_pem(), NULL);
}

/* ------------------------------------------------------------------ signals */

/* Sets one of the flags `wait_for` waits on, and wakes it. */
static void raise_flag(lp_webrtc *peer, gboolean *flag) {
    pthread_mutex_lock(&peer->lock);
    *flag = TRUE;
    pthread_cond_broadcast(&peer->changed);
    pthread_mutex_unlock(&peer->lock);
}

static void on_negotiation_needed(GstElement *webrtc, lp_webrtc *peer) { raise_flag(peer, &peer->negotiation_needed); }

static void on_gathering_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    int state = 0;
    lp_gst.g_object_get(webrtc, "ice-gathering-state", &state, NULL);
    if (state != GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) return;
    raise_flag(peer, &peer->gathered);
    if (peer->candidate_callback) peer->candidate_callback(peer->context, 0, NULL);
}

/* Trickle ICE: each candidate as libnice finds it. */
static void on_ice_candidate(GstElement *webrtc, unsigned mline, const char *candidate, lp_webrtc *peer) {
    if (peer->candidate_callback && candidate) peer->candidate_callback(peer->context, mline, candidate);
}

static void on_ice_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    int state = 0;
    lp_gst.g_object_get(webrtc, "ice-connection-state", &state, NULL);
    report(peer, LP_WEBRTC_ICE_STATE, state);
}

static void on_peer_state(GstElement *webrtc, GParamSpec *spec, lp_webrtc *peer) {
    int state = 0;
    lp_gst.g_object_get(webrtc, "connection-state", &state, NULL);
    report(peer, LP_WEBRTC_PEER_STATE, state);
}

static void on_dtls_state(GObject *transport, GParamSpec *spec, lp_webrtc *peer) {
    int state = 0;
    lp_gst.g_object_get(transport, "state", &state, NULL);
    report(peer, LP_WEBRTC_DTLS_STATE, state);
}

/* A PLI or FIR from the peer reaches the payloader as an upstream force-key-unit event. */
static int on_upstream_event(GstPad *pad, GstPadProbeInfo *info, lp_webrtc *peer) {
    GstEvent *event = lp_gst.gst_pad_probe_info_get_event(info);
    if (event && lp_gst.gst_video_event_is_force_key_unit(event)) {
        GstClockTime time;
        gboolean all_headers = FALSE;
        unsigned count;
        lp_gst.gst_video_event_parse_upstream_force_key_unit(event, &time, &all_headers, &count);
        report(peer, LP_WEBRTC_KEYFRAME_REQUEST, all_headers ? 1 : 0);
    }
    return GST_PAD_PROBE_OK;
}

static int on_bus_message(GstBus *bus, GstMessage *message, lp_webrtc *peer) {
    if (message->type == GST_MESSAGE_ERROR) report(peer, LP_WEBRTC_PIPELINE_ERROR, 0);
    return GST_BUS_DROP;
}

/* ------------------------------------------------------------------ building */

GstElement *lp_add_element(lp_webrtc *peer, const char *factory, const char *name) {
    GstElement *element = lp_gst.gst_element_factory_make(factory, name);
    if (element) lp_gst.gst_bin_add((GstBin *)peer->pipeline, element);
    return element;
}

void lp_configure_h264_payloader(lp_webrtc *peer, GstElement *payloader) {
    lp_gst.gst_util_set_object_arg((GObject *)payloader, "aggregate-mode", "zero-latency");
    lp_gst.g_object_set(payloader, "config-interval", -1, NULL);
    GstPad *sink = lp_gst.gst_element_get_static_pad(payloader, "sink");
    lp_gst.gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, (GstPadProbeCallback)on_upstream_event, peer, NULL);
    lp_gst.gst_object_unref(sink);
}

/* source ! payloader ! capsfilter(rtp caps) ! webrtcbin; the rtcp-fb fields of the RTP caps
 * become a=rtcp-fb lines in the offer (NACK, PLI, FIR). */
static gboolean add_branch(lp_webrtc *peer, GstElement *source, const char *payloader_factory, GstCaps *rtp_caps,
                           gboolean watch_keyframe_requests) {
    GstElement *payloader = lp_add_element(peer, payloader_factory, NULL);
    GstElement *filter = lp_add_element(peer, "capsfilter", NULL);
    if (!payloader || !filter) return FALSE;
    lp_gst.g_object_set(filter, "caps", rtp_caps, NULL);
    if (lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(payloader), "mtu")) lp_gst.g_object_set(payloader, "mtu", 1200, NULL);
    if (watch_keyframe_requests) lp_configure_h264_payloader(peer, payloader);
    return lp_gst.gst_element_link_many(source, payloader, filter, NULL) && lp_gst.gst_element_link(filter, peer->webrtc);
}

GstElement *lp_add_source(lp_webrtc *peer, const char *name, GstCaps *caps) {
    GstElement *source = lp_add_element(peer, "appsrc", name);
    if (!source) return NULL;
    /* Bounded: about two seconds of media; beyond it the oldest goes (a live push never waits). */
    lp_gst.g_object_set(source, "format", GST_FORMAT_TIME, "is-live", TRUE, "do-timestamp", FALSE, "block", FALSE, "caps", caps,
                        "max-bytes", (uint64_t)(2 * 1024 * 1024), NULL);
    if (lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(source), "leaky-type"))
        lp_gst.gst_util_set_object_arg((GObject *)source, "leaky-type", "downstream");
    return source;
}

GstCaps *lp_h264_caps(const uint8_t *record, size_t size) {
    GstBuffer *data = lp_gst.gst_buffer_new_memdup(record, size);
    GstCaps *caps = lp_gst.gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING, "avc", "alignment", G_TYPE_STRING,
                                               "au", "codec_data", lp_gst.gst_buffer_get_type(), data, NULL);
    gst_unref(data);
    return caps;
}

lp_webrtc *lp_webrtc_new(const lp_webrtc_config *config, char **error) {
    if (lp_gst_load(error) || !lp_certificate_make(error)) return NULL;
    lp_webrtc *peer = calloc(1, sizeof *peer);
    if (!peer) {
        lp_set_error(error, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&peer->lock, NULL);
    lp_cond_init(&peer->changed);
    peer->callback = config->callback;
    peer->candidate_callback = config->candidate_callback;
    peer->context = config->context;
    peer->pipeline = lp_gst.gst_pipeline_new(NULL);
    peer->webrtc = lp_add_element(peer, "webrtcbin", NULL);
    if (!peer->webrtc) {
        lp_set_error(error, "GStreamer's webrtcbin could not be made (gstreamer1.0-plugins-bad and gstreamer1.0-nice)");
        lp_webrtc_free(peer);
        return NULL;
    }
    lp_gst.gst_util_set_object_arg((GObject *)peer->webrtc, "bundle-policy", "max-bundle");
    if (config->stun_server) lp_gst.g_object_set(peer->webrtc, "stun-server", config->stun_server, NULL);
    if (config->turn_server) {
        gboolean added = FALSE;
        lp_gst.g_signal_emit_by_name(peer->webrtc, "add-turn-server", config->turn_server, &added);
    }
    g_signal_connect(peer->webrtc, "deep-element-added", G_CALLBACK(on_deep_element_added), peer);
    g_signal_connect(peer->webrtc, "on-negotiation-needed", G_CALLBACK(on_negotiation_needed), peer);
    g_signal_connect(peer->webrtc, "notify::ice-gathering-state", G_CALLBACK(on_gathering_state), peer);
    g_signal_connect(peer->webrtc, "on-ice-candidate", G_CALLBACK(on_ice_candidate), peer);
    g_signal_connect(peer->webrtc, "notify::ice-connection-state", G_CALLBACK(on_ice_state), peer);
    g_signal_connect(peer->webrtc, "notify::connection-state", G_CALLBACK(on_peer_state), peer);

    gboolean linked = TRUE;
    int layers = config->video_layers < 1 ? 1 : config->video_layers;
    if (layers > LP_WEBRTC_MAX_LAYERS) {
        lp_set_error(error, "at most %d simulcast layers, not %d", LP_WEBRTC_MAX_LAYERS, layers);
        lp_webrtc_free(peer);
        return NULL;
    }
    if (config->avcc && config->avcc_sizes && config->avcc_sizes[0] > 0 && layers > 1) {
        linked = lp_simulcast_add_video(peer, config->avcc, config->avcc_sizes, layers);
    } else if (config->avcc && config->avcc_sizes && config->avcc_sizes[0] > 0) {
        GstCaps *caps = lp_h264_caps(config->avcc, config->avcc_sizes[0]);
        peer->video[0] = lp_add_source(peer, "video", caps);
        peer->video_layers = 1;
        gst_unref(caps);
        GstCaps *rtp = lp_gst.gst_caps_from_string(LP_H264_RTP_CAPS);
        linked = peer->video[0] && add_branch(peer, peer->video[0], "rtph264pay", rtp, TRUE);
        gst_unref(rtp);
    }
    if (linked && config->audio_channels > 0) {
        GstCaps *caps = lp_gst.gst_caps_new_simple("audio/x-opus", "channel-mapping-family", G_TYPE_INT, 0, "channels", G_TYPE_INT,
                                                   config->audio_channels, "rate", G_TYPE_INT, 48000, NULL);
        peer->audio = lp_add_source(peer, "audio", caps);
        gst_unref(caps);
        GstCaps *rtp = lp_gst.gst_caps_from_string("application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000");
        linked = peer->audio && add_branch(peer, peer->audio, "rtpopuspay", rtp, FALSE);
        gst_unref(rtp);
    }
    if (!linked) {
        lp_set_error(error, "the WebRTC pipeline could not be built (rtph264pay, rtpopuspay: gstreamer1.0-plugins-good)");
        lp_webrtc_free(peer);
        return NULL;
    }
    /* WHIP publishes: every transceiver sends only. */
    GArray *transceivers = NULL;
    lp_gst.g_signal_emit_by_name(peer->webrtc, "get-transceivers", &transceivers);
    for (unsigned i = 0; transceivers && i < transceivers->len; i++) {
        GstWebRTCRTPTransceiver *transceiver = ((GstWebRTCRTPTransceiver **)(void *)transceivers->data)[i];
        lp_gst.g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, NULL);
        /* Resend what the peer reports lost (NACK, RFC 4588 retransmission): a lossy path then
         * costs delay rather than pictures. */
        if (lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(transceiver), "do-nack"))
            lp_gst.g_object_set(transceiver, "do-nack", TRUE, NULL);
    }
    if (transceivers) lp_gst.g_array_unref(transceivers);
    GstBus *bus = lp_gst.gst_element_get_bus(peer->pipeline);
    lp_gst.gst_bus_set_sync_handler(bus, (GstBusSyncHandler)on_bus_message, peer, NULL);
    lp_gst.gst_object_unref(bus);
    if (lp_gst.gst_element_set_state(peer->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        lp_set_error(error, "the WebRTC pipeline did not start");
        lp_webrtc_free(peer);
        return NULL;
    }
    return peer;
}

/* ------------------------------------------------------------------ offer and answer */

static gboolean wait_for(lp_webrtc *peer, gboolean *flag, int64_t deadline_us) {
    pthread_mutex_lock(&peer->lock);
    while (!*flag)
        if (!lp_cond_wait_until(&peer->changed, &peer->lock, deadline_us)) break;
    gboolean done = *flag;
    pthread_mutex_unlock(&peer->lock);
    return done;
}

char *lp_webrtc_create_offer(lp_webrtc *peer, int gather_timeout_ms, char **error) {
    if (!wait_for(peer, &peer->negotiation_needed, lp_monotonic_us() + 5 * 1000000)) {
        lp_set_error(error, "webrtcbin never asked for negotiation");
        return NULL;
    }
    GstPromise *promise = lp_gst.gst_promise_new();
    lp_gst.g_signal_emit_by_name(peer->webrtc, "create-offer", NULL, promise);
    GstWebRTCSessionDescription *offer = NULL;
    if (lp_gst.gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED)
        lp_gst.gst_structure_get(lp_gst.gst_promise_get_reply(promise), "offer", lp_gst.gst_webrtc_session_description_get_type(),
                                 &offer, NULL);
    gst_unref(promise);
    if (!offer) {
        lp_set_error(error, "webrtcbin could not create an offer");
        return NULL;
    }
    lp_certificate_set_fingerprint(offer->sdp);
    /* webrtcbin 1.22 writes no a=rid or a=simulcast itself: they are added before it sets the offer. */
    if (peer->video_layers > 1) lp_simulcast_describe(peer, offer->sdp);
    promise = lp_gst.gst_promise_new();
    lp_gst.g_signal_emit_by_name(peer->webrtc, "set-local-description", offer, promise);
    lp_gst.gst_promise_wait(promise);
    gst_unref(promise);
    if (peer->video_layers > 1) lp_simulcast_set_mid(peer, offer->sdp);
    /* Trickle ICE (0): the offer as made, with no candidate; every candidate is reported as
     * gathered, to go by PATCH. Otherwise the local description once gathering ended (or the
     * bound passed), with the candidates gathered by then. */
    GstWebRTCSessionDescription *local = offer;
    if (gather_timeout_ms > 0) {
        lp_gst.gst_webrtc_session_description_free(offer);
        wait_for(peer, &peer->gathered, lp_monotonic_us() + (int64_t)gather_timeout_ms * 1000);
        local = NULL;
        lp_gst.g_object_get(peer->webrtc, "local-description", &local, NULL);
        if (!local) {
            lp_set_error(error, "webrtcbin has no local description");
            return NULL;
        }
    }
    /* Copied into malloc's memory: the caller frees it with lp_webrtc_free_string. */
    char *sdp = lp_gst.gst_sdp_message_as_text(local->sdp);
    lp_gst.gst_webrtc_session_description_free(local);
    char *text = sdp ? strdup(sdp) : NULL;
    lp_gst.g_free(sdp);
    if (!text) lp_set_error(error, "the offer could not be written");
    return text;
}

int lp_webrtc_set_answer(lp_webrtc *peer, const char *sdp, char **error) {
    GstSDPMessage *message = NULL;
    if (lp_gst.gst_sdp_message_new_from_text(sdp, &message) != GST_SDP_OK || lp_gst.gst_sdp_message_medias_len(message) == 0) {
        if (message) lp_gst.gst_sdp_message_free(message);
        lp_set_error(error, "the answer is not SDP with media");
        return -1;
    }
    GstWebRTCSessionDescription *answer = lp_gst.gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = lp_gst.gst_promise_new();
    lp_gst.g_signal_emit_by_name(peer->webrtc, "set-remote-description", answer, promise);
    lp_gst.gst_promise_wait(promise);
    const GstStructure *reply = lp_gst.gst_promise_get_reply(promise);
    int result = 0;
    if (reply && lp_gst.gst_structure_has_field(reply, "error")) {
        GError *failure = NULL;
        lp_gst.gst_structure_get(reply, "error", lp_gst.g_error_get_type(), &failure, NULL);
        lp_set_error(error, "the answer was refused: %s", failure && failure->message ? failure->message : "?");
        if (failure) lp_gst.g_error_free(failure);
        result = -1;
    }
    gst_unref(promise);
    lp_gst.gst_webrtc_session_description_free(answer);
    if (result == 0) {
        /* The DTLS transport (one, bundled) exists now: follow its state. */
        GstWebRTCRTPTransceiver *transceiver = NULL;
        lp_gst.g_signal_emit_by_name(peer->webrtc, "get-transceiver", 0, &transceiver);
        if (transceiver) {
            GstWebRTCRTPSender *sender = NULL;
            lp_gst.g_object_get(transceiver, "sender", &sender, NULL);
            GstWebRTCDTLSTransport *transport = NULL;
            if (sender) lp_gst.g_object_get(sender, "transport", &transport, NULL);
            if (transport) {
                g_signal_connect(transport, "notify::state", G_CALLBACK(on_dtls_state), peer);
                lp_gst.g_object_unref(transport);
            }
            if (sender) lp_gst.g_object_unref(sender);
            lp_gst.gst_object_unref(transceiver);
        }
    }
    return result;
}

/* ------------------------------------------------------------------ media */

int lp_webrtc_push(lp_webrtc *peer, int layer, const uint8_t *data, size_t size, int64_t pts_us, int64_t duration_us,
                   int keyframe) {
    if (layer >= peer->video_layers) return -1;
    int is_video = layer >= 0;
    GstElement *source = is_video ? peer->video[layer] : peer->audio;
    if (!source) return -1;
    pthread_mutex_lock(&peer->lock);
    if (!peer->anchored) {
        GstClock *clock = lp_gst.gst_element_get_clock(peer->pipeline);
        GstClockTime now = clock ? lp_gst.gst_clock_get_time(clock) : 0;
        if (clock) lp_gst.gst_object_unref(clock);
        /* 50 ms ahead of now: the first frames are not late before they leave. */
        peer->anchor_running = now - lp_gst.gst_element_get_base_time(peer->pipeline) + 50 * GST_MSECOND;
        peer->anchor_us = pts_us;
        peer->anchored = TRUE;
    }
    int64_t offset_us = pts_us - peer->anchor_us;
    GstClockTime running = peer->anchor_running;
    pthread_mutex_unlock(&peer->lock);
    if (offset_us < 0 && (GstClockTime)(-offset_us * 1000) > running) return 0; /* before the anchor: nothing to send it with */
    GstBuffer *buffer = lp_gst.gst_buffer_new_memdup(data, size);
    if (!buffer) return -1;
    buffer->pts = buffer->dts = running + offset_us * 1000;
    buffer->duration = duration_us > 0 ? (GstClockTime)duration_us * 1000 : GST_CLOCK_TIME_NONE;
    if (is_video && !keyframe) buffer->mini_object.flags |= GST_BUFFER_FLAG_DELTA_UNIT;
    return lp_gst.gst_app_src_push_buffer(source, buffer) == GST_FLOW_OK ? 0 : -1;
}

/* ------------------------------------------------------------------ teardown */

void lp_webrtc_free(lp_webrtc *peer) {
    if (!peer) return;
    if (peer->pipeline) {
        GstBus *bus = lp_gst.gst_element_get_bus(peer->pipeline);
        lp_gst.gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
        lp_gst.gst_object_unref(bus);
        lp_gst.gst_element_set_state(peer->pipeline, GST_STATE_NULL);
        lp_gst.gst_object_unref(peer->pipeline);
    }
    for (int layer = 0; layer < LP_WEBRTC_MAX_LAYERS; layer++)
        if (peer->mid_extension[layer]) lp_gst.gst_object_unref(peer->mid_extension[layer]);
    pthread_mutex_destroy(&peer->lock);
    pthread_cond_destroy(&peer->changed);
    free(peer);
}
