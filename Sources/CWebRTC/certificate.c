/* The DTLS certificate of every WebRTC peer of the process: a self-signed ECDSA P-256 one made
 * with GnuTLS. webrtcbin's default is RSA-2048, and peers that offer only ECDHE-ECDSA suites
 * (aiortc) fail with "no shared cipher"; WebRTC peers check the fingerprint in the SDP, not a chain. */
#define _GNU_SOURCE 1 /* asprintf, vasprintf */
#include "peer.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *certificate_pem;
static char *certificate_fingerprint;

/* "sha-256 AB:CD:…" of the DER certificate. */
static char *fingerprint_of(const gnutls_datum_t *der) {
    unsigned char digest[32];
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, der->data, der->size, digest) < 0) return NULL;
    /* "sha-256 " and 32 times "XX" joined by ':' */
    char text[8 + 3 * sizeof digest] = "sha-256 ";
    size_t at = 8;
    for (size_t i = 0; i < sizeof digest; i++) at += (size_t)snprintf(text + at, sizeof text - at, i ? ":%02X" : "%02X", digest[i]);
    return strdup(text);
}

/* A self-signed ECDSA P-256 certificate with its key, made once per process (WebRTC peers
 * check the fingerprint in the SDP, not a chain). */
gboolean lp_certificate_make(char **error) {
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    gboolean ok = certificate_pem != NULL;
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    gnutls_datum_t key_pem = {0}, crt_pem = {0}, crt_der = {0};
    if (ok) goto done;
    unsigned char serial[8] = {0};
    int random = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    serial[0] &= 0x7F; /* a positive serial */
    time_t now = time(NULL);
    if (random < 0 || gnutls_x509_privkey_init(&key) < 0
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
        lp_set_error(error, "could not make the DTLS certificate (GnuTLS)");
        goto done;
    }
    certificate_fingerprint = fingerprint_of(&crt_der);
    if (!certificate_fingerprint
        || asprintf(&certificate_pem, "%.*s%.*s", (int)crt_pem.size, crt_pem.data, (int)key_pem.size, key_pem.data) < 0) {
        free(certificate_fingerprint);
        certificate_fingerprint = NULL;
        certificate_pem = NULL;
        lp_set_error(error, "could not make the DTLS certificate (out of memory)");
        goto done;
    }
    ok = TRUE;
done:
    gnutls_free(key_pem.data);
    gnutls_free(crt_pem.data);
    gnutls_free(crt_der.data);
    if (crt) gnutls_x509_crt_deinit(crt);
    if (key) gnutls_x509_privkey_deinit(key);
    pthread_mutex_unlock(&once);
    return ok;
}

const char *lp_certificate_pem(void) { return certificate_pem; }

void lp_certificate_set_fingerprint(GstSDPMessage *sdp) {
    for (unsigned i = 0; i < lp_gst.gst_sdp_message_medias_len(sdp); i++) {
        GstSDPMedia *media = (GstSDPMedia *)lp_gst.gst_sdp_message_get_media(sdp, i);
        for (unsigned j = 0; j < lp_gst.gst_sdp_media_attributes_len(media); j++) {
            const GstSDPAttribute *attribute = lp_gst.gst_sdp_media_get_attribute(media, j);
            if (!attribute->key || strcmp(attribute->key, "fingerprint")) continue;
            GstSDPAttribute replacement;
            lp_gst.gst_sdp_attribute_set(&replacement, "fingerprint", certificate_fingerprint);
            lp_gst.gst_sdp_media_replace_attribute(media, j, &replacement);
        }
    }
}
