/* webrtcbin's statistics, read into what LivePush rates a link by: the peer's receiver reports
 * (loss, round trip, jitter) and our send counters. */
#include "peer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    lp_webrtc_stats *stats;
    gboolean from_video;
} stats_walk;

static gboolean holds_structure(const GValue *value) {
    return value && lp_gst.g_type_check_value_holds(value, lp_gst.gst_structure_get_type());
}

static gboolean read_stats_field(GQuark field, const GValue *value, void *user) {
    stats_walk *walk = user;
    if (!holds_structure(value)) return TRUE;
    const GstStructure *entry = lp_gst.gst_value_get_structure(value);
    int type = 0;
    if (!lp_gst.gst_structure_get(entry, "type", lp_gst.gst_webrtc_stats_type_get_type(), &type, NULL)) return TRUE;
    lp_webrtc_stats *stats = walk->stats;
    if (type == GST_WEBRTC_STATS_OUTBOUND_RTP) {
        uint64_t packets = 0, bytes = 0;
        unsigned pli = 0, fir = 0, nack = 0;
        lp_gst.gst_structure_get(entry, "packets-sent", G_TYPE_UINT64, &packets, "bytes-sent", G_TYPE_UINT64, &bytes, NULL);
        lp_gst.gst_structure_get_uint(entry, "pli-count", &pli);
        lp_gst.gst_structure_get_uint(entry, "fir-count", &fir);
        lp_gst.gst_structure_get_uint(entry, "nack-count", &nack);
        stats->packets_sent += packets;
        stats->bytes_sent += bytes;
        stats->pli_count += pli;
        stats->fir_count += fir;
        stats->nack_count += nack;
    } else if (type == GST_WEBRTC_STATS_REMOTE_INBOUND_RTP) {
        double fraction = 0, rtt = 0;
        int64_t lost = 0;
        lp_gst.gst_structure_get(entry, "fraction-lost", G_TYPE_DOUBLE, &fraction, "round-trip-time", G_TYPE_DOUBLE, &rtt,
                          "packets-lost", G_TYPE_INT64, &lost, NULL);
        /* 1.22 has no jitter here: the nested source statistics' rb-jitter is in RTP clock units. */
        unsigned jitter = 0, clock_rate = 90000, highest = 0;
        const GValue *nested = lp_gst.gst_structure_get_value(entry, "gst-rtpsource-stats");
        if (holds_structure(nested)) {
            const GstStructure *source = lp_gst.gst_value_get_structure(nested);
            lp_gst.gst_structure_get_uint(source, "rb-jitter", &jitter);
            lp_gst.gst_structure_get_uint(source, "clock-rate", &clock_rate);
            lp_gst.gst_structure_get_uint(source, "rb-exthighestseq", &highest);
        }
        stats->highest_sequence_received += highest;
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
    pthread_mutex_t lock;
    pthread_cond_t changed;
    gboolean done;
    atomic_int references;
} stats_wait;

static void stats_wait_release(void *user) {
    stats_wait *wait = user;
    if (atomic_fetch_sub(&wait->references, 1) != 1) return;
    pthread_mutex_destroy(&wait->lock);
    pthread_cond_destroy(&wait->changed);
    free(wait);
}

static void stats_wait_changed(GstPromise *promise, void *user) {
    (void)promise;
    stats_wait *wait = user;
    pthread_mutex_lock(&wait->lock);
    wait->done = TRUE;
    pthread_cond_signal(&wait->changed);
    pthread_mutex_unlock(&wait->lock);
}

int lp_webrtc_get_stats(lp_webrtc *peer, lp_webrtc_stats *stats, int timeout_ms) {
    memset(stats, 0, sizeof *stats);
    stats_wait *wait = calloc(1, sizeof *wait);
    if (!wait) return -1;
    pthread_mutex_init(&wait->lock, NULL);
    lp_cond_init(&wait->changed);
    atomic_init(&wait->references, 2);
    GstPromise *promise = lp_gst.gst_promise_new_with_change_func(stats_wait_changed, wait, stats_wait_release);
    lp_gst.g_signal_emit_by_name(peer->webrtc, "get-stats", NULL, promise);
    /* webrtcbin answers from its own thread, normally at once; gst_promise_wait has no timeout,
     * and the caller is a send loop that every output on it shares: a stuck peer must not hold it. */
    int64_t deadline = lp_monotonic_us() + (int64_t)timeout_ms * 1000;
    pthread_mutex_lock(&wait->lock);
    while (!wait->done && lp_cond_wait_until(&wait->changed, &wait->lock, deadline)) {}
    gboolean done = wait->done;
    pthread_mutex_unlock(&wait->lock);
    int result = -1;
    if (done && lp_gst.gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED) {
        stats_walk walk = {stats, TRUE};
        lp_gst.gst_structure_foreach(lp_gst.gst_promise_get_reply(promise), read_stats_field, &walk);
        result = 0;
    } else if (!done) {
        lp_gst.gst_promise_interrupt(promise);  /* a late reply is dropped */
    }
    gst_unref(promise);
    stats_wait_release(wait);
    return result;
}
