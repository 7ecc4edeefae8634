/* The DTLS certificate of every WebRTC peer of the process: a self-signed ECDSA P-256 one made
 * with GnuTLS. webrtcbin's default is RSA-2048, and peers that offer only ECDHE-ECDSA suites
 * (aiortc) fail with "no shared cipher"; WebRTC peers check the fingerprint in the SDP, not a chain. */
#include "peer.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <string.h>

static char *certificate_pem;
static char *certificate_fingerprint;

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
gboolean lp_certificate_make(char **error) {
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
        lp_set_error(error, "could not make the DTLS certificate (GnuTLS)");
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

const char *lp_certificate_pem(void) { return certificate_pem; }

void lp_certificate_set_fingerprint(GstSDPMessage *sdp) {
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
