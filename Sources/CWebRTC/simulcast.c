/* Simulcast (RFC 8853) on GStreamer 1.22's webrtcbin, which has no simulcast of its own: no
 * RID in its transceivers, no a=rid or a=simulcast in its offers (1.24 has neither either).
 * What works with 1.22, measured against aiortc:
 * - one source and payloader per layer, each payloader writing two RTP header extensions,
 *   rtphdrextmid (the m-line's mid, RFC 8843) and rtphdrextstreamid (the layer's RID,
 *   RFC 8852), with ids 1 and 2;
 * - the payloaders into one rtpfunnel, the funnel into the video transceiver's sink pad: the
 *   layers are SSRCs of one RTP session, as the bundle needs, and a PLI reaches the payloader
 *   of the SSRC it names (rtpfunnel routes upstream events by SSRC);
 * - the RTP caps after the funnel name both extensions (extmap-1, extmap-2): webrtcbin writes
 *   them as a=extmap lines;
 * - the offer's video section gets `a=rid:rN send` per layer and `a=simulcast:send r0;r1...`
 *   before it is set as the local description (webrtcbin ignores both, and keeps them).
 * The layers are listed top first: RFC 8853 §5.1 orders the simulcast list by preference,
 * and the top rendition is the one a receiver that takes only one should get. */
#define _GNU_SOURCE 1 /* asprintf */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MID_EXTENSION_ID = 1, RID_EXTENSION_ID = 2 };
#define MID_URI "urn:ietf:params:rtp-hdrext:sdes:mid"
#define RID_URI "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"

static GstElement *extension(const char *factory, unsigned id) {
    GstElement *made = lp_gst.gst_element_factory_make(factory, NULL);
    if (!made) return NULL;
    /* Ours, not floating: the payloader takes a reference of its own. */
    lp_gst.gst_object_ref_sink(made);
    lp_gst.gst_rtp_header_extension_set_id(made, id);
    return made;
}

gboolean lp_simulcast_add_video(lp_webrtc *peer, const uint8_t *records, const size_t *sizes, int layers) {
    GstElement *funnel = lp_add_element(peer, "rtpfunnel", NULL);
    GstElement *filter = lp_add_element(peer, "capsfilter", NULL);
    if (!funnel || !filter) return FALSE;
    /* The fmtp the payloader would write from the top layer's SPS (profile, constraints and level
     * are bytes 1 to 3 of its avcC): receivers match H.264 by them (aiortc refuses without). */
    if (sizes[0] < 4) return FALSE;
    char text[512];
    snprintf(text, sizeof text,
             LP_H264_RTP_CAPS ",packetization-mode=(string)1,profile-level-id=(string)%02x%02x%02x,extmap-1=(string)" MID_URI
                              ",extmap-2=(string)" RID_URI,
             records[1], records[2], records[3]);
    GstCaps *rtp = lp_gst.gst_caps_from_string(text);
    if (!rtp) return FALSE;
    lp_gst.g_object_set(filter, "caps", rtp, NULL);
    gboolean linked = lp_gst.gst_element_link(funnel, filter) && lp_gst.gst_element_link(filter, peer->webrtc);
    /* rtpfunnel passes caps on with the first buffer only, and webrtcbin offers a transceiver
     * once it knows its caps: given as its codec preferences, they are known at once. */
    GstWebRTCRTPTransceiver *transceiver = NULL;
    if (linked) lp_gst.g_signal_emit_by_name(peer->webrtc, "get-transceiver", 0, &transceiver);
    if (transceiver) {
        lp_gst.g_object_set(transceiver, "codec-preferences", rtp, NULL);
        lp_gst.gst_object_unref(transceiver);
    }
    gst_unref(rtp);
    if (!linked || !transceiver) return FALSE;
    size_t offset = 0;
    for (int layer = 0; layer < layers; layer++) {
        if (sizes[layer] == 0) return FALSE;
        char name[16], rid[8];
        snprintf(name, sizeof name, "video%d", layer);
        snprintf(rid, sizeof rid, "r%d", layer);
        GstCaps *caps = lp_h264_caps(records + offset, sizes[layer]);
        offset += sizes[layer];
        GstElement *source = lp_add_source(peer, name, caps);
        gst_unref(caps);
        GstElement *payloader = lp_add_element(peer, "rtph264pay", NULL);
        GstElement *mid = extension("rtphdrextmid", MID_EXTENSION_ID);
        GstElement *stream_id = extension("rtphdrextstreamid", RID_EXTENSION_ID);
        if (!source || !payloader || !mid || !stream_id) {
            if (mid) lp_gst.gst_object_unref(mid);
            if (stream_id) lp_gst.gst_object_unref(stream_id);
            return FALSE;
        }
        lp_gst.g_object_set(stream_id, "rid", rid, NULL);
        lp_gst.g_object_set(payloader, "mtu", 1200, NULL);
        lp_configure_h264_payloader(peer, payloader);
        /* The payloader takes its own reference: ours goes, but the mid one is kept to be told the mid. */
        lp_gst.g_signal_emit_by_name(payloader, "add-extension", mid);
        lp_gst.g_signal_emit_by_name(payloader, "add-extension", stream_id);
        lp_gst.gst_object_unref(stream_id);
        peer->mid_extension[layer] = mid;
        peer->video[layer] = source;
        peer->video_layers = layer + 1;
        if (!lp_gst.gst_element_link_many(source, payloader, funnel, NULL)) return FALSE;
    }
    return TRUE;
}

static GstSDPMedia *video_section(GstSDPMessage *offer) {
    for (unsigned i = 0; i < lp_gst.gst_sdp_message_medias_len(offer); i++) {
        GstSDPMedia *media = (GstSDPMedia *)lp_gst.gst_sdp_message_get_media(offer, i);
        const char *kind = lp_gst.gst_sdp_media_get_media(media);
        if (kind && !strcmp(kind, "video")) return media;
    }
    return NULL;
}

void lp_simulcast_describe(lp_webrtc *peer, GstSDPMessage *offer) {
    GstSDPMedia *media = video_section(offer);
    if (!media) return;
    /* "send r0;r1;r2": at most LP_WEBRTC_MAX_LAYERS layers of two or three characters. */
    char list[64] = "send ";
    for (int layer = 0; layer < peer->video_layers; layer++) {
        char rid[16];
        snprintf(rid, sizeof rid, "r%d send", layer);
        lp_gst.gst_sdp_media_add_attribute(media, "rid", rid);
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%sr%d", layer ? ";" : "", layer);
    }
    lp_gst.gst_sdp_media_add_attribute(media, "simulcast", list);
}

void lp_simulcast_set_mid(lp_webrtc *peer, GstSDPMessage *offer) {
    GstSDPMedia *media = video_section(offer);
    const char *mid = media ? lp_gst.gst_sdp_media_get_attribute_val(media, "mid") : NULL;
    if (!mid) return;
    for (int layer = 0; layer < peer->video_layers; layer++)
        if (peer->mid_extension[layer]) lp_gst.g_object_set(peer->mid_extension[layer], "mid", mid, NULL);
}
