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

/* A reply awaited with a deadline: the waiter and the promise each hold a reference, so a
 * reply that comes after the waiter gave up finds the record still there. */
typedef struct {
    GMutex lock;
    GCond changed;
    gboolean done;
    gint references;
} stats_wait;

static void stats_wait_release(gpointer user) {
    stats_wait *wait = user;
    if (!g_atomic_int_dec_and_test(&wait->references)) return;
    g_mutex_clear(&wait->lock);
    g_cond_clear(&wait->changed);
    g_free(wait);
}

static void stats_wait_changed(GstPromise *promise, gpointer user) {
    (void)promise;
    stats_wait *wait = user;
    g_mutex_lock(&wait->lock);
    wait->done = TRUE;
    g_cond_signal(&wait->changed);
    g_mutex_unlock(&wait->lock);
}

int lp_webrtc_get_stats(lp_webrtc *peer, lp_webrtc_stats *stats, int timeout_ms) {
    memset(stats, 0, sizeof *stats);
    stats_wait *wait = g_new0(stats_wait, 1);
    g_mutex_init(&wait->lock);
    g_cond_init(&wait->changed);
    wait->references = 2;
    GstPromise *promise = gst_promise_new_with_change_func(stats_wait_changed, wait, stats_wait_release);
    g_signal_emit_by_name(peer->webrtc, "get-stats", NULL, promise);
    /* webrtcbin answers from its own thread, normally at once; gst_promise_wait has no timeout,
     * and the caller is a send loop that every output on it shares: a stuck peer must not hold it. */
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * G_TIME_SPAN_MILLISECOND;
    g_mutex_lock(&wait->lock);
    while (!wait->done && g_cond_wait_until(&wait->changed, &wait->lock, deadline)) {}
    gboolean done = wait->done;
    g_mutex_unlock(&wait->lock);
    int result = -1;
    if (done && gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
        stats_walk walk = {stats, TRUE};
        gst_structure_foreach(gst_promise_get_reply(promise), read_stats_field, &walk);
        result = 0;
    } else if (!done) {
        gst_promise_interrupt(promise);  /* a late reply is dropped */
    }
    gst_promise_unref(promise);
    stats_wait_release(wait);
    return result;
}
