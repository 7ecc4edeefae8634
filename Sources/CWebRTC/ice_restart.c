/* ICE restart (RFC 8445 §9, RFC 9725 §4.4) under webrtcbin 1.22, which has none of its own:
 * its create-offer ignores {ice-restart: TRUE} and writes the last offer's ufrag and pwd again
 * ("FIXME: deal with ICE restarts", gstwebrtcbin.c), and setting a description with other
 * credentials only copies them into libnice (nice_agent_set_local_credentials): libnice keeps
 * its checks, its pairs and the old remote password, so nothing is checked again. WHIP needs no
 * new offer for a restart (RFC 9725 §4.4: only the ICE lines go, by PATCH), so the shim
 * restarts libnice's stream itself, through webrtcbin's ICE agent:
 * - nice_agent_restart_stream: new local credentials, the checks and the remote candidates
 *   dropped (the selected pair's remote kept aside), the stream's local candidates and sockets
 *   kept, so RTP, RTCP and the DTLS session go on over whichever pair ICE selects next;
 * - then the endpoint's new credentials (nice_agent_set_remote_credentials) and candidates
 *   (webrtcbin's add-ice-candidate), and libnice checks and nominates again (we control).
 * The stream is the one the bundle's DTLS transport runs on (max-bundle: the only one). */
#define _GNU_SOURCE 1 /* strndup */
#include "peer.h"

#include <stdlib.h>
#include <string.h>

/* The bundle's libnice agent and stream id; FALSE when webrtcbin's ICE is not libnice. */
static gboolean find_stream(lp_webrtc *peer, NiceAgent **agent, unsigned *stream_id) {
    *agent = NULL;
    *stream_id = 0;
    GObject *ice = NULL;
    if (!lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(peer->webrtc), "ice-agent")) return FALSE;
    lp_gst.g_object_get(peer->webrtc, "ice-agent", &ice, NULL);
    if (ice && lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(ice), "agent"))
        lp_gst.g_object_get(ice, "agent", agent, NULL);
    if (ice) lp_gst.gst_object_unref(ice);

    GstWebRTCRTPTransceiver *transceiver = NULL;
    lp_gst.g_signal_emit_by_name(peer->webrtc, "get-transceiver", 0, &transceiver);
    GObject *sender = NULL, *dtls = NULL, *transport = NULL, *stream = NULL;
    if (transceiver) lp_gst.g_object_get(transceiver, "sender", &sender, NULL);
    if (sender) lp_gst.g_object_get(sender, "transport", &dtls, NULL);
    if (dtls) lp_gst.g_object_get(dtls, "transport", &transport, NULL);
    if (transport && lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(transport), "stream"))
        lp_gst.g_object_get(transport, "stream", &stream, NULL);
    if (stream && lp_gst.g_object_class_find_property(G_OBJECT_GET_CLASS(stream), "stream-id"))
        lp_gst.g_object_get(stream, "stream-id", stream_id, NULL);
    if (stream) lp_gst.gst_object_unref(stream);
    if (transport) lp_gst.gst_object_unref(transport);
    if (dtls) lp_gst.gst_object_unref(dtls);
    if (sender) lp_gst.gst_object_unref(sender);
    if (transceiver) lp_gst.gst_object_unref(transceiver);
    if (*agent && *stream_id > 0) return TRUE;
    if (*agent) lp_gst.g_object_unref(*agent);
    *agent = NULL;
    return FALSE;
}

/* The stream's local candidates (component 1: RTCP is muxed), one "candidate:..." per line. */
static char *local_candidates(NiceAgent *agent, unsigned stream_id) {
    GSList *list = lp_gst.nice_agent_get_local_candidates(agent, stream_id, 1);
    size_t size = 1, used = 0;
    char *text = calloc(1, size);
    int count = 0;
    for (GSList *item = list; item; item = item->next) {
        char *line = count < 64 && text ? lp_gst.nice_agent_generate_local_candidate_sdp(agent, item->data) : NULL;
        lp_gst.nice_candidate_free(item->data);
        if (!line) continue;
        const char *value = strncmp(line, "a=", 2) ? line : line + 2;
        size_t length = strlen(value);
        char *grown = realloc(text, size + length + 1);
        if (grown) {
            text = grown;
            memcpy(text + used, value, length);
            text[used + length] = '\n';
            used += length + 1;
            size += length + 1;
            text[used] = '\0';
            count++;
        }
        lp_gst.g_free(line);
    }
    if (list) lp_gst.g_slist_free(list);
    return text;
}

int lp_webrtc_restart_ice(lp_webrtc *peer, char **ufrag, char **pwd, char **candidates, char **error) {
    *ufrag = *pwd = *candidates = NULL;
    NiceAgent *agent;
    unsigned stream_id;
    if (!find_stream(peer, &agent, &stream_id)) {
        lp_set_error(error, "webrtcbin's ICE agent is not libnice's, or has no stream yet");
        return -1;
    }
    int result = -1;
    char *new_ufrag = NULL, *new_pwd = NULL;
    if (!lp_gst.nice_agent_restart_stream(agent, stream_id)) {
        lp_set_error(error, "libnice could not restart ICE stream %u", stream_id);
    } else if (!lp_gst.nice_agent_get_local_credentials(agent, stream_id, &new_ufrag, &new_pwd) || !new_ufrag || !new_pwd) {
        lp_set_error(error, "libnice gave no credentials after the restart");
    } else {
        *ufrag = strdup(new_ufrag);
        *pwd = strdup(new_pwd);
        *candidates = local_candidates(agent, stream_id);
        result = *ufrag && *pwd && *candidates ? 0 : -1;
        if (result) lp_set_error(error, "out of memory");
    }
    lp_gst.g_free(new_ufrag);
    lp_gst.g_free(new_pwd);
    lp_gst.g_object_unref(agent);
    return result;
}

int lp_webrtc_set_remote_ice(lp_webrtc *peer, const char *ufrag, const char *pwd, const char *candidates, char **error) {
    NiceAgent *agent;
    unsigned stream_id;
    if (!find_stream(peer, &agent, &stream_id)) {
        lp_set_error(error, "webrtcbin's ICE agent is not libnice's, or has no stream yet");
        return -1;
    }
    gboolean set = lp_gst.nice_agent_set_remote_credentials(agent, stream_id, ufrag, pwd);
    lp_gst.g_object_unref(agent);
    if (!set) {
        lp_set_error(error, "libnice refused the endpoint's new ICE credentials");
        return -1;
    }
    /* Through webrtcbin, as trickled candidates go: it parses them (and resolves .local names). */
    for (const char *line = candidates; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char *candidate = strndup(line, length);
        if (candidate && length > 0) lp_gst.g_signal_emit_by_name(peer->webrtc, "add-ice-candidate", 0u, candidate);
        free(candidate);
        line = end ? end + 1 : line + length;
    }
    return 0;
}
