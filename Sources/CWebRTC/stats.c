/* webrtcbin's statistics, read into what LivePush rates a link by: the peer's receiver reports
 * (loss, round trip, jitter) and our send counters. */
#include "peer.h"

#include <gst/webrtc/webrtc.h>
#include <string.h>

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

